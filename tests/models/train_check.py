#!/usr/bin/python3
"""Whole-model training checks: dlc's gradients and training against PyTorch.

For each model of models.py (exported by torch.onnx in training mode, opset
17, no constant folding, so train-mode BatchNormalization stays in the graph
with trainable scale and bias), from the same initial weights (the ONNX
initializers are the torch module's state) and the same data:

  grad      one batch through `dlc-compile --train` and
            `dlc-run --interpret m.mlir --function loss_grad`: the loss, every
            parameter's gradient and the updated BatchNorm running statistics,
            against torch.autograd on model.double();
  sgd       `dlc-run --interpret --train` for 10 steps of SGD (lr 0.1),
  momentum  the same with momentum 0.9,
  adamw     the same with AdamW (lr 1e-3, weight decay 0.01):
            the 10 losses (each before its update), the logged lr, then the
            final parameters, BatchNorm running statistics, optimizer state
            (momentum_buffer, exp_avg, exp_avg_sq) and dlc.step from
            --save-state, against torch.optim on model.double() fed the same
            batches (step k: samples [k*B, (k+1)*B), --no-shuffle).
The loss is cross-entropy: 10 random classes for the image models and the
MLP, next-token prediction for the GPT (its last position labelled -100, the
ignore index).

Each comparison is of a tensor (a gradient, a parameter, a buffer) or a
scalar (a step's loss) against PyTorch in float64 ("ref64"), with the
tolerance of check_models.py, in the L2 norm over the tensor:

  ||dlc - ref64|| <= rtol * ||ref64|| + K * E + rtol * NEGLIGIBLE * S

  - rtol = 1e-4 (--rtol): the requirement, for well-conditioned quantities.
  - E = ||noise - ref64||, where `noise` is the same computation perturbed
    at the level of rounding, so E is how far rounding alone carries an
    implementation from the exact result:
      --dtype float32 (the models as exported): noise = PyTorch in float32
        ("torch32": same model, data and optimizer). dlc computes in float32
        where PyTorch does, so an equally accurate implementation is about E
        from ref64 too. This term is what keeps quantities that are exactly
        zero in exact arithmetic checkable (a convolution's bias followed by
        a train-mode BatchNorm has gradient 0, since BatchNorm subtracts the
        batch mean; float32 returns rounding noise there, so relative error
        means nothing), and what allows for trajectories that amplify
        rounding (see CTEST_CHECKS).
      --dtype float64 (the models exported after .double(): dlc computes in
        float64): noise = PyTorch float64 started from the initial weights
        times (1 + PERTURBATION * N(0, 1)), ~5 float64 ulps: the float64
        analogue, nonzero only where the computation is chaotic.
      --precision bf16 (the float32 models, dlc-compile/dlc-run
        --precision bf16: dlc-mixed-precision): noise = PyTorch float32
        under CPU autocast to bfloat16 ("autocast"), the same policy written
        independently; E is then bfloat16's own rounding error along the
        trajectory (8 significant bits: ~2^-9 relative per rounding), and
        the tolerance is K times it: an implementation of the same math with
        other roundings (which ops are low, where a cast falls) lands within
        a few E. As one quantity's E can be near zero by chance (a loss
        whose roundings cancel at one step), E is at least the median
        relative E of its kind (losses, gradients, parameters...) and at
        least bfloat16's unit roundoff 2^-9, each times the quantity's
        norm.
    K = REFERENCE_ERROR_FACTOR (4), as in check_models.py.
  - S = the largest ||ref64|| of the same kind (gradients, losses, ...): a
    floor 1e-10 of the largest, below which an error is no error (the
    exactly-zero gradients in float64, where E is ~0).

PASS/FAIL lines report, per kind, the largest relative error
||dlc - ref64|| / ||ref64|| over the quantities whose ref64 norm is above
NEGLIGIBLE times the largest of their kind, the noise reference's own
largest relative error beside it ("torch32" or "perturbed64"), and the
largest err/tol (<= 1 passes). A failure where the noise reference itself is
more than rtol from ref64 is marked ill-conditioned.

Prints `PASS model/check (...)` or `FAIL model/check: why` per check with the
seconds each dlc call took, then `N passed, M failed`; exits non-zero if any
check failed or none ran.

Usage: /usr/bin/python3 tests/models/train_check.py
           --dlc-compile build/bin/dlc-compile --dlc-run build/bin/dlc-run
           --work /tmp/train_check [--dtype float32|float64]
           [--precision fp32|bf16] [--models mlp,gpt] [--checks grad,adamw]
           [--all]
           [--jobs 2] [--steps 10] [--json results.json]

Without --models, --checks or --all it runs CTEST_CHECKS[dtype] (what ctest
runs); --all runs every model with every check.
"""

