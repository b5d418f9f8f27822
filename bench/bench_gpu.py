"""One training step of each of the five models (tests/models/models.py) on
a GPU: dlc's compiled module (`--target cuda`) against PyTorch eager and
torch.compile, same model, batch, data, precision (float32, TF32 off on
both sides: dlc's float32 matmuls and convolutions do not use TF32 unless
compiled with --tf32) and optimizer (AdamW, lr 1e-3, weight decay 0.01), in
one run. Prints one table: median milliseconds per step, the ratios
PyTorch / dlc (above 1: dlc is faster), and the step's floor (its matmul and
convolution FLOPs, x3 for forward + backward, over a float32 matmul rate
measured here by PyTorch); then where dlc's step time goes (library calls,
generated kernels, copies, and the gaps between them); then the achieved
bandwidth of the slowest generated kernels (bytes they read and write over
their time, from dlc's per-step profile) against a device-to-device copy
measured here. Then the two large models, GPT-2 124M and ResNet-50, in
float32 and TF32 (bench/large_models.py), their results in files under
--out.

Two subcommands, since the GPU machine has no compiler:
  prepare  (build machine; bench/prepare_gpu_bundle.sh runs it) compiles
           each model for cuda without its weights (the timer runs on
           zeros, which take as long) and writes one batch of its data;
           exports and compiles the large models (DIR/bench/large).
  run      (GPU machine; bench/gpu_round.sh runs it) the table; the PyTorch
           models are built there from tests/models and large_models.py.
           Exits with 77 where no CUDA device can be opened.

Usage: python3 bench/bench_gpu.py prepare --dlc-compile build/bin/dlc-compile
           --out DIR/bench [--batch 128] [--models mlp,gpt]
           [--large gpt2,resnet50]
       python3 bench/bench_gpu.py run --bundle DIR [--models mlp,gpt]
           [--steps 20] [--warmup 5] [--no-compile] [--large gpt2,resnet50]
           [--out RESULTS] [--budget SECONDS]
"""

import argparse
import datetime
import json
import os
import signal
import subprocess
import sys
import tempfile
import time

import numpy as np
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "tests", "models"))
sys.path.insert(0, HERE)
import models  # noqa: E402
import bench_cpu  # noqa: E402  (forward_flops, median, LR, WEIGHT_DECAY)
import large_models  # noqa: E402

SKIP = 77

MODELS = ["mlp", "cnn_bn", "resnet18", "mobilenet_v2", "gpt"]


def torch_inputs(name, data, batch, device):
    spec = models.MODELS[name]
    return [torch.from_numpy(data[n][:batch]).to(device)
            for n in spec.input_names]


def torch_step_ms(name, data, batch, steps, warmup, compiled):
    """Median ms of a PyTorch AdamW step on cuda, eager or compiled."""
    model = models.build(name).float().train().cuda()
    opt = torch.optim.AdamW(model.parameters(), lr=bench_cpu.LR,
                            weight_decay=bench_cpu.WEIGHT_DECAY)
    inputs = torch_inputs(name, data, batch, "cuda")
    labels = torch.from_numpy(data["labels"][:batch]).cuda()
    flops = bench_cpu.forward_flops(model, inputs)

    def step():
        opt.zero_grad(set_to_none=True)
        out = model(*inputs)
        loss = F.cross_entropy(out.reshape(-1, out.shape[-1]),
                               labels.reshape(-1))
        loss.backward()
        opt.step()
        return loss

    if compiled:
        step = torch.compile(step)
    times = []
    for i in range(warmup + steps):
        torch.cuda.synchronize()
        start = time.perf_counter()
        # As dlc's step returns its loss to the host.
        step().item()
        if i >= warmup:
            times.append((time.perf_counter() - start) * 1e3)
    return bench_cpu.median(times), flops


def dlc_step_ms(name, bundle, steps, warmup, profile=None):
    """Median ms of dlc's step (replayed CUDA graphs), or with `profile`
    the per-step profile (which runs the plan step by step between timing
    events) written there."""
    out = subprocess.run(
        [os.path.join(bundle, "bin", "dlc-step-timer"),
         os.path.join(bundle, "bench", f"{name}.cuda.dlcm"), "--data",
         os.path.join(bundle, "bench", f"{name}.npz"), "--device", "cuda:0",
         "--warmup", str(warmup), "--steps", str(steps)] +
        (["--profile", profile] if profile else []),
        check=True, capture_output=True, text=True)
    return json.loads(out.stdout)["median_ms"]


