"""Data and tensor parallelism on CPU ranks against one process (issues 15
and 16): the exported models without BatchNorm (tests/models/models.py)
compiled with `dlc-compile --train --dp N` and trained by `mpirun -np N
dlc-run` for 10
steps, against the same model compiled without --dp and trained by one
process, at the same global batch, data, seed (shuffled) and options:

  losses   every step's loss (averaged over the ranks, logged by rank 0)
           within RTOL relative of the one-process loss;
  state    every global at the end (--save-state, written by rank 0:
           parameters and optimizer state) within RTOL of its array's
           largest magnitude.

ZeRO-1 (`--zero 1`, N = 2 and 4, and `--dp 2 --pp 2` and `--dp 2 --tp 2`
with each stage's or tensor rank's state sharded over its replicas):
--save-state gathers the ranks' shards into the whole state, compared
within the same RTOL: sharding moves no arithmetic.

Pipeline parallelism (`--pp 2 --microbatches 4` on 2 ranks, `--dp 2 --pp 2
--microbatches 2` on 4; issue 16): the gradients are the means of the
micro-batches' (sums of B/M rows instead of B, the same kind of summation
order difference), under the same RTOL; --save-state gathers each stage's
globals from its ranks.

Tensor parallelism (`--tp 2` on 2 ranks, `--dp 2 --tp 2` on 4; issue 16):
the split matmul pairs' outputs are the sums of 2 partial sums instead of
one sum, the same kind of float32 summation-order difference, under the
same RTOL; --save-state gathers the split globals' slices.

N is 2 and 4, with SGD (lr 0.1) and AdamW (lr 1e-3, weight decay 0.01),
in one bucket (the default 25 MiB holds every gradient of these models);
N = 2 again with buckets of at most SMALL_BUCKET_MB, so that every
gradient (and with --sync-batchnorm every statistic's gradient) is a
collective of its own in flight beside backward, and the optimizer reads
them in another order than backward issued them.

Tolerance. Each sample's arithmetic is the same either way; what changes
is how the batch is summed into each gradient: one float32 sum over B
samples, or N sums over B/N (in oneDNN's and the kernels' own blocking),
then their mean over the ranks (MPI sums in rank order, float32). Two
groupings of an n-term float32 sum differ by at most 2(n - 1)u sum|t|
(u = 2^-24), about 1e-6 of sum|t| for the n <= 16 rows here, so a step's
gradients differ by ~1e-6 relative. Ten steps carry that into the
parameters and losses: SGD at lr 0.1 moves them by ~1e-7 a step; AdamW
divides each gradient by its running RMS, which amplifies a relative
gradient error in a small gradient more than SGD does. RTOL is 1e-4,
as compiled_check.py's compiled-vs-evaluator bound, which covers the same
kind of float32 summation-order difference over ten steps; the margin is
reported per case. A rank that trains on the wrong rows, or gradients
summed instead of averaged, is off by far more (1e-2 and up).

One exception, AdamW's noise-driven elements: a gradient that is zero in
exact arithmetic (the attention keys' bias: softmax ignores a shift shared
by every key, gpt's middle third of qkv.bias and encoder's key.bias) is
computed as rounding noise (~1e-11), which Adam divides by its own RMS
into a step of up to ~lr either way, so its sign, and the parameter, follow
the summation order. Such elements (RMS of the one-process run's
exp_avg_sq under NOISE_RMS, 1e-8, five orders below the smallest real
gradients here) are held to the bound of ten such steps, 2 lr STEPS
absolute, and counted in the report. The same holds for BatchNorm's
running means under AdamW: a convolution's bias before a BatchNorm is such
a parameter (normalization removes any per-channel shift), and the running
mean carries the bias, so it may differ by as much.

Models. cnn_bn normalizes with train-mode BatchNorm, whose batch
statistics are each rank's own by default (as PyTorch DDP): N ranks then
compute something else than one process, which the check confirms (the
losses differ by more than 1e-3). With --sync-batchnorm the statistics are
averaged over the ranks and N ranks are one process again, within RTOL.
resnet18 and mobilenet_v2 are left out: their float32 trajectories are
chaotic (compiled_check.py). gpt's cross-entropy ignores each sequence's
last position, the same count in every rank's share, so the mean of the
ranks' means is the global mean.

Prints PASS/FAIL per case and `N passed, M failed`; exits non-zero if any
failed.

Usage: /usr/bin/python3 tests/models/data_parallel_check.py
           --dlc-compile build/bin/dlc-compile --dlc-run build/bin/dlc-run
           --mpirun /usr/bin/mpirun --work /tmp/dp [--models mlp,gpt]
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
from compiled_check import CheckError, losses, run  # noqa: E402

STEPS = 10
RTOL = 1e-4
MODELS = ["mlp", "deconv", "gpt", "encoder", "cnn_bn"]
# Models with BatchNorm: their N ranks synchronize the statistics.
BATCHNORM = {"cnn_bn"}
# Models also trained with tensor parallelism (--tp 2, and --dp 2 --tp 2):
# gpt's MLP blocks, its and encoder's self-attention (by heads, the fused
# QKV weight in 3 blocks, encoder's per-head bias sliced by them) and
# mlp's first two layers are split pairs; gpt's token embedding is split
# by its rows and the class heads of gpt, encoder and cnn_bn by their
# classes, the cross-entropy reducing over the ranks (vocabulary-
# parallel). Encoder's attention pooling and cnn_bn's convolutions stay
# replicated on both tensor ranks, which must still be one process.
TENSOR_PARALLEL = {"mlp", "gpt", "encoder", "cnn_bn"}
# Models also trained with pipeline parallelism (--pp 2 --microbatches 4 on
# 2 ranks, --dp 2 --pp 2 --microbatches 2 on 4, with --zero 1 too, and
# --tp 2 --pp 2 --microbatches 2 on 4 where tensor parallelism applies
# too): all but cnn_bn, whose BatchNorm statistics are step state, which
# pipelined steps do not return yet.
PIPELINE = {"mlp", "deconv", "gpt", "encoder"}
# Per-rank statistics change the losses by at least this (relative).
PER_RANK_DIFFERENCE = 1e-3
RANKS = [2, 4]
SMALL_BUCKET_MB = "0.001"
CHECKED_OPTIMIZERS = ["sgd", "adamw"]
SEED = "5"
# AdamW's noise-driven elements (above): gradient RMS under NOISE_RMS.
NOISE_RMS = 1e-8
ADAMW_LR = 1e-3

# Open MPI as root, more ranks than the build machine's 2 cores, and no
# cross-memory-attach single copy (refused inside containers).
MPI_ENVIRONMENT = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1", "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
    "OMPI_MCA_btl_vader_single_copy_mechanism": "none"}


def train(args, base, optimizer, ranks, tag, flags=()):
    """Compiles `base`.onnx with the dlc-compile `flags` that partition it
    for `ranks` processes (none: one), trains it for STEPS steps and
    returns (losses, state, seconds): every global, ZeRO-1's shards and the
    stages' and tensor ranks' parts gathered."""
    options = ["--loss", "cross_entropy", *train_check.OPTIMIZERS[optimizer][0],
               "--batch-size", str(train_check.BATCH[os.path.basename(
                   base).rsplit("_", 1)[0]]), *flags]
    module = f"{base}.{optimizer}.{tag}.dlcm"
    log = f"{base}.{optimizer}.{tag}.jsonl"
    state = f"{base}.{optimizer}.{tag}.state.npz"
    for path in (log, state):
        if os.path.exists(path):
            os.remove(path)
    run([args.dlc_compile, base + ".onnx", "--train", *options, "-o", module],
        args.timeout)
    command = [args.dlc_run, module, "--data", base + ".data.npz", "--steps",
               str(STEPS), "--seed", SEED, "--log", log, "--threads", "1"]
    command += ["--save-state", state]
    if ranks > 1:
        command = [args.mpirun, "-np", str(ranks), *command]
    start = time.monotonic()
    run(command, args.timeout)
    seconds = time.monotonic() - start
    with np.load(state) as f:
        arrays = {name: f[name] for name in f.files}
    return losses(log), arrays, seconds


def noise_bound(name, state, optimizer):
    """Per element of global `name`, the extra absolute difference AdamW's
    noise-driven elements may show (0 elsewhere): ten steps of up to lr in
    a parameter, the noise itself in its moments (exp_avg below NOISE_RMS,
    exp_avg_sq below its square)."""
    if optimizer != "adamw":
        return 0.0
    parameter, allowed = name, 2 * ADAMW_LR * STEPS
    if name.endswith("running_mean"):
        return allowed
    for suffix, bound in ((".exp_avg", NOISE_RMS),
                          (".exp_avg_sq", NOISE_RMS ** 2)):
        if name.startswith("optimizer.") and name.endswith(suffix):
            parameter = name[len("optimizer."):-len(suffix)]
            allowed = bound
    second_moment = state.get(f"optimizer.{parameter}.exp_avg_sq")
    if second_moment is None:
        return 0.0
    return np.where(np.sqrt(second_moment) < NOISE_RMS, allowed, 0.0)


def compare(one, many, optimizer):
    """The worst relative difference of the losses and of the state, and
    the count of AdamW's noise-driven elements, or a CheckError naming what
    differs."""
    (want_losses, want_state, _), (got_losses, got_state, _) = one, many
    if len(want_losses) != STEPS or len(got_losses) != STEPS:
        raise CheckError(f"logs have {len(want_losses)} and "
                         f"{len(got_losses)} steps, expected {STEPS}")
    loss_error = max(abs(g - w) / max(abs(w), 1e-30)
                     for g, w in zip(got_losses, want_losses))
    if not loss_error <= RTOL:
        raise CheckError(f"losses differ by {loss_error:.2e} relative "
                         f"(> {RTOL:g}): {got_losses} vs {want_losses}")
    if sorted(got_state) != sorted(want_state):
        raise CheckError(f"state holds {sorted(got_state)}, expected "
                         f"{sorted(want_state)}")
    state_error, noisy = 0.0, 0
    for name, want in want_state.items():
        got = got_state[name]
        if got.shape != want.shape or got.dtype != want.dtype:
            raise CheckError(f"'{name}' is {got.dtype}{list(got.shape)}, "
                             f"expected {want.dtype}{list(want.shape)}")
        if want.dtype.kind != "f":
            if not np.array_equal(got, want):
                raise CheckError(f"'{name}' differs: {got} vs {want}")
            continue
        scale = max(float(np.abs(want).max(initial=0.0)), 1e-30)
        noise = noise_bound(name, one[1], optimizer)
        noisy += int(np.count_nonzero(np.broadcast_to(noise, want.shape)))
        difference = np.abs(got.astype(np.float64) - want)
        if np.any(difference > RTOL * scale + noise):
            raise CheckError(f"'{name}' differs by "
                             f"{difference.max() / scale:.2e} of its largest "
                             f"magnitude (> {RTOL:g})")
        error = float(np.where(noise > 0, 0.0, difference).max(initial=0.0))
        state_error = max(state_error, error / scale)
    return loss_error, state_error, noisy


def main(argv=None):
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--dlc-compile", required=True)
    p.add_argument("--dlc-run", required=True)
    p.add_argument("--mpirun", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--timeout", type=float, default=600)
    args = p.parse_args(argv)
    os.environ.update(MPI_ENVIRONMENT)
    os.makedirs(args.work, exist_ok=True)
    passed = failed = 0
    for name in [m for m in args.models.split(",") if m]:
        if name not in MODELS:
            p.error(f"'{name}' is not one of {MODELS}")
        base = train_check.prepare(name, args.work, "float32", STEPS)
        for optimizer in CHECKED_OPTIMIZERS:
            try:
                one = train(args, base, optimizer, 1, "one")
            except (CheckError, subprocess.TimeoutExpired, OSError) as e:
                print(f"FAIL {name}/{optimizer}/one process: {e}", flush=True)
                failed += 1
                continue
            sync = ["--sync-batchnorm"] if name in BATCHNORM else []
            variants = [(ranks, f"dp{ranks}", ["--dp", str(ranks), *sync])
                        for ranks in RANKS]
            variants.append((2, "dp2.small-buckets",
                             ["--dp", "2", *sync, "--dp-bucket-mb",
                              SMALL_BUCKET_MB]))
            variants += [(ranks, f"dp{ranks}.zero1",
                          ["--dp", str(ranks), *sync, "--zero", "1"])
                         for ranks in RANKS]
            if name in TENSOR_PARALLEL:
                variants += [(2, "tp2", ["--tp", "2"]),
                             (4, "dp2.tp2", ["--dp", "2", *sync, "--tp", "2"]),
                             (4, "dp2.tp2.zero1", ["--dp", "2", *sync, "--tp",
                                                   "2", "--zero", "1"])]
            if name in PIPELINE:
                variants += [(2, "pp2.mb4",
                              ["--pp", "2", "--microbatches", "4"]),
                             (4, "dp2.pp2.mb2",
                              ["--dp", "2", "--pp", "2", "--microbatches",
                               "2"]),
                             (4, "dp2.pp2.mb2.zero1",
                              ["--dp", "2", "--pp", "2", "--microbatches",
                               "2", "--zero", "1"])]
            if name in TENSOR_PARALLEL and name in PIPELINE:
                variants.append((4, "tp2.pp2.mb2",
                                 ["--tp", "2", "--pp", "2", "--microbatches",
                                  "2"]))
            for ranks, tag, flags in variants:
                label = f"{name}/{optimizer}/{tag}"
                # Each replica's rows, cut into its micro-batches.
                rows = (int(flags[flags.index("--dp") + 1])
                        if "--dp" in flags else
                        ranks if "--pp" not in flags else 1)
                if "--microbatches" in flags:
                    rows *= int(flags[flags.index("--microbatches") + 1])
                if train_check.BATCH[name] % rows:
                    print(f"SKIP {label}: batch {train_check.BATCH[name]} "
                          f"is not divisible by {rows}", flush=True)
                    continue
                try:
                    many = train(args, base, optimizer, ranks, tag, flags)
                    loss_error, state_error, noisy = compare(
                        one, many, optimizer)
                    noted = (f", {noisy} noise-driven elements"
                             if noisy else "")
                    print(f"PASS {label} (losses {loss_error:.1e}, state "
                          f"{state_error:.1e} relative{noted}; one process "
                          f"{one[2]:.2f} s, {ranks} ranks {many[2]:.2f} s)",
                          flush=True)
                    passed += 1
                except (CheckError, subprocess.TimeoutExpired, OSError) as e:
                    print(f"FAIL {label}: {e}", flush=True)
                    failed += 1
                if name not in BATCHNORM or tag != f"dp{ranks}":
                    continue
                label += "/per-rank statistics"
                try:
                    alone = train(args, base, optimizer, ranks,
                                  f"dp{ranks}.alone", ["--dp", str(ranks)])
                    gap = max(abs(g - w) / abs(w)
                              for g, w in zip(alone[0], one[0]))
                    if not gap > PER_RANK_DIFFERENCE:
                        raise CheckError(f"losses within {gap:.1e} of one "
                                         f"process's without "
                                         f"--sync-batchnorm")
                    print(f"PASS {label} (losses differ by {gap:.1e})",
                          flush=True)
                    passed += 1
                except (CheckError, subprocess.TimeoutExpired, OSError) as e:
                    print(f"FAIL {label}: {e}", flush=True)
                    failed += 1
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