import argparse
import concurrent.futures
import copy
import hashlib
import json
import os
import subprocess
import sys
import time
import traceback
import warnings

import numpy as np
import onnx
import torch
import torch.nn.functional as F

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import export  # noqa: E402  (restore_initializers)
import models  # noqa: E402

# Training-mode tracing drops BatchNorm's num_batches_tracked += 1 and says so
# once per layer (see export.py).
warnings.filterwarnings("ignore", message=".*Removing mutation from node.*")

OPSET = 17
STEPS = 10
# K: how many times the rounding-noise distance dlc may be from ref64.
REFERENCE_ERROR_FACTOR = 4.0
# Norms below this fraction of the largest of their kind are left out of the
# reported relative error (they are still checked, see the floor).
NEGLIGIBLE = 1e-6
# --dtype float64's noise reference: relative perturbation of the weights.
PERTURBATION = 1e-15


def f32(x: float) -> float:
    """`x` rounded to float32, as a Python float."""
    return float(np.float32(x))


# Training batch per model. BatchNorm needs >= 2 samples. resnet18 and
# mobilenet_v2 downsample 32x, so their last BatchNorms normalize over
# batch x 1 pixel per channel and need ~8 samples to be well-conditioned
# (see models.py). mobilenet_v2 takes 16 because its float32 gradient is
# discontinuous within float32 rounding at some batches: its deep ReLU6
# layers see up to ~1e-4 absolute float32 error (train-mode BatchNorm over
# few values amplifies rounding), with thousands of pre-activations per
# layer a few lie that close to 0, and whichever implementation rounds one
# across the kink gets a gradient ~1% off. At batch 8, PyTorch float32
# itself is 1.6e-2 from float64 (a flip in features.11) and dlc 1.1e-2 (a
# flip in features.15: element (6, 294, 0, 0) of the input of
# features.15.conv.0.2, 5.2e-6 in float64; flipping that mask in the
# float64 reference brings dlc to 6.2e-5). At batch 16 neither crosses a
# kink (PyTorch float32 4.1e-5, dlc 2.0e-5 from float64).
BATCH = {"mlp": 8, "cnn_bn": 4, "resnet18": 8, "mobilenet_v2": 16, "gpt": 4,
         "encoder": 4, "deconv": 4}

# The optimizers: dlc-run's flags and the same torch.optim, given `r`, the
# rounding to the model's type. dlc keeps the learning rate and weight
# decay as state in the loss's type (dlc.lr, dlc.weight_decay: run-time
# inputs), so a float32 model's references use the float32 values
# (f32(0.1) = 0.10000000149): chaotic trajectories would otherwise turn
# that difference into a mismatch.
OPTIMIZERS = {
    "sgd": (["--optimizer", "sgd", "--lr", "0.1"],
            lambda p, r: torch.optim.SGD(p, lr=r(0.1))),
    "momentum": (["--optimizer", "sgd", "--lr", "0.1", "--momentum", "0.9"],
                 lambda p, r: torch.optim.SGD(p, lr=r(0.1), momentum=0.9)),
    "adamw": (["--optimizer", "adamw", "--lr", "0.001",
               "--weight-decay", "0.01"],
              lambda p, r: torch.optim.AdamW(p, lr=r(1e-3),
                                             weight_decay=r(0.01))),
}
# The learning rate dlc-run logs, before rounding to the model's type.
LOGGED_LR = {"sgd": 0.1, "momentum": 0.1, "adamw": 1e-3}