def matmul_rate(tf32=False, dtype=torch.float32):
    """FLOP/s of a 8192^3 matmul of `dtype`, float32 without TF32 unless
    `tf32` (best of 5)."""
    torch.backends.cuda.matmul.allow_tf32 = tf32
    a = torch.randn(8192, 8192, device="cuda", dtype=dtype)
    b = torch.randn(8192, 8192, device="cuda", dtype=dtype)
    torch.mm(a, b)
    best = float("inf")
    for _ in range(5):
        torch.cuda.synchronize()
        start = time.perf_counter()
        torch.mm(a, b)
        torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    torch.backends.cuda.matmul.allow_tf32 = False
    return 2 * 8192 ** 3 / best


def copy_bandwidth():
    """Bytes/s read + written by a 1 GiB device-to-device copy (best of 5)."""
    src = torch.empty(1 << 30, dtype=torch.uint8, device="cuda")
    dst = torch.empty_like(src)
    dst.copy_(src)
    best = float("inf")
    for _ in range(5):
        torch.cuda.synchronize()
        start = time.perf_counter()
        dst.copy_(src)
        torch.cuda.synchronize()
        best = min(best, time.perf_counter() - start)
    return 2 * src.numel() / best


def prepare(args):
    import train_check
    os.makedirs(args.out, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="dlc-bench-gpu-") as work:
        prepare_models(args, train_check, work)
    with open(os.path.join(args.out, "batch"), "w") as f:
        f.write(str(args.batch))
    large = [m for m in args.large.split(",") if m]
    if large:
        large_models.prepare(args.dlc_compile,
                             os.path.join(args.out, "large"), large)


