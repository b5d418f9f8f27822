"""Two full-size models on a GPU, beside bench_gpu.py's five small ones:
GPT-2 124M in nanoGPT's layout (batch 8 x 1024 tokens, AdamW lr 6e-4,
weight decay 0.1) and torchvision's ResNet-50 (224x224, batch 64, SGD lr
0.1, momentum 0.9). dlc's module (`--target cuda`, float32, --tf32 and
--precision bf16, and for ResNet-50 a TF32 module kept channels-first, to
measure what the channels-last layout of TF32 modules gains) against
PyTorch eager (bf16: autocast, ResNet-50 channels_last) and torch.compile with TF32 off and on, in one run,
on the same random batch and from random weights, never zeros (each side
draws its own: dlc-runner --init-seed; PyTorch's seeded initialization,
nanoGPT's for GPT-2): median ms per step after warm-up, tokens or images
per second, peak memory (dlc's train_step arena from `dlc-compile
--report-memory` at prepare time, PyTorch's max_memory_allocated), the
ratios dlc / eager and dlc / torch.compile, the step's matmul floor; then
for dlc each plan step's time by kind (generated kernels, matmuls,
convolutions, copies) and every generated kernel's bytes, time and
bandwidth against a device copy, flagging those that move >= 64 MB at
under half of it.

dlc is timed with dlc-runner, not dlc-step-timer, which runs a module
compiled without its weights on zeros. The runner's progress lines give
each step's time (the step and its input upload, as a training run pays
them); its --profile times every plan step from the first call on: a run
of 1 + PROFILE_STEPS steps less a run of one step leaves the first call's
library and kernel loading out. The PyTorch side runs in child processes
(eager: one a model; torch.compile: one a model and precision), so that a
compile past the time left is ended and reported as skipped, and what
finished before it is kept.

bench/bench_gpu.py calls prepare (build machine, /usr/bin/python3 with torch
1.13: exports both models to ONNX in training mode, compiles them for cuda
without weights, records the export and compile times and the memory
report) and run (GPU machine: the measurements; writes bench_large.json,
bench_large.txt, and each dlc profile and kernel table). run starts this
file as
  python3 bench/large_models.py torch --model gpt2 --mode eager|compile
          --data BATCH.npz [--precisions tf32,fp32]
which prints one JSON line per precision.
"""

import argparse
import datetime
import json
import math
import os
import re
import signal
import subprocess
import sys
import tempfile
import time
import warnings
from dataclasses import dataclass, field

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F

MODELS = ["gpt2", "resnet50"]
PRECISIONS = ["fp32", "tf32", "bf16"]
# dlc-compile's options for each precision's module.
PRECISION_OPTIONS = {"fp32": [], "tf32": ["--tf32"],
                     "bf16": ["--precision", "bf16"]}
SEED = 0
INIT_SEED = "1"
# Median of STEPS after WARMUP, as the baseline; torch.compile warms up
# COMPILE_WARMUP more steps (its second step recompiles for the optimizer's
# state).
STEPS, WARMUP, COMPILE_WARMUP = 10, 3, 2
PROFILE_STEPS = 3
FLAG_BYTES, FLAG_FRACTION = 64e6, 0.5


@dataclass
class GPTConfig:
    block_size: int = 1024
    vocab_size: int = 50304
    n_layer: int = 12
    n_head: int = 12
    n_embd: int = 768