# The PyTorch reference type of --precision bf16: float32 under CPU
# autocast to bfloat16.
AUTOCAST = "autocast"
# bfloat16 keeps 8 significant bits: a value rounded to it is within 2^-9
# of its magnitude, the least noise a bfloat16 quantity has.
BFLOAT16_UNIT_ROUNDOFF = 2.0 ** -9


def torch_type(dtype):
    """The torch dtype a reference model holds its parameters in."""
    return torch.float32 if dtype == AUTOCAST else dtype


def rounding(dtype):
    """Rounds a Python float to the model type `dtype`'s precision."""
    return f32 if dtype == "float32" else float
ALL_CHECKS = ["grad"] + list(OPTIMIZERS)

# What ctest runs, per --dtype (docs/training.md has every combination's
# numbers). Left out are the trajectories that rounding alone makes
# irreproducible, where a check could only compare noise with noise:
# - float32, resnet18 and mobilenet_v2, every optimizer: PyTorch float32
#   ends 17% (AdamW) to 100% (SGD) away from PyTorch float64 after 10 steps
#   (train-mode BatchNorm over 8 or 16 values per channel in the last
#   stages, large steps, ReLU kinks crossed by rounding).
# - float64, mobilenet_v2 with SGD and momentum: lr 0.1 makes the trajectory
#   chaotic; PyTorch float64 from weights perturbed by 1e-15 is 1.6e-2 off
#   at step 6 and 16% at step 9, as is dlc.
CTEST_CHECKS = {
    "float32": {"mlp": ALL_CHECKS, "cnn_bn": ALL_CHECKS, "gpt": ALL_CHECKS,
                "encoder": ALL_CHECKS, "deconv": ALL_CHECKS,
                "resnet18": ["grad"],
                "mobilenet_v2": ["grad"]},
    "float64": {"mlp": ALL_CHECKS, "cnn_bn": ALL_CHECKS, "gpt": ALL_CHECKS,
                "encoder": ALL_CHECKS, "deconv": ALL_CHECKS,
                "resnet18": ALL_CHECKS,
                "mobilenet_v2": ["grad", "adamw"]},
    # --precision bf16 (against CPU autocast): float32's plan, for the same
    # reason (resnet18's SGD trajectory is 79% from float64 under autocast
    # itself by step 5), without mobilenet_v2: PyTorch 1.13 has no bfloat16
    # backward of its ReLU6 on the CPU ("hardshrink_backward_cpu" not
    # implemented), so there is no autocast reference.
    # deconv without AdamW: the second moments of its transposed
    # convolution's weight (norm 3.2e-7) are 0.35% from float64 under
    # autocast itself, and dlc, with other roundings, lands at 1.1x the
    # tolerance (1.6%, seen 2026-11-27): ill-conditioned, not wrong (its
    # losses and parameters pass at 0.06x and 0.15x of theirs).
    "bf16": {"mlp": ALL_CHECKS, "cnn_bn": ALL_CHECKS, "gpt": ALL_CHECKS,
             "encoder": ALL_CHECKS, "deconv": ["grad", "sgd", "momentum"],
             "resnet18": ["grad"]},
}


# ---------------------------------------------------------------------------
# The exported model and its data.


def fingerprint(dtype: str) -> str:
    """Hash of what determines the exported files."""
    h = hashlib.sha256()
    for name in ("models.py", "export.py", "train_check.py"):
        with open(os.path.join(HERE, name), "rb") as f:
            h.update(f.read())
    h.update(torch.__version__.encode())
    h.update(onnx.__version__.encode())
    h.update(dtype.encode())
    return h.hexdigest()


