"""The pipeline's measured idle time per rank against the 1F1B bound
(p - 1) / (m + p - 1), on CPU ranks (issue 16).

An MLP of LAYERS identical Linear+ReLU layers of WIDTH features between a
narrow input layer and a narrow head (PyTorch, exported to ONNX for
training) is compiled with `dlc-compile --pp 2
--microbatches M` at a batch of ROWS rows per micro-batch (so each stage's
work per micro-batch is the same for every M), and trained for STEPS steps
by `mpirun -np 2 dlc-run --threads 1 --rank-times`: each rank on a core of
its own (the build machine has 2). Every step's log line carries each
rank's busy and idle milliseconds of the call (idle: blocked waiting for a
transfer or a collective, runtime/cpu/Executor.cpp). The calls end
together (the runner's collective of the logged loss waits for the last),
so a step lasts its longest call, and a rank's idle fraction is 1 - its
busy time over that, summed over the steps after the first WARMUP. Under 1F1B with p stages of equal cost and free transfers, every
stage idles (p - 1) of the m + p - 1 slots of a step: forward and backward
of the other stages' first and last micro-batches. What the bound leaves
out shows up as the difference: the stages' imbalance (the last stage
also computes the head and the loss), the transfers' latency, and the
optimizer's update, which no stage waits through.

Every configuration's losses must be one process's within 1e-4 (the
tolerance tests/models/data_parallel_check.py derives), or the script
fails. Prints one line per configuration and, with --json, writes them.

  /usr/bin/python3 bench/pipeline_idle.py --build build --work /tmp/pp-idle
"""

import argparse
import json
import os
import sys

import numpy as np

from mpi_jobs import run

WIDTH = 512
LAYERS = 8
# A narrow input layer before the LAYERS and a narrow head after them keep
# the two stages' work equal: each gets LAYERS / 2 of the wide layers, the
# first stage also the input layer (whose input needs no gradient), the
# last the head and the loss.
INPUTS = 64
ROWS = 32
MICROBATCHES = [2, 4, 8]
STAGES = 2
STEPS = 53
WARMUP = 3
# Open MPI's shared-memory transport sends up to 4 KiB eagerly; a larger
# message (an activation here: ROWS x WIDTH float32, 64 KiB) takes a
# rendezvous, a handshake that moves only when both ranks call MPI (the
# communication thread's tests, every 50 us while transfers are in
# flight). Each configuration also runs with eager sends up to 128 KiB,
# to show what those round trips cost.
EAGER = {"OMPI_MCA_btl_vader_eager_limit": "131072",
         "OMPI_MCA_btl_vader_max_send_size": "131072"}


def export(work):
    import torch
    torch.manual_seed(0)
    layers = [torch.nn.Linear(INPUTS, WIDTH), torch.nn.ReLU()]
    for _ in range(LAYERS):
        layers += [torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(WIDTH, 10))
    path = os.path.join(work, "mlp.onnx")
    torch.onnx.export(model, torch.zeros(ROWS, INPUTS), path,
                      input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"},
                                    "logits": {0: "batch"}},
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, opset_version=17)
    rng = np.random.default_rng(0)
    rows = ROWS * max(MICROBATCHES) * STEPS
    data = os.path.join(work, "data.npz")
    np.savez(data, input=rng.standard_normal((rows, INPUTS), dtype=np.float32),
             labels=rng.integers(0, 10, rows, dtype=np.int64))
    return path, data