class CausalSelfAttention(nn.Module):
    """nanoGPT's attention without flash: the causal mask is a registered
    lower-triangular buffer applied by masked_fill on the scores."""

    def __init__(self, cfg):
        super().__init__()
        self.c_attn = nn.Linear(cfg.n_embd, 3 * cfg.n_embd)
        self.c_proj = nn.Linear(cfg.n_embd, cfg.n_embd)
        self.n_head, self.n_embd = cfg.n_head, cfg.n_embd
        self.register_buffer("bias", torch.tril(
            torch.ones(cfg.block_size, cfg.block_size)).view(
                1, 1, cfg.block_size, cfg.block_size))

    def forward(self, x):
        b, t, c = x.size()
        q, k, v = self.c_attn(x).split(self.n_embd, dim=2)
        k = k.view(b, t, self.n_head, c // self.n_head).transpose(1, 2)
        q = q.view(b, t, self.n_head, c // self.n_head).transpose(1, 2)
        v = v.view(b, t, self.n_head, c // self.n_head).transpose(1, 2)
        att = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(k.size(-1)))
        att = att.masked_fill(self.bias[:, :, :t, :t] == 0, float("-inf"))
        att = F.softmax(att, dim=-1)
        y = (att @ v).transpose(1, 2).contiguous().view(b, t, c)
        return self.c_proj(y)


class MLP(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.c_fc = nn.Linear(cfg.n_embd, 4 * cfg.n_embd)
        self.gelu = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * cfg.n_embd, cfg.n_embd)

    def forward(self, x):
        return self.c_proj(self.gelu(self.c_fc(x)))


class Block(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.ln_1 = nn.LayerNorm(cfg.n_embd)
        self.attn = CausalSelfAttention(cfg)
        self.ln_2 = nn.LayerNorm(cfg.n_embd)
        self.mlp = MLP(cfg)

    def forward(self, x):
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))


class GPT(nn.Module):
    """nanoGPT's GPT with dropout 0 (no Dropout modules): token ids int64
    [B, T] -> logits [B, T, vocab]; the LM head is the token embedding."""

    def __init__(self, cfg=GPTConfig()):
        super().__init__()
        self.transformer = nn.ModuleDict(dict(
            wte=nn.Embedding(cfg.vocab_size, cfg.n_embd),
            wpe=nn.Embedding(cfg.block_size, cfg.n_embd),
            h=nn.ModuleList([Block(cfg) for _ in range(cfg.n_layer)]),
            ln_f=nn.LayerNorm(cfg.n_embd)))
        self.lm_head = nn.Linear(cfg.n_embd, cfg.vocab_size, bias=False)
        self.transformer.wte.weight = self.lm_head.weight
        self.apply(self._init_weights)
        for name, p in self.named_parameters():
            if name.endswith("c_proj.weight"):
                nn.init.normal_(p, 0.0, 0.02 / math.sqrt(2 * cfg.n_layer))

    @staticmethod
    def _init_weights(module):
        if isinstance(module, (nn.Linear, nn.Embedding)):
            nn.init.normal_(module.weight, 0.0, 0.02)
        if isinstance(module, nn.Linear) and module.bias is not None:
            nn.init.zeros_(module.bias)

    def forward(self, idx):
        t = idx.size(1)
        pos = torch.arange(0, t, dtype=torch.long, device=idx.device)
        x = self.transformer.wte(idx) + self.transformer.wpe(pos)
        for block in self.transformer.h:
            x = block(x)
        return self.lm_head(self.transformer.ln_f(x))


@dataclass
class Spec:
    title: str
    batch: int
    input_name: str
    unit: str          # what a step's throughput counts
    per_step: int      # ... and how many of them a step has
    opset: int
    optimizer: list    # dlc-compile's optimizer options
    # dlc modules beyond one a precision: label PRECISION-VARIANT -> options
    # (timed against PRECISION's floor; PyTorch has no counterpart).
    variants: dict = field(default_factory=dict)


SPECS = {
    "gpt2": Spec("GPT-2 124M (nanoGPT), batch 8 x 1024, AdamW lr 6e-4 "
                 "wd 0.1", 8, "idx", "tokens", 8 * 1024, 17,
                 ["--optimizer", "adamw", "--lr", "6e-4", "--weight-decay",
                  "0.1"]),
    "resnet50": Spec("ResNet-50 (torchvision), 224x224, batch 64, SGD lr "
                     "0.1 momentum 0.9", 64, "images", "images", 64, 14,
                     ["--optimizer", "sgd", "--lr", "0.1", "--momentum",
                      "0.9"],
                     # TF32 modules are channels-last (--conv-layout auto);
                     # this one measures what that layout gains.
                     {"tf32-nchw": ["--tf32", "--conv-layout", "nchw"]}),
}


def dlc_modules(spec):
    """The dlc modules of a model: label -> dlc-compile options."""
    return {**PRECISION_OPTIONS, **spec.variants}


def build(name):
    torch.manual_seed(SEED)
    if name == "gpt2":
        return GPT()
    import torchvision
    return torchvision.models.resnet50(num_classes=1000)


def optimizer(name, model):
    if name == "gpt2":
        return torch.optim.AdamW(model.parameters(), lr=6e-4,
                                 weight_decay=0.1)
    return torch.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)