def build(name: str, dtype: torch.dtype,
          perturb: float = 0.0) -> torch.nn.Module:
    """Model `name` for the PyTorch references, in `dtype`, train mode.

    ONNX stores BatchNormalization's momentum and epsilon and
    LayerNormalization's epsilon as float32 attributes, so the exported model
    updates running statistics with 1 - f32(0.9) = 0.10000002384 rather than
    PyTorch's 0.1 (and normalizes with f32(1e-5)). The references use the
    values the file holds: the difference (2.4e-7 relative in each running
    statistics update) is far below the requirement, but it would show in a
    float64 comparison.

    `perturb` multiplies every parameter by (1 + perturb * N(0, 1)), drawn
    from a fixed seed (the float64 noise reference).
    """
    model = models.build(name).to(torch_type(dtype)).train()
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.momentum = 1.0 - f32(1.0 - m.momentum)
            m.eps = f32(m.eps)
        elif isinstance(m, torch.nn.LayerNorm):
            m.eps = f32(m.eps)
    if perturb:
        gen = torch.Generator().manual_seed(0)
        with torch.no_grad():
            for p in model.parameters():
                p.mul_(1 + perturb * torch.randn(p.shape, generator=gen,
                                                 dtype=p.dtype))
    return model


def make_data(name: str, samples: int) -> dict:
    """`samples` inputs (keyed by ONNX input name) and their "labels"."""
    spec = models.MODELS[name]
    data = models.make_inputs(name, samples)
    if name == "gpt":
        # Next-token prediction; the last position has no next token and is
        # ignored (cross_entropy's default ignore index).
        tokens = data["tokens"]
        labels = np.full_like(tokens, -100)
        labels[:, :-1] = tokens[:, 1:]
    else:
        rng = np.random.default_rng(200 + spec.seed)
        labels = rng.integers(0, 10, size=samples, dtype=np.int64)
    data["labels"] = labels
    return data


def prepare(name: str, work: str, dtype: str, steps: int) -> str:
    """Exports `name` and writes its data under `work` unless they are
    current. Returns the file base (base.onnx, base.data.npz)."""
    base = os.path.join(work, f"{name}_{dtype}")
    stamp = base + ".stamp"
    key = f"{fingerprint(dtype)}/{steps}"
    if all(os.path.exists(base + ext)
           for ext in (".stamp", ".onnx", ".data.npz")):
        with open(stamp) as f:
            if f.read() == key:
                return base
    spec = models.MODELS[name]
    fresh = models.build(name).to(torch.float64 if dtype == "float64"
                                  else torch.float32).train()
    state = copy.deepcopy(fresh.state_dict())
    # Same values in both types: the inputs are drawn in float32.
    data = {k: v.astype(dtype) if v.dtype.kind == "f" else v
            for k, v in make_data(name, steps * BATCH[name]).items()}
    sample = tuple(torch.from_numpy(data[n][:BATCH[name]])
                   for n in spec.input_names)
    dynamic_axes = {n: {0: "batch"}
                    for n in spec.input_names + spec.output_names}
    with torch.no_grad():
        torch.onnx.export(fresh, sample, base + ".onnx",
                          input_names=spec.input_names,
                          output_names=spec.output_names,
                          dynamic_axes=dynamic_axes, opset_version=OPSET,
                          training=torch.onnx.TrainingMode.TRAINING,
                          do_constant_folding=False)
    proto = onnx.load(base + ".onnx")
    # The trace ran a train-mode forward, which moved the running stats.
    if export.restore_initializers(proto, state):
        onnx.save(proto, base + ".onnx")
    np.savez(base + ".data.npz", **data)
    with open(stamp, "w") as f:
        f.write(key)
    return base


# ---------------------------------------------------------------------------
# PyTorch.


def torch_inputs(name: str, data: dict, rows: slice, dtype):
    out = []
    for n in models.MODELS[name].input_names:
        t = torch.from_numpy(data[n][rows])
        out.append(t.to(torch_type(dtype)) if t.is_floating_point() else t)
    return out


def torch_loss(model, name, data, rows, dtype):
    """PyTorch's cross_entropy with the classes on the last axis (forward
    and loss under autocast for AUTOCAST, backward outside it, as PyTorch's
    documentation has it)."""
    with torch.autocast("cpu", dtype=torch.bfloat16,
                        enabled=dtype == AUTOCAST):
        out = model(*torch_inputs(name, data, rows, dtype))
        if dtype == AUTOCAST:
            out = out.float()
        labels = torch.from_numpy(data["labels"][rows])
        return F.cross_entropy(out.reshape(-1, out.shape[-1]),
                               labels.reshape(-1))


