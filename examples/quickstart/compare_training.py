"""Prints dlc's training losses beside PyTorch's and fails if they differ.

    compare_training.py METRICS.jsonl EXPECTED_LOSSES.json
"""
import json
import sys

with open(sys.argv[1]) as f:
    actual = [json.loads(line)["loss"] for line in f]
with open(sys.argv[2]) as f:
    expected = json.load(f)
print("step  dlc loss    PyTorch loss")
worst = 0.0
for step, (a, e) in enumerate(zip(actual, expected)):
    print(f"{step:4d}  {a:.7f}  {e:.7f}")
    worst = max(worst, abs(a - e) / abs(e))
# Same weights, data and update rule in float32: the trajectories agree to
# float32 rounding, amplified a little over 20 steps.
ok = len(actual) == len(expected) and worst <= 1e-4
print("max relative difference: %.3g -> %s" % (worst, "OK" if ok else "MISMATCH"))
sys.exit(0 if ok else 1)
