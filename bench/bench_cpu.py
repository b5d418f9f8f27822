"""One training step of each of the five models (tests/models/models.py) on
the CPU: dlc's compiled module against PyTorch eager, same model, weights,
batch, data, optimizer (AdamW, lr 1e-3, weight decay 0.01) and thread count,
in one run. Prints a table of median milliseconds per step and the ratio
PyTorch / dlc (above 1: dlc is faster), beside the step's floor: its matmul
and convolution FLOPs (forward x 3 for forward + backward) over the matrix
rate measured here: a 1024^3 float32 matmul through oneDNN
(dlc-matmul-rate), the fastest library on this CPU; PyTorch's own matmul
rate is printed beside it.

Usage: /usr/bin/python3 bench/bench_cpu.py --build build [--threads 2]
           [--batch 32] [--steps 10] [--models mlp,gpt] [--work DIR]
Needs a build with dlc-compile, dlc-step-timer and dlc-matmul-rate.
"""

import argparse
import datetime
import json
import math
import os
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "models"))
import models  # noqa: E402
import train_check  # noqa: E402  (prepare, make_data, torch_inputs)

LR, WEIGHT_DECAY = 1e-3, 0.01


def median(values):
    values = sorted(values)
    n = len(values)
    return values[n // 2] if n % 2 else (values[n // 2 - 1] + values[n // 2]) / 2


def torch_matmul_rate():
    """float32 FLOP/s of a 1024^3 matmul in PyTorch (best of 5)."""
    a, b = torch.randn(1024, 1024), torch.randn(1024, 1024)
    torch.mm(a, b)
    best = math.inf
    for _ in range(5):
        start = time.perf_counter()
        torch.mm(a, b)
        best = min(best, time.perf_counter() - start)
    return 2 * 1024 ** 3 / best


def forward_flops(model, inputs):
    """Multiply-add FLOPs of the model's Linear and Conv layers (and GPT's
    attention products, which are plain matmuls) in one forward."""
    flops = [0]
    hooks = []

    def conv(m, args, out):
        k = m.weight.shape[1] * m.weight.shape[2] * m.weight.shape[3]
        flops[0] += 2 * out.numel() * k

    def linear(m, args, out):
        flops[0] += 2 * out.numel() * m.in_features

    for m in model.modules():
        if isinstance(m, torch.nn.Conv2d):
            hooks.append(m.register_forward_hook(conv))
        elif isinstance(m, torch.nn.Linear):
            hooks.append(m.register_forward_hook(linear))
    real_matmul = torch.matmul

    def counting_matmul(a, b, *rest, **kw):
        out = real_matmul(a, b, *rest, **kw)
        flops[0] += 2 * out.numel() * a.shape[-1]
        return out

    torch.matmul = counting_matmul
    try:
        with torch.no_grad():
            model(*inputs)
    finally:
        torch.matmul = real_matmul
        for h in hooks:
            h.remove()
    return flops[0]


def torch_step_ms(name, data, batch, steps, warmup):
    model = models.build(name).float().train()
    opt = torch.optim.AdamW(model.parameters(), lr=LR,
                            weight_decay=WEIGHT_DECAY)
    rows = slice(0, batch)
    inputs = train_check.torch_inputs(name, data, rows, torch.float32)
    labels = torch.from_numpy(data["labels"][rows])
    times = []
    for i in range(warmup + steps):
        start = time.perf_counter()
        opt.zero_grad(set_to_none=True)
        out = model(*inputs)
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]),
                               labels.reshape(-1))
        loss.backward()
        opt.step()
        if i >= warmup:
            times.append((time.perf_counter() - start) * 1e3)
    return median(times), forward_flops(model, inputs)


def dlc_step_ms(name, base, batch, steps, warmup, args):
    module = f"{base}.bench{batch}.dlcm"
    subprocess.run([os.path.join(args.build, "bin", "dlc-compile"),
                    base + ".onnx", "--train", "--loss", "cross_entropy",
                    "--optimizer", "adamw", "--lr", str(LR),
                    "--weight-decay", str(WEIGHT_DECAY), "--batch-size",
                    str(batch), "-o", module], check=True)
    out = subprocess.run([os.path.join(args.build, "bin", "dlc-step-timer"),
                          module, "--data", base + ".data.npz", "--threads",
                          str(args.threads), "--warmup", str(warmup),
                          "--steps", str(steps)],
                         check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["median_ms"]


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--build", required=True)
    p.add_argument("--threads", type=int, default=2)
    p.add_argument("--batch", type=int, default=32)
    p.add_argument("--steps", type=int, default=10)
    p.add_argument("--warmup", type=int, default=3)
    p.add_argument("--models", default=",".join(models.MODELS))
    p.add_argument("--work", default=None)
    args = p.parse_args()
    torch.set_num_threads(args.threads)
    work = args.work or tempfile.mkdtemp(prefix="dlc-bench-")
    os.makedirs(work, exist_ok=True)
    rate = 1e9 * float(subprocess.run(
        [os.path.join(args.build, "bin", "dlc-matmul-rate"), "--threads",
         str(args.threads)], check=True, capture_output=True,
        text=True).stdout)
    print(f"# {datetime.date.today()}, {args.threads} threads, batch "
          f"{args.batch}, AdamW; PyTorch {torch.__version__}; float32 "
          f"matmul: oneDNN {rate / 1e9:.0f} GFLOP/s, PyTorch "
          f"{torch_matmul_rate() / 1e9:.0f} GFLOP/s")
    print(f"{'model':<14}{'pytorch ms':>12}{'dlc ms':>10}{'ratio':>8}"
          f"{'floor ms':>10}{'dlc/floor':>11}")
    for name in [m for m in args.models.split(",") if m]:
        # Enough samples for one batch of `batch` (prepare writes
        # steps * train_check.BATCH samples).
        steps = max(1, math.ceil(args.batch / train_check.BATCH[name]))
        base = train_check.prepare(name, work, "float32", steps)
        with np.load(base + ".data.npz") as f:
            data = {k: f[k] for k in f.files}
        torch_ms, flops = torch_step_ms(name, data, args.batch, args.steps,
                                        args.warmup)
        dlc_ms = dlc_step_ms(name, base, args.batch, args.steps, args.warmup,
                             args)
        floor_ms = 3 * flops / rate * 1e3
        print(f"{name:<14}{torch_ms:>12.2f}{dlc_ms:>10.2f}"
              f"{torch_ms / dlc_ms:>8.2f}{floor_ms:>10.2f}"
              f"{dlc_ms / floor_ms:>11.1f}", flush=True)


if __name__ == "__main__":
    main()
