#!/usr/bin/python3
"""Pipeline parallelism on the evaluator's simulated stages against one
device (issue 16): the exported models without BatchNorm or dropout
(tests/models/models.py: an MLP, a convolutional network, GPT- and
ViT-style attention models) compiled with `dlc-compile --train [--dp D]
[--tp T] --pp P --microbatches M --emit=mlir` and without, and one training step of each
run by `dlc-run --interpret --function train_step` on the same seeded
random arguments (parameters, optimizer state and the batch; integers in
[0, 4), valid token ids and classes for every model here). The pipelined
step runs one simulated rank per stage (per replica and tensor rank): each
runs its stage's ops, and values cross stages only through dlc.pp_transfer,
so a value a stage reads without receiving it fails the run.

Every result (the loss, each parameter and its momentum) must be within
RTOL of its array's largest magnitude. The optimizer is SGD with momentum:
AdamW's square root of a random second moment would be NaN.

Tolerance. The loss and each gradient are the mean of M micro-batch means
instead of one mean over the batch: the same sums grouped M + 1 ways
instead of one, which differ by at most 2(n - 1)u sum|t| (u = 2^-24), about
1e-6 of sum|t| for the n <= 16 rows here (the replicas' mean of each
stage's gradients is one more such grouping), and SGD's step moves a
parameter by lr times that. RTOL is 1e-5; the worst margin is printed per case. A
micro-batch's gradient summed instead of averaged is off by a factor of M.

Usage: /usr/bin/python3 tests/models/pipeline_check.py --dlc-compile BIN
           --dlc-run BIN --work DIR [--models mlp,gpt]
"""

import argparse
import os
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import train_check  # noqa: E402  (prepare, BATCH, OPTIMIZERS)
from compiled_check import CheckError, run  # noqa: E402

MODELS = ["mlp", "deconv", "gpt", "encoder"]
# (data-parallel replicas, tensor ranks, stages, micro-batches): two stages
# over four micro-batches, the configuration; three stages over two
# (fewer micro-batches than stages: all forwards, then all backwards); two
# replicas of two stages over two micro-batches, and two tensor ranks of
# two stages (four simulated ranks each); the whole grid, two of each
# (eight).
PIPELINES = [(1, 1, 2, 4), (1, 1, 3, 2), (2, 1, 2, 2), (1, 2, 2, 2),
             (2, 2, 2, 2)]
RTOL = 1e-5
SEED = "7"


def step(args, base, tag, flags):
    """Compiles `base`.onnx with `flags` and runs one train_step on the
    random arguments; returns its results and the seconds it took."""
    mlir = f"{base}.{tag}.mlir"
    out = f"{base}.{tag}.npz"
    batch = train_check.BATCH[os.path.basename(base).rsplit("_", 1)[0]]
    run([args.dlc_compile, base + ".onnx", "--train", "--loss",
         "cross_entropy", *train_check.OPTIMIZERS["momentum"][0],
         "--batch-size", str(batch), *flags, "--emit=mlir", "-o", mlir],
        args.timeout)
    start = time.monotonic()
    run([args.dlc_run, "--interpret", mlir, "--function", "train_step",
         "--random-inputs", SEED, "--outputs", out], args.timeout)
    seconds = time.monotonic() - start
    with np.load(out) as f:
        return {name: f[name] for name in f.files}, seconds


def compare(one, many):
    """The worst difference relative to each array's largest magnitude, or
    a CheckError naming the array."""
    if sorted(one) != sorted(many):
        raise CheckError(f"results {sorted(many)}, expected {sorted(one)}")
    worst = 0.0
    for name, want in one.items():
        got = many[name]
        if got.shape != want.shape or got.dtype != want.dtype:
            raise CheckError(f"'{name}' is {got.dtype}{list(got.shape)}, "
                             f"expected {want.dtype}{list(want.shape)}")
        if not np.all(np.isfinite(want)):
            raise CheckError(f"one device's '{name}' is not finite")
        scale = max(float(np.abs(want).max(initial=0.0)), 1e-30)
        error = float(np.abs(got.astype(np.float64) - want).max(initial=0.0))
        if not error <= RTOL * scale:
            raise CheckError(f"'{name}' differs by {error / scale:.2e} of its "
                             f"largest magnitude (> {RTOL:g})")
        worst = max(worst, error / scale)
    return worst


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--dlc-compile", required=True)
    p.add_argument("--dlc-run", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--timeout", type=float, default=600)
    args = p.parse_args(argv)
    os.makedirs(args.work, exist_ok=True)
    passed = failed = 0
    for name in [m for m in args.models.split(",") if m]:
        if name not in MODELS:
            p.error(f"'{name}' is not one of {MODELS}")
        base = train_check.prepare(name, args.work, "float32", 1)
        try:
            one, one_seconds = step(args, base, "one", [])
        except (CheckError, subprocess.TimeoutExpired, OSError) as e:
            print(f"FAIL {name}/one device: {e}", flush=True)
            failed += 1
            continue
        for replicas, tensor, stages, micro in PIPELINES:
            tag = (f"dp{replicas}." if replicas > 1 else "") + \
                (f"tp{tensor}." if tensor > 1 else "") + \
                f"pp{stages}.mb{micro}"
            label = f"{name}/{tag}"
            try:
                many, seconds = step(
                    args, base, tag,
                    ["--dp", str(replicas), "--tp", str(tensor), "--pp",
                     str(stages), "--microbatches", str(micro)])
                worst = compare(one, many)
                ranks = replicas * tensor * stages
                print(f"PASS {label} ({worst:.1e} of the largest magnitude; "
                      f"one device {one_seconds:.2f} s, {ranks} "
                      f"simulated ranks {seconds:.2f} s)", flush=True)
                passed += 1
            except (CheckError, subprocess.TimeoutExpired, OSError) as e:
                print(f"FAIL {label}: {e}", flush=True)
                failed += 1
    print(f"{passed} passed, {failed} failed")
    return 1 if failed or not passed else 0


if __name__ == "__main__":
    sys.exit(main())
