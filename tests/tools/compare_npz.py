"""Compares two .npz files array by array: |a - b| <= atol + rtol * |b|.

Used by the numeric tests of passes: the evaluator runs the IR before and
after a pass on the same random inputs and the outputs must agree.
Exit status 0 when every array matches, 1 otherwise (with the worst element).
"""
import argparse
import sys

import numpy as np


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("actual")
    parser.add_argument("expected")
    parser.add_argument("--rtol", type=float, default=0.0)
    parser.add_argument("--atol", type=float, default=0.0)
    args = parser.parse_args()
    actual, expected = np.load(args.actual), np.load(args.expected)
    if sorted(actual.files) != sorted(expected.files):
        print("arrays differ: %s vs %s" % (sorted(actual.files),
                                           sorted(expected.files)))
        return 1
    ok = True
    for name in expected.files:
        a, b = actual[name], expected[name]
        if a.dtype != b.dtype or a.shape != b.shape:
            print("%s: %s%s vs %s%s" % (name, a.dtype, a.shape, b.dtype, b.shape))
            ok = False
            continue
        close = np.isclose(a, b, rtol=args.rtol, atol=args.atol, equal_nan=True)
        if not close.all():
            i = np.unravel_index(np.argmin(close), close.shape)
            print("%s: element %s is %r, expected %r" % (name, i, a[i], b[i]))
            ok = False
    print("match" if ok else "MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