def make_data(name):
    """One batch, seeded: random token ids and labels, or standard normal
    images and random class labels."""
    rng = np.random.default_rng(SEED)
    spec = SPECS[name]
    if name == "gpt2":
        shape = (spec.batch, GPTConfig.block_size)
        classes = GPTConfig.vocab_size
        inputs = rng.integers(0, classes, shape, dtype=np.int64)
    else:
        shape, classes = (spec.batch,), 1000
        inputs = rng.standard_normal((spec.batch, 3, 224, 224),
                                     dtype=np.float32)
    return {spec.input_name: inputs,
            "labels": rng.integers(0, classes, shape, dtype=np.int64)}


# --------------------------------------------------------------------------
# prepare (build machine)


def prepare(dlc_compile, out, names):
    """Writes NAME.LABEL.cuda.dlcm (dlc_modules) and prepare.json into
    `out`."""
    os.makedirs(out, exist_ok=True)
    prepared = {}
    with tempfile.TemporaryDirectory(prefix="dlc-bench-large-") as work:
        for name in names:
            prepared[name] = prepare_model(name, dlc_compile, out, work)
    with open(os.path.join(out, "prepare.json"), "w") as f:
        json.dump(prepared, f, indent=1)


def prepare_model(name, dlc_compile, out, work):
    spec = SPECS[name]
    onnx_path = os.path.join(work, name + ".onnx")
    model = build(name).train()
    example = torch.from_numpy(make_data(name)[spec.input_name])
    start = time.perf_counter()
    # Without autograd the trace holds no activations: the same graph, GPT-2
    # exports in 5 GB instead of 14. The tracer's warnings (a constant
    # scale, BatchNorm's counters left out) say nothing new.
    with torch.no_grad(), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        torch.onnx.export(model, (example,), onnx_path,
                          opset_version=spec.opset,
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False,
                          input_names=[spec.input_name],
                          output_names=["logits"])
    info = {"export_s": round(time.perf_counter() - start, 1),
              "onnx_bytes": os.path.getsize(onnx_path)}
    print(f"{name}: exported in {info['export_s']} s "
          f"({info['onnx_bytes'] / 1e6:.0f} MB)", flush=True)
    for precision, options in dlc_modules(spec).items():
        module = os.path.join(out, f"{name}.{precision}.cuda.dlcm")
        start = time.perf_counter()
        report = subprocess.run(
            [dlc_compile, onnx_path, "--train", "--loss", "cross_entropy",
             "--label-input", "labels", *spec.optimizer, "--batch-size",
             str(spec.batch), "--target", "cuda", *options,
             "--embed-parameters=false", "--report-memory", "-o", module],
            check=True, capture_output=True, text=True).stdout.strip()
        seconds = round(time.perf_counter() - start, 1)
        plan = re.search(r"^train_step: arena ([0-9.]+) MiB.*arguments "
                         r"([0-9.]+) MiB", report, re.M)
        info[precision] = {
            "compile_s": seconds, "module_bytes": os.path.getsize(module),
            "memory_report": report,
            "arena_bytes": round(float(plan.group(1)) * 2 ** 20),
            "arguments_bytes": round(float(plan.group(2)) * 2 ** 20)}
        print(f"{name} {precision}: compiled in {seconds} s, "
              f"{info[precision]['module_bytes'] / 1e6:.1f} MB\n{report}",
              flush=True)
    os.remove(onnx_path)
    return info


# --------------------------------------------------------------------------
# torch (GPU machine, one child process per model and mode)


def set_tf32(on):
    torch.backends.cuda.matmul.allow_tf32 = on
    torch.backends.cudnn.allow_tf32 = on


