#!/usr/bin/env python3
"""Crash consistency: a training run killed at random moments resumes to
exactly the run that was never killed.

    crash_check.py --dlc-compile BIN --dlc-run BIN --work DIR [--kills 20]
        [--option=--precision=fp16 ...]

The test MLP (tools/dlc-run/test/Inputs/mlp.onnxtxt) is compiled for
training and run for STEPS steps with a checkpoint after every step, once
straight through. Then, KILLS times, the same run starts in a fresh
checkpoint folder and gets SIGKILL after a random delay (drawn from a
seeded generator over the straight run's duration; a run that ends before
its signal does not count as a kill point and is retried), possibly while
a checkpoint is being written, and resumes (`--resume DIR`) to STEPS; a
run killed before its first checkpoint starts over. Each must end with the
same parameters, optimizer state and step as the straight run, bit for
bit, and its log from the step it resumed at must equal the straight
run's lines. --option adds a dlc-compile option (ctest also runs float16
mixed precision with a loss scale that overflows at first, so that kills
land among skipped steps). Prints one line per kill point and a summary;
exit code 1 on any difference.
"""
import argparse
import os
import random
import shutil
import signal
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.join(HERE, "..", "..")
MODEL = os.path.join(ROOT, "tools", "dlc-run", "test", "Inputs", "mlp.onnxtxt")
MAKE_DATA = os.path.join(ROOT, "tools", "dlc-run", "test", "Inputs",
                         "make_train_data.py")
STEPS = 200
SEED = 20261126


def checkpoint_arrays(folder):
    """The arrays of the folder's latest checkpoint (an .npz)."""
    with open(os.path.join(folder, "LATEST")) as f:
        name = f.read().strip()
    with np.load(os.path.join(folder, os.path.basename(name))) as c:
        return {k: c[k] for k in c.files}


def log_lines(path):
    with open(path) as f:
        return f.read().splitlines()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--dlc-compile", required=True)
    parser.add_argument("--dlc-run", required=True)
    parser.add_argument("--work", required=True)
    parser.add_argument("--kills", type=int, default=20)
    parser.add_argument("--option", action="append", default=[],
                        help="a dlc-compile option for the module")
    args = parser.parse_args()
    work = args.work
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    data, module = os.path.join(work, "data.npz"), os.path.join(work, "mlp.dlcm")
    subprocess.run([sys.executable, MAKE_DATA, "classes", data, "64"],
                   check=True)
    subprocess.run([args.dlc_compile, MODEL, "--train", "--batch-size", "4",
                    "--optimizer", "adamw", "--lr", "0.05", *args.option,
                    "-o", module],
                   check=True)

    def command(folder, log, resume=False):
        return [args.dlc_run, module, "--data", data, "--steps", str(STEPS),
                "--checkpoint-dir", folder, "--checkpoint-every", "1",
                "--log", log] + (["--resume", folder] if resume else
                                 ["--seed", "3"])

    straight_dir = os.path.join(work, "straight")
    straight_log = os.path.join(work, "straight.jsonl")
    start = time.monotonic()
    subprocess.run(command(straight_dir, straight_log), check=True,
                   stderr=subprocess.DEVNULL)
    duration = time.monotonic() - start
    want, want_log = checkpoint_arrays(straight_dir), log_lines(straight_log)

    rng = random.Random(SEED)
    kills = attempts = failures = 0
    while kills < args.kills and attempts < 5 * args.kills:
        attempts += 1
        folder = os.path.join(work, f"trial{attempts}")
        log = folder + ".jsonl"
        delay = rng.uniform(0, duration)
        run = subprocess.Popen(command(folder, log), stderr=subprocess.DEVNULL)
        time.sleep(delay)
        if run.poll() is not None:
            continue  # finished before its signal: not a kill point
        run.send_signal(signal.SIGKILL)
        run.wait()
        kills += 1
        saved = os.path.exists(os.path.join(folder, "LATEST"))
        at = int(checkpoint_arrays(folder)["__dlc__/step"]) if saved else 0
        leftovers = [n for n in os.listdir(folder) if ".tmp." in n] \
            if os.path.isdir(folder) else []
        # The log keeps the lines of the steps the killed run finished; the
        # resumed run appends from its checkpoint's step.
        if os.path.exists(log):
            with open(log) as f:
                kept = f.read().splitlines()[:at]
            with open(log, "w") as f:
                f.write("".join(line + "\n" for line in kept))
        subprocess.run(command(folder, log, resume=saved), check=True,
                       stderr=subprocess.DEVNULL)
        got = checkpoint_arrays(folder)
        problems = [k for k in want if k not in got or
                    want[k].tobytes() != got[k].tobytes()]
        if log_lines(log) != want_log:
            problems.append("the log")
        failures += bool(problems)
        print(f"kill {kills}: after {delay * 1000:.0f} ms, at step {at}"
              f"{' (no checkpoint yet: started over)' if not saved else ''}"
              f"{f', {len(leftovers)} unfinished checkpoint file left' if leftovers else ''}"
              f": {'differs in ' + ', '.join(problems) if problems else 'resumed bit-exact'}",
              flush=True)
    options = " ".join(args.option) or "float32"
    print(f"{options}: {kills} kill points in {attempts} runs of {STEPS} steps "
          f"({duration:.2f} s each), {failures} differ from the run never "
          "killed")
    if kills < args.kills:
        print(f"only {kills} runs were killed before they ended")
        return 1
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
