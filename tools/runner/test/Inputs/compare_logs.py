"""Compares two metrics logs (JSON lines) of training runs.

    compare_logs.py ACTUAL EXPECTED RTOL

Prints the keys of the records, the steps they cover, and whether every
number of ACTUAL is within RTOL relative of EXPECTED's (|a - b| <= RTOL *
|b|, the same keys and steps in the same order, and the same strings: an
evaluation's data file). Used to compare the
runtime's training (dlc-run MODULE.dlcm) with the reference evaluator's
(dlc-run --interpret --train).
"""
import json
import sys


def main(actual_path, expected_path, rtol):
    rtol = float(rtol)
    actual = [json.loads(line) for line in open(actual_path)]
    expected = [json.loads(line) for line in open(expected_path)]
    print("keys: " + " ".join(expected[0].keys()))
    assert [list(r.keys()) for r in actual] == \
        [list(r.keys()) for r in expected], (actual, expected)
    steps = [r["step"] for r in actual]
    assert steps == [r["step"] for r in expected], (actual, expected)
    print("steps: %d to %d" % (steps[0], steps[-1]))
    worst = 0.0
    for a, e in zip(actual, expected):
        for key in e:
            if key == "step":
                continue
            if isinstance(e[key], str):
                assert a[key] == e[key], (a, e)
                continue
            scale = abs(e[key]) if e[key] else 1.0
            worst = max(worst, abs(a[key] - e[key]) / scale)
    print("numbers within %g relative: %s" %
          (rtol, "yes" if worst <= rtol else "no (%g)" % worst))


main(*sys.argv[1:])