def torch_child(args):
    """Times args.model in args.mode for each of args.precisions with one
    model and optimizer; one JSON line per precision."""
    from torch.utils.flop_counter import FlopCounterMode
    spec = SPECS[args.model]
    with np.load(args.data) as f:
        x = torch.from_numpy(f[spec.input_name]).cuda()
        labels = torch.from_numpy(f["labels"]).cuda()
    model = build(args.model).cuda().train()
    opt = optimizer(args.model, model)

    # bf16: autocast, as a PyTorch user runs mixed precision, with TF32 for
    # what stays float32; ResNet-50 channels_last, the layout its tensor-core
    # convolutions want (precisions run in PRECISIONS order, bf16 last).
    autocast = {"on": False}

    def loss_of():
        with torch.autocast("cuda", dtype=torch.bfloat16,
                            enabled=autocast["on"]):
            out = model(x)
            return F.cross_entropy(out.reshape(-1, out.shape[-1]).float(),
                                   labels.reshape(-1))

    with FlopCounterMode(display=False) as counter:
        loss_of().backward()
    flops = counter.get_total_flops()

    def step():
        opt.zero_grad(set_to_none=True)
        loss = loss_of()
        loss.backward()
        opt.step()
        return loss

    warmup = WARMUP
    if args.mode == "compile":
        step = torch.compile(step)
        warmup += COMPILE_WARMUP
    for precision in args.precisions.split(","):
        set_tf32(precision in ("tf32", "bf16"))
        autocast["on"] = precision == "bf16"
        if precision == "bf16" and args.model == "resnet50":
            model.to(memory_format=torch.channels_last)
            x = x.contiguous(memory_format=torch.channels_last)
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()
        losses, times = [], []
        for _ in range(warmup + STEPS):
            torch.cuda.synchronize()
            begin = time.perf_counter()
            # As dlc's step returns its loss to the host.
            losses.append(step().item())
            times.append(time.perf_counter() - begin)
        print(json.dumps({
            "precision": precision,
            "ms": float(np.median(times[warmup:])) * 1e3,
            "peak_bytes": torch.cuda.max_memory_allocated(),
            "warmup_s": round(sum(times[:warmup]), 1),
            "loss_first": losses[0], "loss_last": losses[-1],
            "flops": flops}), flush=True)


def run_torch(name, mode, precisions, data, seconds):
    """The child's results by precision, and why any is missing."""
    if seconds is not None and seconds < 20:
        return {}, f"not started: {max(seconds, 0):.0f} s left of the budget"
    cmd = [sys.executable, os.path.abspath(__file__), "torch", "--model",
           name, "--mode", mode, "--data", data, "--precisions",
           ",".join(precisions)]
    # A session of its own, so that a timeout also ends its compile workers.
    child = subprocess.Popen(cmd, stdout=subprocess.PIPE, text=True,
                             start_new_session=True)
    try:
        out, _ = child.communicate(timeout=seconds)
        why = f"exit code {child.returncode}" if child.returncode else None
    except subprocess.TimeoutExpired:
        os.killpg(child.pid, signal.SIGKILL)
        out, _ = child.communicate()
        why = f"stopped at the end of the budget ({seconds:.0f} s)"
    except BaseException:
        # This run is being ended (bench_gpu.py turns SIGTERM into an exit).
        os.killpg(child.pid, signal.SIGKILL)
        raise
    results = {}
    for line in out.splitlines():
        if line.startswith("{"):
            r = json.loads(line)
            results[r["precision"]] = r
    return results, why or "no result"


# --------------------------------------------------------------------------
# run (GPU machine)


def run_dlc(runner, module, data, steps, profile=None):
    """Each step's milliseconds, from the runner's progress lines (one a
    step below 40 steps: 'step K/N loss L R samples/s elapsed E ETA T'),
    and its loss."""
    result = subprocess.run(
        [runner, module, "--data", data, "--steps", str(steps),
         "--no-shuffle", "--init-seed", INIT_SEED] +
        (["--profile", profile] if profile else []),
        capture_output=True, text=True, timeout=300)
    if result.returncode:
        raise RuntimeError(result.stderr.strip().splitlines()[-1])
    lines = re.findall(r"^step \d+/\d+ loss (\S+) (\S+) samples/s ",
                       result.stderr, re.M)
    if len(lines) != steps:
        raise RuntimeError(f"{len(lines)} progress lines for {steps} steps")
    return [float(rate) for _, rate in lines], [float(l) for l, _ in lines]


def read_profile(path):
    with open(path) as f:
        return {s["step"]: s for s in map(json.loads, f)
                if s["function"] == "train_step"}


