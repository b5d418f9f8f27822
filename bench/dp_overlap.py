"""How much of the gradient all-reduce data parallelism hides behind
backward, measured on CPU ranks (issue 15).

An MLP of LAYERS Linear+ReLU layers of WIDTH features (PyTorch, exported to
ONNX for training) is compiled with `dlc-compile --dp 2` at a global batch
of BATCH, once per bucket size, and trained for STEPS steps by `mpirun -np
2 dlc-run --threads 1 --profile`. Each all-reduce step's profile line gives
the time its collective ran on the communication thread (collective_ms)
and the time the step then waited for it before the first step that reads
its outputs (exposed_ms); the share hidden behind the rest of backward is
1 - exposed / collective, summed over the buckets and both ranks. Packing a
bucket (the step's own ms) is reported apart. A step's time is the sum of
its plan steps' times and waits, averaged over the ranks. A single
bucket (the whole gradient, reduced after backward has produced all of
it) is the no-overlap baseline. One process at the same global batch gives
the step time data parallelism is compared with.

Every configuration's losses must be one process's within 1e-4 (the
tolerance tests/models/data_parallel_check.py derives), or the script
fails. Prints one line per configuration and, with --json, writes them.

  /usr/bin/python3 bench/dp_overlap.py --build build --work /tmp/dp-overlap
"""

import argparse
import json
import os
import sys
import time

import numpy as np

from mpi_jobs import run

WIDTH = 1024
LAYERS = 6
BATCH = 64
STEPS = 20
# Bucket sizes in MiB: 1000 holds the whole 24 MiB gradient (no overlap).
BUCKETS_MB = [1000, 8, 2]


def export(work):
    import torch
    torch.manual_seed(0)
    layers = []
    for _ in range(LAYERS - 1):
        layers += [torch.nn.Linear(WIDTH, WIDTH), torch.nn.ReLU()]
    model = torch.nn.Sequential(*layers, torch.nn.Linear(WIDTH, 10))
    path = os.path.join(work, "mlp.onnx")
    torch.onnx.export(model, torch.zeros(BATCH, WIDTH), path,
                      input_names=["input"], output_names=["logits"],
                      dynamic_axes={"input": {0: "batch"},
                                    "logits": {0: "batch"}},
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, opset_version=17)
    rng = np.random.default_rng(0)
    data = os.path.join(work, "data.npz")
    np.savez(data, input=rng.standard_normal((BATCH * STEPS, WIDTH),
                                             dtype=np.float32),
             labels=rng.integers(0, 10, BATCH * STEPS, dtype=np.int64))
    return path, data


def train(args, model, data, ranks, bucket_mb):
    tag = f"dp{ranks}_{bucket_mb}" if ranks > 1 else "one"
    module = os.path.join(args.work, tag + ".dlcm")
    profile = os.path.join(args.work, tag + ".profile.jsonl")
    flags = ["--train", "--batch-size", str(BATCH), "--optimizer", "sgd",
             "--lr", "0.01"]
    if ranks > 1:
        flags += ["--dp", str(ranks), "--dp-bucket-mb", str(bucket_mb)]
    run([os.path.join(args.build, "bin", "dlc-compile"), model, *flags, "-o",
         module])
    log = os.path.join(args.work, tag + ".jsonl")
    if os.path.exists(log):
        os.remove(log)
    cmd = [os.path.join(args.build, "bin", "dlc-run"), module, "--data", data,
           "--steps", str(STEPS), "--threads", "1", "--profile", profile,
           "--log", log]
    if ranks > 1:
        cmd = [args.mpirun, "-np", str(ranks), *cmd]
    start = time.monotonic()
    run(cmd)
    seconds = time.monotonic() - start
    files = ([f"{profile}.rank{r}" for r in range(ranks)] if ranks > 1
             else [profile])
    collective = exposed = pack = step_ms = 0.0
    buckets = 0
    for path in files:
        with open(path) as f:
            lines = [json.loads(line) for line in f]
        # A step's time: its plan steps, and the waits for collectives.
        step_ms += sum(l["ms"] + l.get("exposed_ms", 0.0) for l in lines)
        for l in lines:
            if l["kind"] == "AllReduceStep":
                collective += l["collective_ms"]
                exposed += l["exposed_ms"]
                pack += l["ms"]
                buckets += 1
    per_step = len(files) * STEPS
    with open(log) as f:
        losses = [json.loads(line)["loss"] for line in f]
    result = {"config": tag, "losses": losses, "ranks": ranks, "bucket_mb": bucket_mb,
              "buckets": buckets // len(files), "step_ms": step_ms / per_step,
              "wall_s": seconds}
    if ranks > 1:
        result.update(collective_ms=collective / per_step,
                      exposed_ms=exposed / per_step, pack_ms=pack / per_step,
                      hidden=1 - exposed / collective if collective else 0.0)
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
    results = [train(args, model, data, 1, 0)]
    results += [train(args, model, data, 2, mb) for mb in BUCKETS_MB]
    # Overlap that changed the numbers would be no overlap: every
    # configuration trains what one process trains (float32 summation
    # order aside).
    for r in results[1:]:
        gap = max(abs(a - b) / abs(b)
                  for a, b in zip(r["losses"], results[0]["losses"]))
        if not gap <= 1e-4:
            sys.exit(f"{r['config']}: losses {gap:.1e} from one process's")
    for r in results:
        line = (f"{r['config']:>10}: {r['buckets']} buckets, step "
                f"{r['step_ms']:.1f} ms")
        if r["ranks"] > 1:
            line += (f"; all-reduce {r['collective_ms']:.1f} ms, of which "
                     f"exposed {r['exposed_ms']:.1f} ms (hidden "
                     f"{100 * r['hidden']:.0f}%); packing "
                     f"{r['pack_ms']:.1f} ms")
        print(line, flush=True)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