def numpy64(t: torch.Tensor) -> np.ndarray:
    return t.detach().double().numpy().copy()


def running_stats(model) -> dict:
    return {n: numpy64(b) for n, b in model.named_buffers()
            if n.endswith(("running_mean", "running_var"))}


def torch_gradients(name, data, batch, dtype, perturb=0.0):
    """Loss of the first batch, the parameters' gradients, the running
    statistics after that forward."""
    model = build(name, dtype, perturb)
    loss = torch_loss(model, name, data, slice(0, batch), dtype)
    loss.backward()
    grads = {n: numpy64(p.grad) for n, p in model.named_parameters()}
    return {"loss": np.array(float(loss))}, grads, running_stats(model)


def torch_training(name, data, batch, steps, optimizer, hyper, dtype,
                   perturb=0.0):
    """The losses of `steps` steps, then the final parameters, running
    statistics and optimizer state (named as dlc's --save-state names
    them). `hyper` rounds the hyperparameters as dlc's model type does."""
    model = build(name, dtype, perturb)
    params = dict(model.named_parameters())
    opt = OPTIMIZERS[optimizer][1](list(params.values()), hyper)
    samples = data["labels"].shape[0]
    losses = []
    for k in range(steps):
        start = (k * batch) % samples
        opt.zero_grad()
        loss = torch_loss(model, name, data, slice(start, start + batch),
                          dtype)
        loss.backward()
        opt.step()
        losses.append(float(loss))
    final = {n: numpy64(p) for n, p in params.items()}
    final.update(running_stats(model))
    for n, p in params.items():
        for key, value in opt.state[p].items():
            if torch.is_tensor(value) and value.dim() > 0:
                final[f"optimizer.{n}.{key}"] = numpy64(value)
    return np.array(losses), final


def references(fn, args):
    """(ref64, noise): `fn(dtype, perturb)` in float64, and the noise
    reference of --dtype (see the module's docstring)."""
    ref64 = fn(torch.float64, 0.0)
    if args.dtype == "float64":
        return ref64, fn(torch.float64, PERTURBATION)
    if args.precision == "bf16":
        return ref64, fn(AUTOCAST, 0.0)
    return ref64, fn(torch.float32, 0.0)


# ---------------------------------------------------------------------------
# dlc.


class ToolError(Exception):
    pass


def tail(text: str, lines: int = 8) -> str:
    kept = [ln for ln in text.strip().splitlines() if ln.strip()][-lines:]
    return " | ".join(kept) if kept else "(no output)"


def run_tool(cmd, args, timings, label):
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              timeout=args.timeout)
    except subprocess.TimeoutExpired:
        raise ToolError(f"{label}: timed out after {args.timeout:g} s")
    except OSError as e:
        raise ToolError(f"{label}: cannot run {cmd[0]}: {e}")
    timings[label] = time.monotonic() - start
    if proc.returncode != 0:
        output = tail(proc.stderr or proc.stdout)
        raise ToolError(f"{label}: {os.path.basename(cmd[0])} exited with "
                        f"{proc.returncode}: {output}")
    return proc


def read_npz(path: str) -> dict:
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


# ---------------------------------------------------------------------------
# Comparison.