def step_profile(one, more):
    """Each plan step's milliseconds in one step: the profile of 1 +
    PROFILE_STEPS steps less that of the first, slowest first."""
    steps = []
    for label, s in more.items():
        first = one.get(label, {"ms": 0.0, "calls": 0})
        calls = s["calls"] - first["calls"]
        if calls > 0:
            steps.append({"step": label, "kind": s["kind"],
                          "bytes": s.get("bytes", 0),
                          "ms": max(s["ms"] - first["ms"], 0.0) / calls,
                          # A convolution's measured engines (Dnn.h).
                          "engine_ms": s.get("engine_ms"),
                          "fastest_engine_ms": s.get("fastest_engine_ms")})
    return sorted(steps, key=lambda s: -s["ms"])


KINDS = {"KernelStep": "generated kernels", "MatmulStep": "matmuls",
         "ConvStep": "convolutions", "CopyStep": "copies"}


def profile_summary(steps, bandwidth):
    """Time by kind, and every generated kernel's bandwidth."""
    kinds = {k: {"ms": 0.0, "steps": 0} for k in KINDS.values()}
    kernels = []
    for s in steps:
        kind = kinds[KINDS[s["kind"]]]
        kind["ms"] += s["ms"]
        kind["steps"] += 1
        if s["kind"] == "KernelStep" and s["ms"] > 0:
            rate = s["bytes"] / (s["ms"] / 1e3)
            kernels.append({
                "step": s["step"], "bytes": s["bytes"], "ms": s["ms"],
                "GBps": rate / 1e9, "of_copy": rate / bandwidth,
                "flagged": (s["bytes"] >= FLAG_BYTES and
                            rate / bandwidth < FLAG_FRACTION)})
    # What deterministic convolution engines cost: the chosen engines'
    # measured time over the fastest's, nondeterministic ones included.
    measured = [s for s in steps if s.get("engine_ms") is not None]
    determinism = {"convolutions": len(measured),
                   "chosen_ms": sum(s["engine_ms"] for s in measured),
                   "fastest_ms": sum(s["fastest_engine_ms"]
                                     for s in measured)}
    return {"profiled_ms": sum(k["ms"] for k in kinds.values()),
            "kinds": kinds, "kernels": kernels, "determinism": determinism}


def measure_dlc(name, precision, bundle, data, work, out):
    runner = os.path.join(bundle, "bin", "dlc-runner")
    module = os.path.join(bundle, "bench", "large",
                          f"{name}.{precision}.cuda.dlcm")
    rates, losses = run_dlc(runner, module, data, WARMUP + STEPS)
    batch = SPECS[name].batch
    result = {"ms": float(np.median([batch / r * 1e3
                                     for r in rates[WARMUP:]])),
              "loss_first": losses[0], "loss_last": losses[-1]}
    first = os.path.join(work, "first.profile.jsonl")
    more = os.path.join(out, f"dlc-{name}-{precision}.profile.jsonl")
    run_dlc(runner, module, data, 1, first)
    run_dlc(runner, module, data, 1 + PROFILE_STEPS, more)
    result["profile"] = step_profile(read_profile(first), read_profile(more))
    return result


def run(names, bundle, out, work, rates, bandwidth, deadline, compile=True):
    """Measures `names` into `out` (bench_large.json, bench_large.txt, each
    dlc profile and kernel table). rates: matmul FLOP/s by precision;
    bandwidth: bytes/s of a device copy; deadline: time.time() by which
    the PyTorch children must end (None: no limit)."""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(bundle, "bench", "large", "prepare.json")) as f:
        prepared = json.load(f)
    report = {"date": str(datetime.date.today()),
              "device": torch.cuda.get_device_name(0),
              "torch": torch.__version__, "copy_GBps": bandwidth / 1e9,
              "matmul_TFLOPs": {p: r / 1e12 for p, r in rates.items()},
              "models": {name: {"prepare": prepared[name], "configs": {}}
                         for name in names}}
    try:
        measure(report, bundle, out, work, deadline, compile)
    finally:
        # What was measured, also when the run is ended early.
        finish(report, rates, bandwidth, out)


