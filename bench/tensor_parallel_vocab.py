"""Tensor parallelism with the vocabulary split, on CPU ranks (issue 16).

A GPT of tests/models (2 blocks, 128 wide, 4 heads, 64 tokens) with a
vocabulary of VOCAB tokens, so that the token embedding and the LM head
hold most of the parameters and the logits most of the activations, is
compiled for training with AdamW at a batch of BATCH sequences for one
device and with `--tp T` (the embedding split by rows, the head by
classes, the cross-entropy reduced over the ranks). The script prints,
per T, the memory plan of one rank (bytes of globals: parameters and
AdamW state; the train_step and forward arenas of dlc-compile
--emit=fused) and, for T = 1 and 2, the measured training throughput:
one process with --threads 2 against `mpirun -np 2` ranks of one thread
each (the build machine has 2 cores), the best of REPEATS runs. The
ranks' losses must be one
process's within 1e-5 relative, or the script fails.

  /usr/bin/python3 bench/tensor_parallel_vocab.py --build build --work /tmp/tp-vocab
"""

import argparse
import json
import os
import re
import sys

import numpy as np

from mpi_jobs import run

VOCAB = 8192
BATCH = 8
CONTEXT = 64
STEPS = 40
# Each throughput is the best of this many runs (the build machine's 2
# cores also run the job's communication threads and mpirun).
REPEATS = 3
RANKS = [1, 2, 4]


def output(cmd):
    proc = run(cmd)
    return proc.stdout + proc.stderr


def export(work):
    import torch
    sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests",
                                    "models"))
    from models import GPT, GPTConfig
    torch.manual_seed(0)
    model = GPT(GPTConfig(vocab=VOCAB, context=CONTEXT, d_model=128,
                          heads=4, layers=2))
    path = os.path.join(work, "gpt.onnx")
    torch.onnx.export(model, torch.zeros(BATCH, CONTEXT, dtype=torch.long),
                      path, input_names=["tokens"], output_names=["logits"],
                      dynamic_axes={"tokens": {0: "batch"},
                                    "logits": {0: "batch"}},
                      training=torch.onnx.TrainingMode.TRAINING,
                      do_constant_folding=False, opset_version=17)
    tokens = np.random.default_rng(0).integers(0, VOCAB,
                                               (BATCH * STEPS, CONTEXT))
    data = os.path.join(work, "data.npz")
    np.savez(data, tokens=tokens, labels=np.roll(tokens, -1, axis=1))
    return path, data


def samples_per_second(output):
    return float(re.search(r"([0-9.]+) samples/s", output).group(1))


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
    compile_ = os.path.join(args.build, "bin", "dlc-compile")
    dlc_run = os.path.join(args.build, "bin", "dlc-run")
    results = []
    for ranks in RANKS:
        flags = ["--train", "--loss", "cross_entropy", "--optimizer", "adamw",
                 "--batch-size", str(BATCH)]
        if ranks > 1:
            flags += ["--tp", str(ranks)]
        module = os.path.join(args.work, f"tp{ranks}.dlcm")
        fused = os.path.join(args.work, f"tp{ranks}.fused.mlir")
        run([compile_, model, *flags, "-o", module])
        run([compile_, model, *flags, "--emit=fused", "-o", fused])
        with open(fused) as f:
            arenas = dict(re.findall(
                r"func\.func @(\w+)\(.*?dlc\.arena_size = (\d+)", f.read()))
        info = output([dlc_run, module, "--info"])
        globals_bytes = int(re.search(r"globals: \d+ \(([0-9,]+) bytes\)",
                                      info).group(1).replace(",", ""))
        result = {"ranks": ranks, "globals_bytes": globals_bytes,
                  "train_step_arena": int(arenas["train_step"]),
                  "forward_arena": int(arenas["forward"])}
        if ranks <= 2:
            log = os.path.join(args.work, f"tp{ranks}.jsonl")
            threads = "2" if ranks == 1 else "1"
            cmd = [dlc_run, module, "--data", data, "--steps", str(STEPS),
                   "--seed", "1", "--threads", threads, "--log", log]
            if ranks > 1:
                cmd = [args.mpirun, "-np", str(ranks), *cmd]

            def train():
                if os.path.exists(log):
                    os.remove(log)
                return samples_per_second(output(cmd))

            result["samples_per_s"] = max(train() for _ in range(REPEATS))
            with open(log) as f:
                result["losses"] = [json.loads(l)["loss"] for l in f]
        results.append(result)
        mib = 1 << 20
        line = (f"T={ranks}: per rank globals {globals_bytes / mib:.1f} MiB, "
                f"train_step arena {result['train_step_arena'] / mib:.1f} "
                f"MiB, forward arena {result['forward_arena'] / mib:.1f} MiB")
        if "samples_per_s" in result:
            line += f"; {result['samples_per_s']:.1f} samples/s"
        print(line, flush=True)
    one, split = results[0], results[1]
    gap = max(abs(a - b) / abs(b)
              for a, b in zip(split["losses"], one["losses"]))
    if not gap <= 1e-5:
        sys.exit(f"--tp 2: losses {gap:.1e} from one process's")
    print(f"--tp 2 on 2 ranks: {split['samples_per_s'] / one['samples_per_s']:.2f}x "
          f"one process on 2 threads; losses within {gap:.1e}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)


if __name__ == "__main__":
    main()
