#!/usr/bin/env python3
"""Plots training metrics logs: loss (and accuracy) against step.

    plot_metrics.py RUN.jsonl [RUN2.jsonl ...] -o curves.png
        [--metric lr --metric loss_scale ...] [--size 8x5]

Each log is what `dlc-run --log` and training binaries write: one JSON
object per line, a step's {"step": k, "loss": ..., "lr": ..., ...} or an
evaluation's {"eval": FILE, "step": k, "accuracy": ...}. The figure has
one panel for the loss, one for the evaluation accuracy when a log has
one, and one for each --metric; each log is a line labelled by its file
name. A log that cannot be read, a line that is not JSON, or a log without
a loss is one error line naming the file (and line), exit code 1.
"""
import argparse
import json
import math
import os
import sys


def fail(message):
    sys.exit(f"plot_metrics.py: error: {message}")


def read_log(path):
    """(steps: list of dicts, evals: list of dicts) of one log."""
    steps, evals = [], []
    try:
        with open(path) as f:
            lines = f.readlines()
    except OSError as e:
        fail(f"{path}: {e.strerror}")
    for number, line in enumerate(lines, 1):
        if not line.strip():
            continue
        try:
            entry = json.loads(line)
        except json.JSONDecodeError as e:
            fail(f"{path}:{number}: not a JSON object ({e.msg})")
        if not isinstance(entry, dict) or not isinstance(entry.get("step"), int):
            fail(f"{path}:{number}: no integer \"step\"")
        (evals if "eval" in entry else steps).append(entry)
    if not any(isinstance(s.get("loss"), (int, float)) for s in steps):
        fail(f"{path}: no step has a loss")
    return steps, evals


def series(entries, key):
    """(steps, values) of the entries with a number under `key` (JSON
    null, a non-finite value, is left out), in step order. A step logged
    twice (a run killed after its last checkpoint logs the steps its
    resumed run takes again) keeps its last value."""
    points = {e["step"]: e[key] for e in entries
              if isinstance(e.get(key), (int, float)) and
              math.isfinite(e[key])}
    steps = sorted(points)
    return steps, [points[s] for s in steps]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("logs", nargs="+", help="metrics logs (.jsonl)")
    parser.add_argument("-o", "--output", required=True, help="the PNG")
    parser.add_argument("--metric", action="append", default=[],
                        help="another metric to plot (lr, grad_norm, "
                        "loss_scale, ...)")
    parser.add_argument("--size", default="8x5",
                        help="inches, WIDTHxHEIGHT (100 pixels an inch)")
    args = parser.parse_args()
    try:
        width, height = (float(v) for v in args.size.split("x"))
    except ValueError:
        fail(f"--size {args.size}: expected WIDTHxHEIGHT, such as 8x5")
    if not (width > 0 and height > 0):
        fail(f"--size {args.size}: both must be > 0")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        fail("matplotlib is not installed (Debian: python3-matplotlib)")

    runs = [(os.path.basename(p), *read_log(p)) for p in args.logs]
    panels = [("loss", False)]
    if any(evals for _, _, evals in runs):
        panels.append(("accuracy", True))
    for metric in args.metric:
        if not any(series(steps, metric)[0] for _, steps, _ in runs):
            fail(f"--metric {metric}: no log has it")
        panels.append((metric, False))

    figure, axes = plt.subplots(len(panels), 1, sharex=True, squeeze=False,
                                figsize=(width, height), dpi=100)
    for axis, (key, from_evals) in zip(axes[:, 0], panels):
        for label, steps, evals in runs:
            x, y = series(evals if from_evals else steps, key)
            if x:
                axis.plot(x, y, marker="o" if from_evals else None,
                          label=label)
        axis.set_ylabel(key)
        axis.grid(True, alpha=0.3)
        if key == "loss_scale":
            axis.set_yscale("log", base=2)
    axes[-1, 0].set_xlabel("step")
    axes[0, 0].legend()
    figure.tight_layout()
    try:
        figure.savefig(args.output)
    except OSError as e:
        fail(f"{args.output}: {e.strerror}")
    print(f"wrote {args.output}: {', '.join(k for k, _ in panels)} of "
          f"{len(runs)} run{'s' if len(runs) > 1 else ''}")


if __name__ == "__main__":
    main()
