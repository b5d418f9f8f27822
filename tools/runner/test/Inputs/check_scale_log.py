#!/usr/bin/env python3
"""Checks a training log's loss scales against GradScaler's rule.

    check_scale_log.py LOG.jsonl GROWTH_INTERVAL

Each line holds the scale the step used ("loss_scale") and the count of
skipped steps after it ("skipped_steps"). A step whose count went up was
skipped: the next scale is half, and the run of clean steps starts over;
after GROWTH_INTERVAL clean steps in a row the next scale is double. (The
factors are GradScaler's defaults, 2 and 0.5; the log starts at step 0.)
Prints the number of steps, skips and growths, or the first step that
breaks the rule, and exits 1.
"""
import json
import sys


def main():
    path, interval = sys.argv[1], int(sys.argv[2])
    steps = [json.loads(line) for line in open(path)]
    skipped_before, clean, skips, growths = 0, 0, 0, 0
    for k, (step, after) in enumerate(zip(steps, steps[1:] + [None])):
        skipped = step["skipped_steps"] > skipped_before
        skipped_before = step["skipped_steps"]
        if skipped:
            skips, clean, factor = skips + 1, 0, 0.5
        else:
            clean += 1
            factor = 2.0 if clean == interval else 1.0
            if clean == interval:
                growths, clean = growths + 1, 0
        # The log writes float32 scales with 9 significant digits.
        want = step["loss_scale"] * factor
        if after is not None and abs(after["loss_scale"] - want) > 1e-8 * want:
            print(f"step {k + 1}: scale {after['loss_scale']}, expected "
                  f"{want} after step {k} "
                  f"({'skipped' if skipped else 'clean'})")
            return 1
    print(f"{len(steps)} steps: {skips} skipped, {growths} growths, every "
          "scale change follows GradScaler's rule")
    return 0


if __name__ == "__main__":
    sys.exit(main())
