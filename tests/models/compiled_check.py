"""Compiled CPU execution against the reference evaluator, on the seven
exported models (tests/models/models.py), as issue 4 asks:

  train    `dlc-compile --train ... -o m.dlcm` then `dlc-run m.dlcm` for 10
           steps of SGD (lr 0.1) and of AdamW (lr 1e-3, weight decay 0.01),
           against `dlc-run --interpret --train` on the same model, data and
           options: every step's loss within RTOL relative.
           cnn_bn and deconv also train with SGD on the direct convolution
           engine (--conv-engine direct).
  forward  `dlc-compile` without --train (inference semantics) then
           `dlc-run m.dlcm --inputs --outputs`, against the evaluator on the
           same model imported for inference: every output element within
           RTOL of the largest magnitude of its array.

RTOL is 1e-4: the evaluator computes elementwise math in float64 and
rounds to float32 per op and accumulates reductions and products in
float64; compiled kernels compute in float32 (BLAS and oneDNN accumulate in
float32 with their own summation orders), so each step differs by float32
rounding (~1e-7 relative per op), which ten optimizer steps amplify to
~1e-5 at most on the well-conditioned runs.

Which models run in which type (MODEL_DTYPE): resnet18 and mobilenet_v2
train in float64. In float32 their 10-step trajectories are chaotic (large
steps through train-mode BatchNorm over few values; tests/models/
train_check.py measured PyTorch float32 itself 17-100% from float64), so
float32 rounding differences between any two implementations grow past any
useful tolerance; in float64 the same runs are reproducible and the
comparison checks the compiled plan rather than the noise.

Prints PASS/FAIL per check and `N passed, M failed`; exits non-zero if any
check failed.

Usage: /usr/bin/python3 tests/models/compiled_check.py
           --dlc-compile build/bin/dlc-compile --dlc-run build/bin/dlc-run
           --dlc-translate build/bin/dlc-translate --work /tmp/compiled
           [--models mlp,gpt] [--threads 2]
"""

import argparse
import json
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import models  # noqa: E402
import train_check  # noqa: E402  (prepare, BATCH, OPTIMIZERS)

STEPS = 10
RTOL = 1e-4
MODEL_DTYPE = {"mlp": "float32", "cnn_bn": "float32", "gpt": "float32",
               "encoder": "float32", "deconv": "float32",
               "resnet18": "float64",
               "mobilenet_v2": "float64"}
CHECKED_OPTIMIZERS = ["sgd", "adamw"]
# The float32 convolution models also train with `--conv-engine direct`
# (dlc.plan.conv's engine slot): the CPU's direct loops instead of oneDNN,
# against the same interpreter run and RTOL.
DIRECT_CONV_MODELS = {"cnn_bn", "deconv"}
# mobilenet_v2 with SGD is chaotic at lr 0.1 even in float64 (train_check.py:
# PyTorch float64 from weights perturbed by 1e-15 is 16% off by step 9), and
# still at lr 0.01 and 0.001: compiled and evaluator agree to ~1e-12 for a
# few steps, then float64 rounding decides on which side of a ReLU6 kink
# some pre-activations of train-mode BatchNorm over 16 values fall, and the
# gap grows ~100x a step (to 5e-2 at lr 0.01, 1e-3 at lr 0.001 by step 9,
# depending on the kernels' summation order). At lr 1e-4 no kink is crossed
# and ten steps agree to 3.5e-12, with 1 thread or 2.
LEARNING_RATE = {("mobilenet_v2", "sgd"): "0.0001"}


class CheckError(Exception):
    pass


def run(cmd, timeout):
    proc = subprocess.run(cmd, capture_output=True, text=True,
                          timeout=timeout)
    if proc.returncode != 0:
        text = (proc.stderr or proc.stdout).strip().splitlines()
        raise CheckError(f"{os.path.basename(cmd[0])} exited with "
                         f"{proc.returncode}: {' | '.join(text[-3:])}")
    return proc


def losses(path):
    with open(path) as f:
        return [json.loads(line)["loss"] for line in f if line.strip()]


