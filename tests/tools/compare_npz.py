"""Compares two .npz files array by array: |a - b| <= atol + rtol * |b|.

Used by the numeric tests of passes and importer rules: the evaluator's
outputs against a reference (or the IR before and after a pass, on the same
random inputs). Infinities must be equal, and NaN matches NaN (np.isclose
with equal_nan); integers and bools must be equal. Each problem is printed on a line of its own starting with
"array" and naming the array with repr() (so no array name can end a line or
pose as the verdict); the last line is the verdict, "RESULT: match" or
"RESULT: MISMATCH", which tests check as {{^RESULT: match$}}. Exit status 0
on a match, 1 otherwise.
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
    ok = True
    if sorted(actual.files) != sorted(expected.files):
        print("arrays differ: %r vs %r" % (sorted(actual.files),
                                           sorted(expected.files)))
        ok = False
    for name in expected.files:
        if name not in actual.files:
            continue
        a, b = actual[name], expected[name]
        if a.dtype != b.dtype or a.shape != b.shape:
            print("array %r: %s%s vs %s%s" % (name, a.dtype, a.shape, b.dtype,
                                              b.shape))
            ok = False
            continue
        if a.dtype.kind in "fc":
            close = np.isclose(a, b, rtol=args.rtol, atol=args.atol,
                               equal_nan=True)
        else:  # integers and bools exactly (int64 does not fit a double)
            close = a == b
        if not close.all():
            i = np.unravel_index(np.argmin(close), close.shape)
            print("array %r: element %s is %r, expected %r (%d of %d "
                  "elements differ)" % (name, tuple(map(int, i)), a[i], b[i],
                                        int((~close).sum()), close.size))
            ok = False
    print("RESULT: match" if ok else "RESULT: MISMATCH")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