class Comparison:
    """Named comparisons of dlc against ref64 (the tolerance above)."""

    def __init__(self, rtol: float, noise_name: str,
                 kind_noise: bool = False):
        self.rtol = rtol
        self.noise_name = noise_name
        # With bfloat16, a quantity's own noise can be near zero by chance
        # where rounding carries dlc's elsewhere: each quantity's noise is
        # then at least the median relative noise of its kind, and bfloat16's
        # unit roundoff, times its norm.
        self.kind_noise = kind_noise
        # (kind, name, ||dlc - ref64||, ||ref64||, ||noise - ref64||)
        self.rows = []
        self.problems = []

    def add(self, kind, name, got, ref64, noise):
        got = np.asarray(got, dtype=np.float64)
        ref64 = np.asarray(ref64, dtype=np.float64)
        noise = np.asarray(noise, dtype=np.float64)
        if got.shape != ref64.shape:
            self.problems.append(f"{kind} '{name}' has shape "
                                 f"{list(got.shape)}, expected "
                                 f"{list(ref64.shape)}")
            return
        if not np.all(np.isfinite(got)):
            self.problems.append(f"{kind} '{name}' is not finite")
            return
        self.rows.append((kind, name, float(np.linalg.norm(got - ref64)),
                          float(np.linalg.norm(ref64)),
                          float(np.linalg.norm(noise - ref64))))

    def problem(self, what: str):
        self.problems.append(what)

    def _scale(self, kind):
        return max(r[3] for r in self.rows if r[0] == kind)

    def _median_noise(self, kind):
        rel = [r[4] / r[3] for r in self.rows if r[0] == kind and r[3] > 0]
        return float(np.median(rel)) if rel else 0.0

    def tolerance(self, row):
        kind, _, _, norm, noise = row
        if self.kind_noise:
            noise = max(noise, self._median_noise(kind) * norm,
                        BFLOAT16_UNIT_ROUNDOFF * norm)
        return (self.rtol * norm + REFERENCE_ERROR_FACTOR * noise
                + self.rtol * NEGLIGIBLE * self._scale(kind))

    def failures(self):
        out = list(self.problems)
        for row in self.rows:
            kind, name, err, norm, noise = row
            tol = self.tolerance(row)
            if err <= tol:
                continue
            why = (f"{kind} '{name}': ||dlc - ref64|| = {err:.3e} (relative "
                   f"{err / norm if norm else np.inf:.2e}) > tolerance "
                   f"{tol:.3e} = {self.rtol:g} x {norm:.3e} + "
                   f"{REFERENCE_ERROR_FACTOR:g} x {noise:.3e} "
                   f"({self.noise_name}'s error) + floor")
            if noise > self.rtol * norm:
                why += (f" [ill-conditioned: {self.noise_name} is "
                        f"{noise / norm if norm else np.inf:.2e} relative "
                        f"from ref64 here]")
            out.append(why)
        return out

    def summary(self, kind):
        """The worst relative errors of `kind` and its worst err/tol."""
        rows = [r for r in self.rows if r[0] == kind]
        scale = self._scale(kind)
        regular = [r for r in rows if r[3] > NEGLIGIBLE * scale] or rows

        def rel(r, i):
            return r[i] / r[3] if r[3] else (0.0 if r[i] == 0 else np.inf)

        worst = max(regular, key=lambda r: rel(r, 2))
        return {"n": len(rows), "rel": rel(worst, 2), "worst": worst[1],
                "noise_rel": max(rel(r, 4) for r in regular),
                "ratio": max(r[2] / self.tolerance(r) for r in rows)}

    def kinds(self):
        return list(dict.fromkeys(r[0] for r in self.rows))

    def describe(self):
        parts = []
        for kind in self.kinds():
            s = self.summary(kind)
            parts.append(f"{kind} x{s['n']}: max rel err {s['rel']:.2e} "
                         f"({s['worst']}), {self.noise_name} "
                         f"{s['noise_rel']:.2e}, err/tol {s['ratio']:.3f}")
        return "; ".join(parts)

    def to_json(self):
        return {kind: self.summary(kind) for kind in self.kinds()}


# ---------------------------------------------------------------------------
# The checks.


