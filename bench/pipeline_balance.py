#!/usr/bin/python3
"""How dlc-pipeline-partition's cost model cuts GPT-style models into
pipeline stages, and what each stage's rank holds against one device.

For each depth, exports large_models.py's nanoGPT GPT (GPT-2 small's
widths: 768 wide, 12 heads, 1024 tokens, vocabulary 50304, the LM head tied
to the token embedding) in training mode, then runs

  dlc-compile MODEL --train --loss cross_entropy --label-input labels
      --batch-size B --pp P --microbatches M --report-partition --emit=mlir

for each P and parses the report: where each stage starts (which block),
its share of the cost, its FLOPs, parameters and activations. It writes one
Markdown table to standard output (and --json, if given):

  depth | stages | blocks per stage | costliest / mean | per-rank memory

The memory columns count what the report counts: parameters (x4 for
AdamW: weights, gradients and two moments, float32) and activations in
flight under 1F1B (stage s keeps min(P - s, M) micro-batches), against one
device training the whole batch. Activations are every batch-sized result
of the forward ops, an upper bound of what the backward keeps. It runs on
the build machine (no GPU: the cost model is static).

Usage: /usr/bin/python3 bench/pipeline_balance.py --dlc-compile build/bin/dlc-compile
           [--depths 6,12,24] [--stages 2,4,8] [--batch 8] [--microbatches 8]
"""

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import warnings

import torch

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import large_models  # noqa: E402

UNITS = {"B": 1, "KiB": 2 ** 10, "MiB": 2 ** 20, "GiB": 2 ** 30,
         "TiB": 2 ** 40}
SI = {"": 1, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12, "P": 1e15}
# AdamW keeps weights, gradients and two moments per float32 parameter.
ADAMW_COPIES = 4


def size(text):
    value, unit = text.split()
    return float(value) * UNITS[unit]


def flops(text):
    m = re.fullmatch(r"([0-9.e+]+) (\w?)FLOP", text)
    return float(m.group(1)) * SI[m.group(2)]


def export(depth, batch, path):
    cfg = large_models.GPTConfig(n_layer=depth)
    torch.manual_seed(0)
    model = large_models.GPT(cfg).train()
    tokens = torch.zeros((batch, cfg.block_size), dtype=torch.long)
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (tokens,), path, opset_version=17,
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False, input_names=["idx"],
                          output_names=["logits"],
                          # --batch-size binds it to one micro-batch.
                          dynamic_axes={"idx": {0: "batch"},
                                        "logits": {0: "batch"}})


STAGE = re.compile(
    r"  stage (\d+): (\d+) ops from (\S+) at loc\(\"([^\"]*)\".*\n"
    r"    (\S+ \w*FLOP) per micro-batch, ([0-9.]+)% of the cost; "
    r"parameters (\S+ \S+) "
    r"\((\d+)\); activations (\S+ \S+) per micro-batch, (\d+) in flight")


def partition(dlc_compile, model, batch, stages, microbatches):
    result = subprocess.run(
        [dlc_compile, model, "--train", "--loss", "cross_entropy",
         "--label-input", "labels", "--optimizer", "adamw", "--batch-size",
         str(batch), "--pp", str(stages), "--microbatches",
         str(microbatches), "--report-partition", "--emit=mlir", "-o",
         os.devnull], check=True, capture_output=True, text=True)
    report = result.stderr
    parsed = []
    for m in STAGE.finditer(report):
        block = re.search(r"/h\.(\d+)/", m.group(4))
        parsed.append({
            "first_op": m.group(3), "at": m.group(4),
            "first_block": int(block.group(1)) if block else None,
            "flops": flops(m.group(5)), "cost_percent": float(m.group(6)),
            "parameter_bytes": size(m.group(7)),
            "activation_bytes": size(m.group(9)),
            "in_flight": int(m.group(10))})
    balance = float(re.search(r"costliest stage is ([0-9.]+)x", report)
                    .group(1))
    one = re.search(r"one device, the whole batch: (\S+ \w*FLOP); "
                    r"parameters (\S+ \S+); activations (\S+ \S+)", report)
    return {"stages": parsed, "balance": balance, "report": report,
            "one_device": {"flops": flops(one.group(1)),
                           "parameter_bytes": size(one.group(2)),
                           "activation_bytes": size(one.group(3))}}


def blocks_per_stage(depth, stages):
    """The blocks of each stage, "3+3": a stage that starts inside a block
    counts it, the first stage starts at block 0 (with the embeddings), and
    a later stage that starts past the blocks (at the final norm or the LM
    head) has none."""
    starts = [s["first_block"] if s["first_block"] is not None
              else (0 if i == 0 else depth) for i, s in enumerate(stages)]
    ends = starts[1:] + [depth]
    return "+".join(str(end - start) for start, end in zip(starts, ends))


def gib(x):
    return f"{x / 2 ** 30:.2f}"


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--dlc-compile", required=True)
    p.add_argument("--depths", default="6,12,24")
    p.add_argument("--stages", default="2,4,8")
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--microbatches", type=int, default=8)
    p.add_argument("--json", help="write every report and figure here")
    args = p.parse_args()
    rows, everything = [], []
    print("| layers | stages | blocks per stage (last with the LM head) | "
          "costliest / mean | cost % per stage | stage 0 memory GiB | "
          "largest stage GiB | one device GiB |")
    print("|---:|---:|---|---:|---|---:|---:|---:|", flush=True)
    with tempfile.TemporaryDirectory(prefix="dlc-pp-balance-") as work:
        for depth in [int(d) for d in args.depths.split(",")]:
            model = os.path.join(work, f"gpt_{depth}.onnx")
            export(depth, args.batch, model)
            for stages in [int(s) for s in args.stages.split(",")]:
                r = partition(args.dlc_compile, model, args.batch, stages,
                              args.microbatches)
                memory = [ADAMW_COPIES * s["parameter_bytes"] +
                          s["activation_bytes"] * s["in_flight"]
                          for s in r["stages"]]
                one = r["one_device"]
                one_memory = (ADAMW_COPIES * one["parameter_bytes"] +
                              one["activation_bytes"])
                row = (f"| {depth} | {stages} | "
                       f"{blocks_per_stage(depth, r['stages'])} | "
                       f"{r['balance']:.3f} | "
                       + " / ".join(f"{s['cost_percent']:.1f}"
                                    for s in r["stages"])
                       + f" | {gib(memory[0])} | {gib(max(memory))} | "
                       f"{gib(one_memory)} |")
                print(row, flush=True)
                everything.append({"depth": depth, "stages": stages,
                                   "microbatches": args.microbatches,
                                   "batch": args.batch, **r})
            os.remove(model)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(everything, f, indent=1)


if __name__ == "__main__":
    main()