def record(report, name, config, result):
    report["models"][name]["configs"][config] = result
    print(f"{name} {config}: " + (f"{result['ms']:.1f} ms/step"
                                  if "ms" in result else result["skipped"]),
          flush=True)


def measure(report, bundle, out, work, deadline, compile):
    data = {}
    for name in report["models"]:
        data[name] = os.path.join(work, f"{name}.data.npz")
        np.savez(data[name], **make_data(name))
    # dlc and eager first; torch.compile (a minute or more a model) gets
    # what is left.
    for name, m in report["models"].items():
        for precision in dlc_modules(SPECS[name]):
            config = f"dlc {precision}"
            try:
                result = measure_dlc(name, precision, bundle, data[name],
                                     work, out)
                plan = m["prepare"][precision]
                result["peak_bytes"] = plan["arena_bytes"]
                result["arguments_bytes"] = plan["arguments_bytes"]
                record(report, name, config, result)
            except (RuntimeError, subprocess.TimeoutExpired) as e:
                record(report, name, config, {"skipped": f"failed: {e}"})
    # Eager in one child a model; torch.compile in one a model and
    # precision, TF32 first (the baseline's comparisons), so that the
    # on-disk kernel caches shorten the float32 compiles.
    runs = [(name, "eager", PRECISIONS) for name in data]
    if compile:
        runs += [(name, "compile", [precision])
                 for precision in ("tf32", "bf16", "fp32") for name in data]
    for name, mode, precisions in runs:
        left = None if deadline is None else deadline - time.time()
        results, why = run_torch(name, mode, precisions, data[name], left)
        for precision in precisions:
            if precision in results:
                report["models"][name]["flops"] = \
                    results[precision].pop("flops")
            record(report, name, f"{mode} {precision}",
                   results.get(precision, {"skipped": why}))


def finish(report, rates, bandwidth, out):
    """Ratios, floors and tables; bench_large.json and bench_large.txt."""
    text = [f"# {report['date']}, {report['device']}, PyTorch "
            f"{report['torch']}; device copy {bandwidth / 1e9:.0f} GB/s, "
            f"matmul float32 {rates['fp32'] / 1e12:.1f} TFLOP/s, TF32 "
            f"{rates['tf32'] / 1e12:.1f} TFLOP/s, bfloat16 "
            f"{rates['bf16'] / 1e12:.1f} TFLOP/s",
            "# Same random batch; dlc from seeded random weights "
            "(dlc-runner --init-seed), a step with its input upload; "
            "PyTorch with the batch on the device. peak: dlc's train_step "
            "arena (dlc-compile --report-memory; its arguments beside it), "
            "PyTorch's max_memory_allocated. dlc/this above 1: dlc is "
            "slower. floor: the step's matmul and convolution FLOPs over "
            "the matmul rate."]
    for name, m in report["models"].items():
        spec = SPECS[name]
        text += ["", f"{spec.title}; "
                 f"{m.get('flops', 0) / 1e12:.2f} TFLOP a step",
                 f"{'config':<14}{'ms/step':>9}{spec.unit + '/s':>12}"
                 f"{'peak GiB':>10}{'dlc/this':>10}{'floor ms':>10}"
                 f"{'loss':>8}  notes"]
        m["ratios"] = {}
        for precision in PRECISIONS:
            for mode in ("dlc", "eager", "compile"):
                config = f"{mode} {precision}"
                if config in m["configs"]:
                    text.append(table_row(m, config, spec, rates[precision]))
        for variant in spec.variants:
            if f"dlc {variant}" in m["configs"]:
                text.append(table_row(m, f"dlc {variant}", spec,
                                      rates[variant.split("-")[0]]))
        for precision in dlc_modules(spec):
            r = m["configs"].get(f"dlc {precision}", {})
            if "profile" in r:
                text += describe_profile(name, precision, r, bandwidth, out)
    with open(os.path.join(out, "bench_large.json"), "w") as f:
        json.dump(report, f, indent=1)
    with open(os.path.join(out, "bench_large.txt"), "w") as f:
        f.write("\n".join(text) + "\n")
    print("\n".join(text))