def check_grad(name, base, data, args, timings, cmp):
    batch = BATCH[name]
    out = base + ".grad"
    np.savez(out + ".batch.npz",
             **{n: data[n][:batch]
                for n in models.MODELS[name].input_names + ["labels"]})
    # The optimizer does not change loss_grad.
    run_tool([args.dlc_compile, base + ".onnx", "--train",
              "--loss", "cross_entropy", *OPTIMIZERS["sgd"][0],
              "--precision", args.precision,
              "--batch-size", str(batch), "--emit=mlir", "-o",
              out + ".mlir"], args, timings, "compile")
    if os.path.exists(out + ".npz"):
        os.remove(out + ".npz")
    run_tool([args.dlc_run, "--interpret", out + ".mlir", "--function",
              "loss_grad", "--inputs", out + ".batch.npz", "--outputs",
              out + ".npz"], args, timings, "loss_grad")
    got = read_npz(out + ".npz")
    ref64, noise = references(
        lambda dtype, perturb: torch_gradients(name, data, batch, dtype,
                                               perturb), args)
    for kind, ref, nz in zip(("loss", "grad", "stat"), ref64, noise):
        for n in ref:
            if n not in got:
                cmp.problem(f"loss_grad returned no {kind} '{n}'")
            else:
                cmp.add(kind, n, got[n], ref[n], nz[n])
    known = set(ref64[0]) | set(ref64[1]) | set(ref64[2])
    extra = sorted(set(got) - known)
    if extra:
        cmp.problem(f"loss_grad returned results PyTorch has no parameter or "
                    f"buffer for: {', '.join(extra)}")


def check_training(name, optimizer, base, data, args, timings, cmp):
    batch = BATCH[name]
    out = f"{base}.{optimizer}"
    for path in (out + ".jsonl", out + ".state.npz"):
        if os.path.exists(path):
            os.remove(path)
    run_tool([args.dlc_run, "--interpret", "--train", base + ".onnx",
              "--loss", "cross_entropy", *OPTIMIZERS[optimizer][0],
              "--precision", args.precision,
              "--batch-size", str(batch), "--data", base + ".data.npz",
              "--steps", str(args.steps), "--no-shuffle", "--log",
              out + ".jsonl", "--save-state", out + ".state.npz"],
             args, timings, "train")
    with open(out + ".jsonl") as f:
        log = [json.loads(line) for line in f if line.strip()]
    state = read_npz(out + ".state.npz")
    (losses64, final64), (noise_losses, noise_final) = references(
        lambda dtype, perturb: torch_training(
            name, data, batch, args.steps, optimizer, rounding(args.dtype),
            dtype, perturb), args)

    steps = [e.get("step") for e in log]
    if steps != list(range(args.steps)):
        cmp.problem(f"the log has steps {steps}, expected 0..{args.steps - 1}")
    else:
        for k, entry in enumerate(log):
            loss = entry.get("loss")
            cmp.add("loss", f"step {k}", np.nan if loss is None else loss,
                    losses64[k], noise_losses[k])
        lrs = [e.get("lr") for e in log]
        want = rounding(args.dtype)(LOGGED_LR[optimizer])
        if not all(isinstance(lr, float) and abs(lr - want) <= 1e-8 * want
                   for lr in lrs):
            cmp.problem(f"the log's lr is {lrs}, expected {want:.9g}")
    if "dlc.step" not in state or int(state["dlc.step"]) != args.steps:
        cmp.problem(f"--save-state's dlc.step is {state.get('dlc.step')}, "
                    f"expected {args.steps}")
    for n in final64:
        if n not in state:
            cmp.problem(f"--save-state has no '{n}'")
            continue
        kind = ("opt" if n.startswith("optimizer.") else
                "stat" if n.endswith(("running_mean", "running_var"))
                else "param")
        cmp.add(kind, n, state[n], final64[n], noise_final[n])