def prepare_models(args, train_check, work):
    for name in [m for m in args.models.split(",") if m]:
        steps = -(-args.batch // train_check.BATCH[name])
        base = train_check.prepare(name, work, "float32", steps)
        with np.load(base + ".data.npz") as f:
            np.savez(os.path.join(args.out, f"{name}.npz"),
                     **{k: f[k][:args.batch] for k in f.files})
        subprocess.run([args.dlc_compile, base + ".onnx", "--train", "--loss",
                        "cross_entropy", "--optimizer", "adamw", "--lr",
                        str(bench_cpu.LR), "--weight-decay",
                        str(bench_cpu.WEIGHT_DECAY), "--batch-size",
                        str(args.batch), "--target", "cuda",
                        "--embed-parameters=false", "-o",
                        os.path.join(args.out, f"{name}.cuda.dlcm")],
                       check=True)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("command", choices=["prepare", "run"])
    p.add_argument("--models", default=",".join(MODELS))
    p.add_argument("--large", default=",".join(large_models.MODELS),
                   help="the large models (bench/large_models.py)")
    p.add_argument("--dlc-compile", help="prepare: the compiler")
    p.add_argument("--out", help="prepare: where the modules go; run: "
                   "where the large models' results go (default .)")
    p.add_argument("--batch", type=int, default=128)
    p.add_argument("--bundle", help="run: the unpacked bundle")
    p.add_argument("--steps", type=int, default=20)
    p.add_argument("--warmup", type=int, default=5)
    p.add_argument("--no-compile", action="store_true",
                   help="skip torch.compile (it compiles for ~1 min a model)")
    p.add_argument("--budget", type=float,
                   help="run: seconds the run may take; the large models' "
                   "torch.compile runs get what is left and are stopped "
                   "at it (default: no limit)")
    p.add_argument("--top-kernels", type=int, default=8)
    args = p.parse_args()
    if args.command == "prepare":
        if not args.dlc_compile or not args.out:
            p.error("prepare needs --dlc-compile and --out")
        prepare(args)
        return
    if not args.bundle:
        p.error("run needs --bundle")
    if not torch.cuda.is_available():
        print("bench_gpu: no CUDA device: skipped")
        sys.exit(SKIP)
    deadline = None if args.budget is None else time.time() + args.budget
    # A timeout's SIGTERM ends the run as an exit: the large models' results
    # so far are written and their PyTorch child (a session of its own) is
    # ended.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(128 + signal.SIGTERM))
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    rate, bandwidth = matmul_rate(), copy_bandwidth()
    rates = {"fp32": rate, "tf32": matmul_rate(tf32=True),
             "bf16": matmul_rate(dtype=torch.bfloat16)}
    torch.cuda.empty_cache()
    small = [m for m in args.models.split(",") if m]
    large = [m for m in args.large.split(",") if m]
    with tempfile.TemporaryDirectory(prefix="dlc-bench-gpu-") as work:
        if small:
            with open(os.path.join(args.bundle, "bench", "batch")) as f:
                batch = int(f.read())
            run(args, small, batch, rate, bandwidth, work)
        if large:
            large_models.run(large, args.bundle, args.out or ".", work,
                             rates, bandwidth, deadline,
                             compile=not args.no_compile)


def run(args, names, batch, rate, bandwidth, work):
    props = torch.cuda.get_device_properties(0)
    driver = subprocess.run(
        ["nvidia-smi", "--query-gpu=driver_version", "--format=csv,noheader"],
        capture_output=True, text=True).stdout.strip() or "?"
    print(f"# {datetime.date.today()}, {props.name}, driver {driver}"
          f", batch {batch}, AdamW, float32 (TF32 off); PyTorch "
          f"{torch.__version__}; float32 matmul {rate / 1e12:.1f} TFLOP/s, "
          f"device copy {bandwidth / 1e9:.0f} GB/s")
    print(f"{'model':<14}{'eager ms':>10}{'compile ms':>12}{'dlc ms':>9}"
          f"{'eager/dlc':>11}{'compile/dlc':>13}{'floor ms':>10}"
          f"{'dlc/floor':>11}")
    kernels, shares = [], {}
    for name in names:
        with np.load(os.path.join(args.bundle, "bench", f"{name}.npz")) as f:
            data = {k: f[k] for k in f.files}
        eager_ms, flops = torch_step_ms(name, data, batch, args.steps,
                                        args.warmup, False)
        compiled_ms = (float("nan") if args.no_compile else
                       torch_step_ms(name, data, batch, args.steps,
                                     args.warmup, True)[0])
        dlc_ms = dlc_step_ms(name, args.bundle, args.steps, args.warmup)
        profile = os.path.join(work, f"{name}.profile.jsonl")
        dlc_step_ms(name, args.bundle, 5, 2, profile)
        floor_ms = 3 * flops / rate * 1e3
        print(f"{name:<14}{eager_ms:>10.3f}{compiled_ms:>12.3f}"
              f"{dlc_ms:>9.3f}{eager_ms / dlc_ms:>11.2f}"
              f"{compiled_ms / dlc_ms:>13.2f}{floor_ms:>10.3f}"
              f"{dlc_ms / floor_ms:>11.1f}", flush=True)
        shares[name] = {"step": dlc_ms}
        with open(profile) as f:
            for line in f:
                step = json.loads(line)
                if step["function"] != "train_step":
                    continue
                kind = {"KernelStep": "kernels", "MatmulStep": "library",
                        "ConvStep": "library"}.get(step["kind"], "copies")
                shares[name][kind] = (shares[name].get(kind, 0) +
                                      step["ms_per_call"])
                if step.get("bytes"):
                    kernels.append((name, step))
    # Where a step's time goes: its profiled steps' GPU time by kind (run
    # step by step between events), and the rest of the replayed step's
    # time (launch gaps, the input and loss copies, host work).
    print(f"\n{'time of a dlc step':<14}{'step ms':>9}{'library':>9}"
          f"{'kernels':>9}{'copies':>8}{'gaps':>8}")
    for name, share in shares.items():
        busy = sum(share.get(k, 0) for k in ("library", "kernels", "copies"))
        cells = "".join(f"{share.get(k, 0) / share['step']:>9.0%}"
                        for k in ("library", "kernels"))
        print(f"{name:<14}{share['step']:>9.3f}{cells}"
              f"{share.get('copies', 0) / share['step']:>8.0%}"
              f"{max(share['step'] - busy, 0) / share['step']:>8.0%}")
    kernels.sort(key=lambda k: -k[1]["ms"])
    print(f"\n{'slowest generated kernels':<60}{'ms/call':>9}{'MB':>8}"
          f"{'GB/s':>8}{'of copy':>9}")
    for name, step in kernels[:args.top_kernels]:
        seconds = step["ms_per_call"] / 1e3
        achieved = step["bytes"] / seconds
        label = f"{name}: {step['step']}"[:59]
        print(f"{label:<60}{step['ms_per_call']:>9.4f}"
              f"{step['bytes'] / 1e6:>8.2f}{achieved / 1e9:>8.0f}"
              f"{achieved / bandwidth:>9.0%}")


if __name__ == "__main__":
    main()