def table_row(m, config, spec, rate):
    """One row of a model's table; adds the throughput, the ratio to dlc
    and the floor to the config's results."""
    r = m["configs"][config]
    if "ms" not in r:
        return f"{config:<14}{'-':>9}  {r['skipped']}"
    mode, precision = config.split()
    r["per_s"] = spec.per_step / r["ms"] * 1e3
    dlc = m["configs"].get(f"dlc {precision}", {})
    ratio = floor = ""
    if mode != "dlc" and "ms" in dlc:
        r["dlc_over_this"] = dlc["ms"] / r["ms"]
        m["ratios"][f"dlc/{mode} {precision}"] = r["dlc_over_this"]
        ratio = f"{r['dlc_over_this']:.2f}"
    if m.get("flops"):
        r["floor_ms"] = m["flops"] / rate * 1e3
        floor = f"{r['floor_ms']:.1f}"
    notes = {"dlc": f"+ {r.get('arguments_bytes', 0) / 2 ** 30:.1f} GiB "
                    "arguments",
             "compile": f"warm-up {r.get('warmup_s')} s"}.get(mode, "")
    return (f"{config:<14}{r['ms']:>9.1f}{r['per_s']:>12,.0f}"
            f"{r['peak_bytes'] / 2 ** 30:>10.1f}{ratio:>10}{floor:>10}"
            f"{r['loss_first']:>8.3f}  {notes}").rstrip()


def kernel_table(kernels):
    lines = [f"{'ms':>9}{'MB':>10}{'GB/s':>8}{'of copy':>9}  step"]
    for k in kernels:
        lines.append(f"{k['ms']:>9.4f}{k['bytes'] / 1e6:>10.2f}"
                     f"{k['GBps']:>8.0f}{k['of_copy']:>9.0%}"
                     f"{' !' if k['flagged'] else '  '}{k['step']}")
    return lines


def determinism_line(d):
    """What restricting convolutions to deterministic engines costs."""
    if not d["convolutions"]:
        return "convolution engines: none measured"
    return (f"convolution engines, measured at session creation: "
            f"{d['chosen_ms']:.2f} ms a step on the deterministic engines "
            f"chosen, {d['fastest_ms']:.2f} ms on the fastest of all "
            f"({d['convolutions']} convolutions; the difference is what "
            f"determinism costs)")


def describe_profile(name, precision, r, bandwidth, out, top=12):
    """Time by kind, the slowest and the flagged kernels; every kernel goes
    to dlc-NAME-PRECISION.kernels.txt."""
    r["profile"] = summary = profile_summary(r["profile"], bandwidth)
    total = summary["profiled_ms"]
    kernels = summary["kernels"]
    flagged = [k for k in kernels if k["flagged"]]
    path = f"dlc-{name}-{precision}.kernels.txt"
    legend = (f"! moves >= {FLAG_BYTES / 1e6:.0f} MB at under "
              f"{FLAG_FRACTION:.0%} of a device copy")
    with open(os.path.join(out, path), "w") as f:
        f.write(f"# dlc {name} {precision}: every generated kernel of a "
                f"train_step, slowest first; {legend} "
                f"({bandwidth / 1e9:.0f} GB/s)\n")
        f.write("\n".join(kernel_table(kernels)) + "\n")
    shown = kernels[:top] + [k for k in flagged[:top]
                             if k not in kernels[:top]]
    return ["", f"dlc {name} {precision}: {r['ms']:.1f} ms a step as CUDA "
            f"graphs, {total:.1f} ms step by step: " +
            ", ".join(f"{kind} {v['ms']:.1f} ms ({v['ms'] / total:.0%}, "
                      f"{v['steps']} steps)"
                      for kind, v in summary["kinds"].items() if v["steps"]),
            determinism_line(summary["determinism"]),
            f"slowest and flagged kernels ({legend}: {len(flagged)} of "
            f"{len(kernels)}, {sum(k['ms'] for k in flagged):.1f} ms; all "
            f"in {path})"] + kernel_table(shown)


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("command", choices=["torch"])
    p.add_argument("--model", choices=MODELS, required=True)
    p.add_argument("--mode", choices=["eager", "compile"], required=True)
    p.add_argument("--data", required=True, help="the batch (.npz)")
    p.add_argument("--precisions", default="tf32,fp32")
    torch_child(p.parse_args())


if __name__ == "__main__":
    main()