def run_model(name, checks, args):
    """Runs `checks` of model `name`; returns [(ok, line, record)]."""
    # Two models run at once on two cores.
    torch.set_num_threads(1)
    try:
        base = prepare(name, args.work, args.dtype, args.steps)
        data = read_npz(base + ".data.npz")
    except Exception as e:  # an export failure fails every check
        traceback.print_exc()
        why = f"{type(e).__name__}: {str(e).strip()[:300]}"
        return [(False, f"FAIL {name}/{c}: cannot export: {why}", None)
                for c in checks]
    noise_name = ("perturbed64" if args.dtype == "float64" else
                  "autocast" if args.precision == "bf16" else "torch32")
    results = []
    for check in checks:
        timings = {}
        cmp = Comparison(args.rtol, noise_name, args.precision == "bf16")
        start = time.monotonic()
        try:
            if check == "grad":
                check_grad(name, base, data, args, timings, cmp)
            else:
                check_training(name, check, base, data, args, timings, cmp)
        except (ToolError, OSError, ValueError, KeyError) as e:
            results.append((False, f"FAIL {name}/{check}: {e}", None))
            continue
        seconds = time.monotonic() - start
        tools = ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())
        bad = cmp.failures()
        if bad:
            more = f" (and {len(bad) - 1} more)" if len(bad) > 1 else ""
            line = f"FAIL {name}/{check}: {bad[0]}{more}; {cmp.describe()}"
        else:
            line = (f"PASS {name}/{check} ({cmp.describe()}; {tools}; "
                    f"{seconds:.1f} s in all)")
        record = {"model": name, "check": check, "dtype": args.dtype,
                  "precision": args.precision,
                  "batch": BATCH[name], "steps": args.steps,
                  "seconds": round(seconds, 2),
                  "dlc_seconds": {k: round(v, 2) for k, v in timings.items()},
                  "errors": cmp.to_json(), "failures": bad}
        results.append((not bad, line, record))
    return results


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--dlc-compile", required=True, help="path to dlc-compile")
    p.add_argument("--dlc-run", required=True, help="path to dlc-run")
    p.add_argument("--work", required=True,
                   help="directory for the exported models and results")
    p.add_argument("--dtype", choices=["float32", "float64"],
                   default="float32",
                   help="the exported models' type (default float32)")
    p.add_argument("--precision", choices=["fp32", "bf16"], default="fp32",
                   help="bf16: dlc with --precision bf16 against PyTorch "
                        "CPU autocast (float32 models only)")
    p.add_argument("--models", default=None,
                   help="comma-separated models (default: ctest's plan)")
    p.add_argument("--checks", default=None,
                   help=f"comma-separated, of {','.join(ALL_CHECKS)}")
    p.add_argument("--all", action="store_true",
                   help="every model with every check")
    p.add_argument("--steps", type=int, default=STEPS)
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--jobs", type=int, default=2,
                   help="models checked at once (default 2)")
    p.add_argument("--timeout", type=float, default=900,
                   help="seconds allowed per dlc call")
    p.add_argument("--json", default=None,
                   help="also write every check's numbers to this file")
    args = p.parse_args(argv)

    for tool in (args.dlc_compile, args.dlc_run):
        if not (os.path.isfile(tool) and os.access(tool, os.X_OK)):
            p.error(f"'{tool}' is not an executable file")
    if args.steps < 1:
        p.error("--steps must be at least 1")
    if args.precision == "bf16" and args.dtype != "float32":
        p.error("--precision bf16 needs --dtype float32")
    args.work = os.path.abspath(args.work)
    os.makedirs(args.work, exist_ok=True)

    if args.all or args.models or args.checks:
        names = [m for m in (args.models or ",".join(models.MODELS)).split(",")
                 if m]
        checks = [c for c in (args.checks or ",".join(ALL_CHECKS)).split(",")
                  if c]
        plan = {m: checks for m in names}
    else:
        plan = CTEST_CHECKS["bf16" if args.precision == "bf16"
                            else args.dtype]
    for m, cs in plan.items():
        if m not in models.MODELS:
            p.error(f"unknown model '{m}' (known: {', '.join(models.MODELS)})")
        for c in cs:
            if c not in ALL_CHECKS:
                p.error(f"unknown check '{c}' "
                        f"(known: {', '.join(ALL_CHECKS)})")

    start = time.monotonic()
    passed = failed = 0
    records = []
    # Processes, not threads: the PyTorch references are CPU-bound. The two
    # big models first, so that they do not end up one after the other.
    order = sorted(plan, key=lambda m: m not in ("resnet18", "mobilenet_v2"))
    with concurrent.futures.ProcessPoolExecutor(max(1, args.jobs)) as pool:
        futures = {m: pool.submit(run_model, m, plan[m], args) for m in order}
        for m in plan:  # report in a stable order
            for ok, line, record in futures[m].result():
                print(line, flush=True)
                passed += ok
                failed += not ok
                if record:
                    records.append(record)
    print(f"{passed} passed, {failed} failed "
          f"({time.monotonic() - start:.0f} s)")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(records, f, indent=1)
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