def check_train(name, optimizer, base, args, compile_flags=()):
    batch = str(train_check.BATCH[name])
    flags = list(train_check.OPTIMIZERS[optimizer][0])
    if (name, optimizer) in LEARNING_RATE:
        flags[flags.index("--lr") + 1] = LEARNING_RATE[(name, optimizer)]
    options = ["--loss", "cross_entropy", *flags, "--batch-size", batch]
    variant = "".join(compile_flags).replace("-", "")
    interp_log = f"{base}.{optimizer}.interpreter.jsonl"
    compiled_log = f"{base}.{optimizer}{variant}.compiled.jsonl"
    module = f"{base}.{optimizer}{variant}.dlcm"
    for path in (interp_log, compiled_log):
        if os.path.exists(path):
            os.remove(path)
    data = ["--data", base + ".data.npz", "--steps", str(STEPS),
            "--no-shuffle"]
    run([args.dlc_run, "--interpret", "--train", base + ".onnx", *options,
         *data, "--log", interp_log], args.timeout)
    start = time.monotonic()
    run([args.dlc_compile, base + ".onnx", "--train", *options,
         *compile_flags, "-o", module], args.timeout)
    compile_seconds = time.monotonic() - start
    start = time.monotonic()
    run([args.dlc_run, module, *data, "--log", compiled_log, "--threads",
         str(args.threads)], args.timeout)
    run_seconds = time.monotonic() - start
    want, got = losses(interp_log), losses(compiled_log)
    if len(want) != STEPS or len(got) != STEPS:
        raise CheckError(f"logs have {len(want)} and {len(got)} steps, "
                         f"expected {STEPS}")
    worst = max(abs(g - w) / max(abs(w), 1e-30) for g, w in zip(got, want))
    if not worst <= RTOL:
        raise CheckError(f"losses differ by {worst:.2e} relative (> {RTOL:g})"
                         f": compiled {got}, interpreter {want}")
    return (f"max rel {worst:.1e}; compile {compile_seconds:.1f} s, "
            f"{STEPS} steps {run_seconds:.1f} s")


def check_forward(name, base, dtype, args):
    batch = train_check.BATCH[name]
    spec = models.MODELS[name]
    with np.load(base + ".data.npz") as f:
        inputs = {n: f[n][:batch] for n in spec.input_names}
    np.savez(base + ".forward.in.npz", **inputs)
    imported = base + ".inference.mlir"
    module = base + ".inference.dlcm"
    run([args.dlc_translate, "--import-onnx", "--mode=inference",
         "--batch-size", str(batch), base + ".onnx", "-o", imported],
        args.timeout)
    run([args.dlc_run, "--interpret", imported, "--inputs",
         base + ".forward.in.npz", "--outputs", base + ".forward.want.npz"],
        args.timeout)
    run([args.dlc_compile, base + ".onnx", "--batch-size", str(batch), "-o",
         module], args.timeout)
    run([args.dlc_run, module, "--inputs", base + ".forward.in.npz",
         "--outputs", base + ".forward.got.npz", "--threads",
         str(args.threads)], args.timeout)
    with np.load(base + ".forward.want.npz") as w, \
            np.load(base + ".forward.got.npz") as g:
        if sorted(w.files) != sorted(g.files):
            raise CheckError(f"outputs {sorted(g.files)}, expected "
                             f"{sorted(w.files)}")
        worst = 0.0
        for n in w.files:
            want, got = w[n].astype(np.float64), g[n].astype(np.float64)
            if want.shape != got.shape:
                raise CheckError(f"output '{n}' has shape {got.shape}, "
                                 f"expected {want.shape}")
            scale = max(np.abs(want).max(), 1e-30)
            worst = max(worst, float(np.abs(got - want).max() / scale))
    if not worst <= RTOL:
        raise CheckError(f"outputs differ by {worst:.2e} of their largest "
                         f"magnitude (> {RTOL:g})")
    return f"max rel {worst:.1e}"


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--dlc-compile", required=True)
    p.add_argument("--dlc-run", required=True)
    p.add_argument("--dlc-translate", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--models", default=",".join(models.MODELS))
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--timeout", type=float, default=900)
    args = p.parse_args(argv)
    os.makedirs(args.work, exist_ok=True)
    passed = failed = 0
    for name in [m for m in args.models.split(",") if m]:
        if name not in models.MODELS:
            p.error(f"unknown model '{name}'")
        dtype = MODEL_DTYPE[name]
        base = train_check.prepare(name, args.work, dtype, STEPS)
        checks = [(f"train_{o}", lambda o=o: check_train(name, o, base, args))
                  for o in CHECKED_OPTIMIZERS]
        if name in DIRECT_CONV_MODELS:
            checks.append(("train_sgd_direct_conv", lambda: check_train(
                name, "sgd", base, args, ("--conv-engine", "direct"))))
        checks.append(("forward",
                       lambda: check_forward(name, base, dtype, args)))
        for label, fn in checks:
            try:
                detail = fn()
                print(f"PASS {name}/{label} ({dtype}; {detail})", flush=True)
                passed += 1
            except (CheckError, subprocess.TimeoutExpired, OSError) as e:
                print(f"FAIL {name}/{label} ({dtype}): {e}", flush=True)
                failed += 1
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
