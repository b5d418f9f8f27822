#!/usr/bin/python3
"""Whole-model training checks: dlc's gradients and training runs against PyTorch.

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
            the 10 losses (each before its update), then the final
            parameters, BatchNorm running statistics and optimizer state
            (momentum buffers, exp_avg, exp_avg_sq) from --save-state, against
            torch.optim on model.double() fed the same batches.

Each comparison is of a tensor (a gradient, a parameter, a buffer) or a
scalar (a step's loss) against PyTorch in float64 ("ref64"), with the
tolerance of check_models.py, in the L2 norm over the tensor:

  ||dlc - ref64|| <= rtol * ||ref64|| + K * ||torch32 - ref64||

  - rtol = 1e-4 (--rtol): the requirement, for well-conditioned quantities.
  - torch32 is the same computation by PyTorch in float32 (same model, same
    data, same optimizer), so ||torch32 - ref64|| is how far float32 rounding
    alone carries an implementation from the exact result. dlc computes in
    float32 where PyTorch does (with float64 accumulation in its reductions),
    so an equally accurate implementation is about that far too.
    K = REFERENCE_ERROR_FACTOR (4), as in check_models.py. The term is what
    keeps quantities that are exactly zero in exact arithmetic checkable: a
    convolution's bias followed by a train-mode BatchNorm has gradient 0
    (BatchNorm subtracts the batch mean), PyTorch float64 returns ~1e-16
    and both float32 implementations return rounding noise (~1e-7 of the
    weights' gradients), so a relative error is meaningless there, and
    float32 noise is all that can be asked for. It is also what makes
    mobilenet_v2's early layers checkable (see the notes at BATCH).

The relative error reported per check is the largest ||dlc - ref64|| /
||ref64|| over the quantities whose ref64 norm is not negligible (above
NEGLIGIBLE times the largest of their kind), with PyTorch float32's own
relative error beside it; err/tol is the largest ratio to the tolerance
(<= 1 passes).

Prints `PASS model/check (...)` or `FAIL model/check: why` per check and the
wall time of each dlc call, then `N passed, M failed`; exits non-zero if any
check failed or none ran.

Usage: /usr/bin/python3 tests/models/train_check.py
           --dlc-compile build/bin/dlc-compile --dlc-run build/bin/dlc-run
           --work /tmp/train_check [--models mlp,gpt] [--checks grad,adamw]
           [--all] [--jobs 2] [--steps 10] [--dtype float32|float64]

Without --models/--checks it runs CTEST_CHECKS (what ctest runs); --all runs
every model with every check.
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

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import export  # noqa: E402  (restore_initializers)
import models  # noqa: E402

# Imported after models (which imports torch) only to keep the order obvious.
import torch  # noqa: E402
import torch.nn.functional as F  # noqa: E402

# Training-mode tracing drops BatchNorm's num_batches_tracked += 1 and says so
# once per layer (see export.py).
warnings.filterwarnings("ignore", message=".*Removing mutation from node.*")

OPSET = 17
STEPS = 10
REFERENCE_ERROR_FACTOR = 4.0
# A reference norm below this fraction of the largest of its kind (e.g. the
# gradient of a bias followed by train-mode BatchNorm, exactly 0) is left out
# of the reported relative error; it is still checked by the tolerance.
NEGLIGIBLE = 1e-6

def f32(x: float) -> float:
    """`x` rounded to float32, as a Python float."""
    return float(np.float32(x))


# Training batch per model. BatchNorm needs >= 2 samples. resnet18 and
# mobilenet_v2 downsample 32x, so their last BatchNorms normalize over
# batch x 1 pixel per channel and need ~8 samples to be well-conditioned
# (see models.py). mobilenet_v2 takes 16: its float32 gradient is
# discontinuous within float32 rounding at some batches. Its deep ReLU6
# layers see ~1e-4 absolute float32 error (train-mode BatchNorm over few
# values amplifies rounding), and with thousands of pre-activations per
# layer a few lie that close to 0. Whichever implementation rounds one
# across the kink gets a gradient a few % off: at batch 8, PyTorch float32
# itself is 1.6e-2 from float64 (one flip in features.11) and dlc 4.5e-2
# (one flip in features.15, element (6, 294, 0, 0), pre-activation
# 5.2e-6 in float64; flipping that mask in the float64 reference brings
# dlc to 7.7e-5). At batch 16 neither crosses a kink (PyTorch float32 is
# 3.6e-5 from float64).
BATCH = {"mlp": 8, "cnn_bn": 4, "resnet18": 8, "mobilenet_v2": 16, "gpt": 4}

# The optimizers: dlc-run's flags and the same torch.optim. dlc keeps the
# learning rate and weight decay in float32 state (dlc.lr,
# dlc.weight_decay: a schedule updates them at run time) whatever the
# model's type, so the references use the float32 values too (0.1 is
# 0.10000000149 in float32; see build() for why it matters).
OPTIMIZERS = {
    "sgd": (["--optimizer", "sgd", "--lr", "0.1"],
            lambda p: torch.optim.SGD(p, lr=f32(0.1))),
    "momentum": (["--optimizer", "sgd", "--lr", "0.1", "--momentum", "0.9"],
                 lambda p: torch.optim.SGD(p, lr=f32(0.1), momentum=0.9)),
    "adamw": (["--optimizer", "adamw", "--lr", "0.001",
               "--weight-decay", "0.01"],
              lambda p: torch.optim.AdamW(p, lr=f32(1e-3),
                                          weight_decay=f32(0.01))),
}
# The learning rate dlc-run logs per step.
LOGGED_LR = {"sgd": f32(0.1), "momentum": f32(0.1), "adamw": f32(1e-3)}
ALL_CHECKS = ["grad"] + list(OPTIMIZERS)

# What ctest runs (all of it: measured in docs/training.md).
CTEST_CHECKS = {m: list(ALL_CHECKS) for m in models.MODELS}


# ---------------------------------------------------------------------------
# Files: the exported model and its data.


def fingerprint(dtype: str) -> str:
    """Hash of what determines the exported files."""
    h = hashlib.sha256()
    for name in ("models.py", "export.py", "train_check.py"):
        with open(os.path.join(HERE, name), "rb") as f:
            h.update(f.read())
    h.update(torch.__version__.encode())
    h.update(dtype.encode())
    return h.hexdigest()


def build(name: str, dtype: torch.dtype) -> torch.nn.Module:
    """Model `name` for the PyTorch references, in `dtype`, train mode.

    ONNX stores BatchNormalization's momentum and epsilon and
    LayerNormalization's epsilon as float32 attributes, so the exported model
    computes with 1 - f32(0.9) = 0.10000002384 rather than PyTorch's 0.1
    (and f32(1e-5)). The references use the values the file holds: the
    difference (2.4e-7 relative in each running-statistics update) is far
    below the 1e-4 requirement, but training trajectories that amplify
    differences (see docs/training.md) would turn it into a mismatch that
    says nothing about dlc.
    """
    model = models.build(name).to(dtype).train()
    for m in model.modules():
        if isinstance(m, torch.nn.modules.batchnorm._BatchNorm):
            m.momentum = 1.0 - f32(1.0 - m.momentum)
            m.eps = f32(m.eps)
        elif isinstance(m, torch.nn.LayerNorm):
            m.eps = f32(m.eps)
    return model


def make_data(name: str, samples: int):
    """`samples` inputs (keyed by ONNX input name) and their labels."""
    spec = models.MODELS[name]
    data = models.make_inputs(name, samples)
    rng = np.random.default_rng(200 + spec.seed)
    if name == "gpt":
        # Next-token prediction; the last position has no next token and is
        # ignored (cross_entropy's default ignore index).
        tokens = data["tokens"]
        labels = np.full_like(tokens, -100)
        labels[:, :-1] = tokens[:, 1:]
    else:
        labels = rng.integers(0, 10, size=samples, dtype=np.int64)
    data["labels"] = labels
    return data


def prepare(name: str, work: str, dtype: str, steps: int) -> str:
    """Exports `name` and writes its data under `work` unless current.
    Returns the file base (base.onnx, base.data.npz)."""
    base = os.path.join(work, f"{name}_{dtype}")
    stamp = base + ".stamp"
    key = fingerprint(dtype) + f"/{steps}"
    if os.path.exists(stamp) and os.path.exists(base + ".onnx") and \
            os.path.exists(base + ".data.npz"):
        with open(stamp) as f:
            if f.read() == key:
                return base
    spec = models.MODELS[name]
    tdtype = torch.float64 if dtype == "float64" else torch.float32
    fresh = build(name, tdtype)
    state = copy.deepcopy(fresh.state_dict())
    data = make_data(name, steps * BATCH[name])
    if dtype == "float64":
        data = {k: v.astype(np.float64) if v.dtype.kind == "f" else v
                for k, v in data.items()}
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
    import onnx
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


def torch_inputs(name: str, data: dict, rows: slice, dtype: torch.dtype):
    out = []
    for n in models.MODELS[name].input_names:
        t = torch.from_numpy(data[n][rows])
        out.append(t.to(dtype) if t.is_floating_point() else t)
    return out


def torch_loss(model, name, data, rows, dtype):
    out = model(*torch_inputs(name, data, rows, dtype))
    labels = torch.from_numpy(data["labels"][rows])
    return F.cross_entropy(out.reshape(-1, out.shape[-1]), labels.reshape(-1))


def buffers(model) -> dict:
    return {n: b.detach().double().numpy().copy()
            for n, b in model.named_buffers()
            if n.endswith(("running_mean", "running_var"))}


def torch_gradients(name: str, data: dict, batch: int, dtype: torch.dtype):
    """Loss, parameter gradients and running stats after one forward."""
    model = build(name, dtype)
    loss = torch_loss(model, name, data, slice(0, batch), dtype)
    loss.backward()
    grads = {n: p.grad.detach().double().numpy().copy()
             for n, p in model.named_parameters()}
    return float(loss), grads, buffers(model)


def torch_training(name: str, data: dict, batch: int, steps: int,
                   optimizer: str, dtype: torch.dtype):
    """Losses of `steps` steps, then params, running stats, optimizer state."""
    model = build(name, dtype)
    params = dict(model.named_parameters())
    opt = OPTIMIZERS[optimizer][1](list(params.values()))
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
    final = {n: p.detach().double().numpy().copy() for n, p in params.items()}
    final.update(buffers(model))
    for n, p in params.items():
        for key, value in opt.state[p].items():
            if torch.is_tensor(value) and value.dim() > 0:
                final[f"optimizer.{n}.{key}"] = \
                    value.detach().double().numpy().copy()
    return np.array(losses), final


# ---------------------------------------------------------------------------
# dlc.


class ToolError(Exception):
    pass


def tail(text: str, lines: int = 8) -> str:
    kept = [ln for ln in text.strip().splitlines() if ln.strip()][-lines:]
    return " | ".join(kept) if kept else "(no output)"


def run_tool(cmd, timeout, timings, label):
    start = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        raise ToolError(f"{label}: timed out after {timeout} s")
    timings[label] = time.monotonic() - start
    if proc.returncode != 0:
        raise ToolError(f"{label}: {os.path.basename(cmd[0])} exited with "
                        f"{proc.returncode}: {tail(proc.stderr or proc.stdout)}")
    return proc


def training_flags(optimizer: str) -> list:
    return ["--loss", "cross_entropy"] + OPTIMIZERS[optimizer][0]


def read_npz(path: str) -> dict:
    with np.load(path) as f:
        return {k: f[k] for k in f.files}


# ---------------------------------------------------------------------------
# Comparison.


class Comparison:
    """Named comparisons of dlc against ref64 (the tolerance above)."""

    def __init__(self, rtol: float):
        self.rtol = rtol
        self.rows = []  # (kind, name, ||dlc - ref64||, ||ref64||, ||torch32 - ref64||)
        self.problems = []

    def add(self, kind, name, got, ref64, ref32):
        got = np.asarray(got, dtype=np.float64)
        ref64 = np.asarray(ref64, dtype=np.float64)
        ref32 = np.asarray(ref32, dtype=np.float64)
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
                          float(np.linalg.norm(ref32 - ref64))))

    def problem(self, what):
        self.problems.append(what)

    def _scale(self, kind):
        return max(r[3] for r in self.rows if r[0] == kind)

    def tolerance(self, row):
        kind, _, _, norm, e32 = row
        # The floor: an error below rtol x NEGLIGIBLE of the largest norm of
        # its kind is no error (it is what lets a float64 run check the
        # exactly-zero gradients, where there is no float32 error to allow).
        return (self.rtol * norm + REFERENCE_ERROR_FACTOR * e32
                + self.rtol * NEGLIGIBLE * self._scale(kind))

    def failures(self):
        out = list(self.problems)
        for row in self.rows:
            kind, name, err, norm, e32 = row
            tol = self.tolerance(row)
            if err <= tol:
                continue
            why = (f"{kind} '{name}': ||dlc - ref64|| = {err:.3e} (relative "
                   f"{err / norm if norm else np.inf:.2e}) > tolerance "
                   f"{tol:.3e} = {self.rtol:g} x {norm:.3e} + "
                   f"{REFERENCE_ERROR_FACTOR:g} x {e32:.3e} (torch32's "
                   f"error) + floor")
            if norm and e32 > self.rtol * norm:
                why += (f" [ill-conditioned in float32: PyTorch float32 is "
                        f"{e32 / norm:.2e} relative from float64 here]")
            out.append(why)
        return out

    def summary(self, kind):
        """Worst relative error of `kind` (and torch32's), worst err/tol."""
        rows = [r for r in self.rows if r[0] == kind]
        if not rows:
            return None
        scale = self._scale(kind)
        regular = [r for r in rows if r[3] > NEGLIGIBLE * scale] or rows
        rel = lambda r, i: r[i] / r[3] if r[3] else (0.0 if r[i] == 0
                                                     else np.inf)
        worst = max(regular, key=lambda r: rel(r, 2))
        return {"n": len(rows), "rel": rel(worst, 2), "worst": worst[1],
                "rel32": max(rel(r, 4) for r in regular),
                "ratio": max(r[2] / self.tolerance(r) for r in rows)}

    def describe(self):
        parts = []
        for kind in dict.fromkeys(r[0] for r in self.rows):
            s = self.summary(kind)
            parts.append(f"{kind} x{s['n']}: max rel err {s['rel']:.2e} "
                         f"({s['worst']}), torch32 {s['rel32']:.2e}, "
                         f"err/tol {s['ratio']:.3f}")
        return "; ".join(parts)

    def to_json(self):
        return {kind: self.summary(kind)
                for kind in dict.fromkeys(r[0] for r in self.rows)}


# ---------------------------------------------------------------------------
# The checks.


def check_grad(name, base, data, args, timings):
    batch = BATCH[name]
    out = base + ".grad"
    inputs = {n: data[n][:batch]
              for n in models.MODELS[name].input_names + ["labels"]}
    np.savez(out + ".batch.npz", **inputs)
    # Any optimizer: loss_grad does not depend on it.
    run_tool([args.dlc_compile, base + ".onnx", "--train",
              *training_flags("sgd"), "--batch-size", str(batch),
              "--emit=mlir", "-o", out + ".mlir"],
             args.timeout, timings, "compile")
    run_tool([args.dlc_run, "--interpret", out + ".mlir", "--function",
              "loss_grad", "--inputs", out + ".batch.npz", "--outputs",
              out + ".npz"], args.timeout, timings, "loss_grad")
    got = read_npz(out + ".npz")
    tdtype = torch.float64
    loss64, grads64, stats64 = torch_gradients(name, data, batch, tdtype)
    if args.dtype == "float64":
        # dlc computes in float64 as well: no float32 rounding to allow for.
        loss32, grads32, stats32 = loss64, grads64, stats64
    else:
        loss32, grads32, stats32 = torch_gradients(name, data, batch,
                                                   torch.float32)
    cmp = Comparison(args.rtol)
    if "loss" not in got:
        cmp.problem("loss_grad returned no 'loss'")
    else:
        cmp.add("loss", "loss", got["loss"], loss64, loss32)
    for n in grads64:
        if n not in got:
            cmp.problem(f"no gradient for parameter '{n}'")
        else:
            cmp.add("grad", n, got[n], grads64[n], grads32[n])
    for n in stats64:
        if n not in got:
            cmp.problem(f"no updated running statistic '{n}'")
        else:
            cmp.add("stat", n, got[n], stats64[n], stats32[n])
    extra = sorted(set(got) - set(grads64) - set(stats64) - {"loss"})
    if extra:
        cmp.problem(f"loss_grad returned results PyTorch has no parameter or "
                    f"buffer for: {', '.join(extra)}")
    return cmp


def check_training(name, optimizer, base, data, args, timings):
    batch = BATCH[name]
    out = f"{base}.{optimizer}"
    for path in (out + ".jsonl", out + ".state.npz"):
        if os.path.exists(path):
            os.remove(path)
    run_tool([args.dlc_run, "--interpret", "--train", base + ".onnx",
              *training_flags(optimizer), "--batch-size", str(batch),
              "--data", base + ".data.npz", "--steps", str(args.steps),
              "--no-shuffle", "--log", out + ".jsonl", "--save-state",
              out + ".state.npz"], args.timeout, timings, "train")
    with open(out + ".jsonl") as f:
        log = [json.loads(line) for line in f if line.strip()]
    state = read_npz(out + ".state.npz")
    losses64, final64 = torch_training(name, data, batch, args.steps,
                                       optimizer, torch.float64)
    if args.dtype == "float64":
        losses32, final32 = losses64, final64
    else:
        losses32, final32 = torch_training(name, data, batch, args.steps,
                                           optimizer, torch.float32)
    cmp = Comparison(args.rtol)
    if [e.get("step") for e in log] != list(range(args.steps)):
        cmp.problem(f"the log has steps {[e.get('step') for e in log]}, "
                    f"expected 0..{args.steps - 1}")
    else:
        for k, entry in enumerate(log):
            loss = entry.get("loss")
            cmp.add("loss", f"step {k}", np.nan if loss is None else loss,
                    losses64[k], losses32[k])
            if entry.get("lr") != LOGGED_LR[optimizer]:
                cmp.problem(f"step {k} logs lr {entry.get('lr')}, expected "
                            f"{LOGGED_LR[optimizer]:.9g}")
                break
    if "dlc.step" not in state or int(state["dlc.step"]) != args.steps:
        cmp.problem(f"--save-state's dlc.step is {state.get('dlc.step')}, "
                    f"expected {args.steps}")
    for n in final64:
        if n not in state:
            cmp.problem(f"--save-state has no '{n}'")
        else:
            kind = ("opt" if n.startswith("optimizer.") else
                    "stat" if n.endswith(("running_mean", "running_var"))
                    else "param")
            cmp.add(kind, n, state[n], final64[n], final32[n])
    return cmp


def run_model(name, checks, args):
    """Runs `checks` of model `name`; returns a list of (ok, line, record)."""
    torch.set_num_threads(1)
    results = []
    try:
        base = prepare(name, args.work, args.dtype, args.steps)
        data = read_npz(base + ".data.npz")
    except Exception as e:  # an export failure fails every check
        why = f"{type(e).__name__}: {str(e).strip()[:300]}"
        traceback.print_exc()
        return [(False, f"FAIL {name}/{c}: cannot export: {why}", None)
                for c in checks]
    for check in checks:
        timings = {}
        start = time.monotonic()
        try:
            if check == "grad":
                cmp = check_grad(name, base, data, args, timings)
            else:
                cmp = check_training(name, check, base, data, args, timings)
        except ToolError as e:
            results.append((False, f"FAIL {name}/{check}: {e}", None))
            continue
        total = time.monotonic() - start
        tools = ", ".join(f"{k} {v:.1f} s" for k, v in timings.items())
        record = {"model": name, "check": check, "dtype": args.dtype,
                  "batch": BATCH[name], "steps": args.steps,
                  "seconds": round(total, 2),
                  "dlc_seconds": {k: round(v, 2) for k, v in timings.items()},
                  "errors": cmp.to_json()}
        bad = cmp.failures()
        if bad:
            line = (f"FAIL {name}/{check}: {bad[0]}"
                    + (f" (and {len(bad) - 1} more)" if len(bad) > 1 else "")
                    + f"; {cmp.describe()}")
        else:
            line = f"PASS {name}/{check} ({cmp.describe()}; {tools})"
        record["failures"] = bad
        results.append((not bad, line, record))
    return results


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--dlc-compile", required=True)
    p.add_argument("--dlc-run", required=True)
    p.add_argument("--work", required=True,
                   help="directory for the exported models and results")
    p.add_argument("--models", default=None,
                   help="comma-separated models (default: ctest's set)")
    p.add_argument("--checks", default=None,
                   help=f"comma-separated, of {','.join(ALL_CHECKS)}")
    p.add_argument("--all", action="store_true",
                   help="every model with every check")
    p.add_argument("--steps", type=int, default=STEPS)
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--dtype", choices=["float32", "float64"],
                   default="float32",
                   help="export the models in this type (float64: dlc "
                        "computes in float64 too, a check free of float32 "
                        "rounding)")
    p.add_argument("--jobs", type=int, default=2,
                   help="models checked at once (default 2)")
    p.add_argument("--timeout", type=float, default=900,
                   help="seconds allowed per dlc call")
    p.add_argument("--json", default=None,
                   help="also write every check's numbers here")
    args = p.parse_args(argv)

    for tool in (args.dlc_compile, args.dlc_run):
        if not (os.path.isfile(tool) and os.access(tool, os.X_OK)):
            p.error(f"'{tool}' is not an executable file")
    args.work = os.path.abspath(args.work)
    os.makedirs(args.work, exist_ok=True)

    if args.all or args.models or args.checks:
        names = (args.models or ",".join(models.MODELS)).split(",")
        checks = (args.checks or ",".join(ALL_CHECKS)).split(",")
        plan = {m: [c for c in checks if c] for m in names if m}
    else:
        plan = CTEST_CHECKS
    for m, cs in plan.items():
        if m not in models.MODELS:
            p.error(f"unknown model '{m}'")
        for c in cs:
            if c not in ALL_CHECKS:
                p.error(f"unknown check '{c}' (known: {', '.join(ALL_CHECKS)})")

    start = time.monotonic()
    passed = failed = 0
    records = []
    # Processes, not threads: the PyTorch references are CPU-bound Python.
    # The largest models first, so that two jobs finish together.
    order = sorted(plan, key=lambda m: -BATCH[m] * (m in ("resnet18",
                                                         "mobilenet_v2")))
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