def one_f_one_b(stage_ms, microbatches, backward_ratio=2.0):
    """Each stage's idle fraction under 1F1B when stage s takes stage_ms[s]
    per micro-batch (forward then backward, backward `backward_ratio` times
    forward) and transfers are free: the event simulation of the schedule
    dlc-pipeline-schedule compiles (warm-up, one forward one backward,
    cool-down), with each task waiting for its input from the neighbour."""
    p, m = len(stage_ms), microbatches
    fwd = [t / (1 + backward_ratio) for t in stage_ms]
    bwd = [t - f for t, f in zip(stage_ms, fwd)]
    orders = []
    for s in range(p):
        warm = min(p - s - 1, m)
        order = [("F", i) for i in range(warm)]
        f, b = warm, 0
        while b < m:
            if f < m:
                order.append(("F", f))
                f += 1
            order.append(("B", b))
            b += 1
        orders.append(order)
    end = {}
    clock = [0.0] * p
    position = [0] * p
    while any(position[s] < len(orders[s]) for s in range(p)):
        for s in range(p):
            while position[s] < len(orders[s]):
                kind, i = orders[s][position[s]]
                need = (("F", s - 1, i) if kind == "F" and s > 0 else
                        ("B", s + 1, i) if kind == "B" and s + 1 < p else
                        ("F", s, i) if kind == "B" else None)
                if need is not None and need not in end:
                    break
                start = max(clock[s], end[need] if need else 0.0)
                clock[s] = start + (fwd[s] if kind == "F" else bwd[s])
                end[(kind, s, i)] = clock[s]
                position[s] += 1
    step = max(clock)
    return [1 - m * t / step for t in stage_ms]


def train(args, model, data, microbatches, stages, eager=False):
    tag = (f"pp{stages}_mb{microbatches}" if stages > 1 else
           f"one_mb{microbatches}")
    module = os.path.join(args.work, tag + ".dlcm")
    flags = ["--train", "--batch-size", str(ROWS * microbatches),
             "--optimizer", "sgd", "--lr", "0.01"]
    if stages > 1:
        flags += ["--pp", str(stages), "--microbatches", str(microbatches)]
    run([os.path.join(args.build, "bin", "dlc-compile"), model, *flags, "-o",
         module])
    log = os.path.join(args.work, tag + ".jsonl")
    if os.path.exists(log):
        os.remove(log)
    cmd = [os.path.join(args.build, "bin", "dlc-run"), module, "--data", data,
           "--steps", str(STEPS), "--threads", "1", "--log", log]
    if stages > 1:
        cmd = [args.mpirun, "-np", str(stages), *cmd, "--rank-times"]
    run(cmd, EAGER if eager else None)
    with open(log) as f:
        lines = [json.loads(line) for line in f]
    if eager:
        tag += "_eager"
    result = {"config": tag, "microbatches": microbatches, "stages": stages,
              "losses": [l["loss"] for l in lines]}
    if stages > 1:
        timed = lines[WARMUP:]
        busy = np.sum([l["busy_ms"] for l in timed], axis=0)
        # A rank whose call ends first waits for the others at the step's
        # end (the runner's collective of the logged loss), outside its
        # call: every rank's step lasts the longest call.
        period = np.sum([max(np.add(l["busy_ms"], l["idle_ms"]))
                         for l in timed])
        result.update(
            step_ms=float(period / len(timed)),
            busy_ms=[float(b / len(timed)) for b in busy],
            idle=[float(1 - b / period) for b in busy],
            bound=(stages - 1) / (microbatches + stages - 1),
            # The same schedule with the stages' measured work.
            model=one_f_one_b([b / len(timed) / microbatches for b in busy],
                              microbatches))
    return result


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--build", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--mpirun", default="/usr/bin/mpirun")
    p.add_argument("--json")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    model, data = export(args.work)
    results = []
    for m, eager in [(m, e) for e in (False, True) for m in MICROBATCHES]:
        one = train(args, model, data, m, 1)
        piped = train(args, model, data, m, STAGES, eager)
        gap = max(abs(a - b) / abs(b)
                  for a, b in zip(piped["losses"], one["losses"]))
        if not gap <= 1e-4:
            sys.exit(f"{piped['config']}: losses {gap:.1e} from one "
                     f"process's")
        piped["loss_gap"] = gap
        results.append(piped)
        idle = ", ".join(
            f"rank {r} {100 * f:.1f}% (busy {b:.1f} ms, 1F1B of its work "
            f"{100 * w:.1f}%)" for r, (f, b, w) in enumerate(
                zip(piped["idle"], piped["busy_ms"], piped["model"])))
        worst = max(abs(f - piped["bound"]) for f in piped["idle"])
        print(f"{piped['config']:>16}: step {piped['step_ms']:.1f} ms; idle "
              f"{idle}; equal-stage bound {100 * piped['bound']:.1f}% (off "
              f"by at most {100 * worst:.1f} points); losses within "
              f"{gap:.1e} of one process's", flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
