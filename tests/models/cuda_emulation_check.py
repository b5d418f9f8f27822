"""The CUDA kernels' numerics, checked on the host against the CPU kernels.

No GPU is needed: each model of models.py (exported for training, as
train_check.py's prepare() does) is compiled twice with `dlc-compile --train`
(SGD with momentum 0.9, so the update reads optimizer state), once with
`--target cuda` and once with `--target cpu`, and both modules run
@forward and @train_step through one host harness on the same arguments.
The CUDA module's kernel source (CUDA C++ for NVRTC) is compiled with g++
against tests/models/cuda_emulation/cuda_shim.h, a stand-in for what the
kernels use of CUDA, and each kernel step runs over an emulated grid of
GRID_BLOCKS x BLOCK_THREADS threads: small, so that grid-stride loops
iterate and a warp-per-iteration kernel (KernelStep.threads_per_iteration
32) covers its iterations with several warps in turn. A warp's 32 lanes run
as real threads, so its shuffle butterflies combine the values the other
lanes computed (cuda_shim.cpp). The CPU module's kernels run from its own
shared object (`NAME(buffers, begin, end)`). Matmul, convolution and copy
steps, library calls on both devices, run in numpy, the same for both; the
CUDA module's folded GEMM epilogues (bias, bias + ReLU) are applied there
too, so what they replaced (the CPU module's separate kernels) is checked.

Every result of both functions is compared: float results within
TOLERANCE[dtype] of each array's largest magnitude, integer and bool results
exactly. Arena and result memory start as 0xff bytes (NaN), so a kernel that
reads what no step wrote shows up as a non-finite result.

The CUDA module also runs with every buffer 16-byte aligned (the elementwise
groups take their 16-byte vector path: each `__builtin_assume_aligned` view
is counted, and checked to be aligned) and, for OFFSET_CASES, with every
buffer 4 bytes past a 16-byte boundary, where the same groups must take
their scalar path (no aligned views) and give the same results bit for bit.

Prints `PASS model/function: ...` or `FAIL ...` per function with the
largest float difference against its tolerance, then `N passed, M failed`;
exits 77 (ctest: skipped) without flatc, g++ or NVRTC.

Usage: /usr/bin/python3 tests/models/cuda_emulation_check.py
           --dlc-compile build/bin/dlc-compile --work DIR [--flatc flatc]
           [--models mlp,gpt]
"""

import argparse
import ctypes
import itertools
import os
import shutil
import subprocess
import sys
import time

import numpy as np
import onnx
from onnx import numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import models  # noqa: E402
import train_check  # noqa: E402  (prepare)
from cuda_kernels_check import read_module  # noqa: E402

SKIP = 77
NO_NVRTC = "needs NVRTC"
SHIM = os.path.join(HERE, "cuda_emulation")

# The emulated grid: 2 blocks of 2 warps. Grid-stride loops take several
# trips and a warp-per-iteration kernel runs on 4 warps (KernelStep allows
# any grid: the kernels loop over what it does not cover). A step of a block
# per iteration (more than 32 threads per iteration) runs 2 blocks of its
# own threads per iteration, as the runtime launches it.
GRID_BLOCKS = 2
BLOCK_THREADS = 64

# What runs: (model, exported type, batch, functions). Batches are small
# for time (the host runs every emulated thread's arithmetic in turn) but
# not smaller than the conditioning of train-mode BatchNorm allows: both
# torchvision nets reach 1x1 pixels, where a BatchNorm normalizes `batch`
# values per channel.
#   - resnet18 in float32 at batch 8 (4 gives 5e-5, too near the
#     tolerance), and in float64, whose kernels shuffle 8-byte values.
#   - mobilenet_v2's float32 train_step is not comparable: at 1x1 pixels a
#     ReLU6 input 5e-6 from 0 (features.15, batch 8) falls on the other
#     side of the clip in one float32 run and not in the other (each is as
#     close to float64 as the other before it), and its BatchNorm spreads
#     that one element over the channel's gradient (5% of the weights').
#     Its float32 forward is compared, its train_step in float64 at batch
#     8 (at 4, its 1x1 BatchNorms amplify rounding 1e5-fold: 1e-11).
# (model, dtype, batch, functions, options of the CUDA module only,
# options of both modules). The channels-last cases run the CUDA module's
# convolutions, BatchNorm statistics and pools NHWC against the CPU
# module's NCHW; the bfloat16 and float16 ones compile both modules with
# mixed precision (16-bit buffers loaded into and stored from float; float16
# with dynamic loss scaling, whose inf/NaN probe and skipped update run in
# the train_step's kernels).
NHWC = ["--conv-layout", "nhwc"]
BF16 = ["--precision", "bf16"]
FP16 = ["--precision", "fp16"]
# A first loss scale that overflows float16 gradients: the skipped step.
FP16_OVERFLOW = FP16 + ["--loss-scale-init", "1e30"]
CASES = [
    ("mlp", "float32", 8, ["forward", "train_step"], [], []),
    ("mlp", "float32", 8, ["forward", "train_step"], [], BF16),
    ("mlp", "float32", 8, ["forward", "train_step"], [], FP16),
    ("mlp", "float32", 8, ["train_step"], [], FP16_OVERFLOW),
    ("cnn_bn", "float32", 4, ["forward", "train_step"], [], []),
    ("cnn_bn", "float32", 4, ["forward", "train_step"], NHWC, []),
    ("resnet18", "float32", 8, ["forward", "train_step"], [], []),
    ("resnet18", "float32", 8, ["train_step"], NHWC, []),
    ("resnet18", "float64", 4, ["forward", "train_step"], [], []),
    ("mobilenet_v2", "float32", 4, ["forward"], [], []),
    ("mobilenet_v2", "float32", 4, ["forward"], NHWC, []),
    ("mobilenet_v2", "float64", 8, ["forward", "train_step"], [], []),
    ("gpt", "float32", 2, ["forward", "train_step"], [], []),
    ("gpt", "float32", 2, ["forward", "train_step"], [], BF16),
    ("gpt", "float32", 2, ["forward", "train_step"], [], FP16),
    ("encoder", "float32", 3, ["forward", "train_step"], [], []),
    ("deconv", "float32", 4, ["forward", "train_step"], [], []),
    ("deconv", "float32", 4, ["train_step"], NHWC, []),
]

# Largest |cuda - cpu| allowed, relative to the largest |cpu| of the array.
# Both modules run the same operations in the same type, with the same
# matmuls and convolutions (numpy, here); what differs is the kernels'
# reductions: a CUDA kernel accumulates in the element type (serially in a
# thread, or a strided share per lane of a warp that 5 butterfly levels
# then combine), a CPU kernel accumulates float sums in double. A float sum
# of n terms is off by up to n * 2^-24 of the sum of their magnitudes
# (n/32 + 5 for a warp's), typically sqrt(n) * 2^-24, ~3e-6 for the largest
# here (BatchNorm over 2048 values), and a train_step carries such errors
# back through every layer. Seen (float32): 9e-7 (cnn_bn), 3e-7 (gpt),
# 9e-6 (resnet18's updated parameters); a wrong shuffle partner or a
# misplaced vector or fused-group iteration is off by 1e-2 and more (or
# NaN). 1e-4 is the models' usual bar (train_check.py's rtol), 10x over the
# worst seen. Float64: only the order of the sums differs, 3e-13 seen
# (mobilenet_v2: 2^-53 amplified as above), so 1e-11.
TOLERANCE = {"float32": 1e-4, "float64": 1e-11}
# With bfloat16 values (--precision bf16) a sum the two modules order
# differently rounds to bfloat16 on either side of a rounding boundary: one
# unit in the last place, 2^-8 (3.9e-3) relative, and a train_step carries
# a few of those through its layers (seen: 4.4e-3 of an array's largest
# magnitude, gpt's bias gradients). A misread buffer (float16 bits read as
# bfloat16, float32 as bfloat16) is off by orders of magnitude.
TOLERANCE_BF16 = 3e-2
# float16 keeps 11 significant bits: one unit in the last place is 2^-11
# (4.9e-4), 8x finer than bfloat16's, so 8x tighter.
TOLERANCE_FP16 = 4e-3

# The cases that also run with every buffer 4 bytes off 16-byte alignment:
# small ones with elementwise groups and warp reductions.
OFFSET_CASES = [("cnn_bn", "float32"), ("gpt", "float32")]

DTYPES = {"Bool": np.bool_, "I8": np.int8, "I16": np.int16, "I32": np.int32,
          "I64": np.int64, "U8": np.uint8, "U16": np.uint16,
          "U32": np.uint32, "U64": np.uint64, "F16": np.float16,
          "F32": np.float32, "F64": np.float64,
          # NumPy has no bfloat16: its buffers hold the bit patterns.
          "BF16": np.uint16}
OPTIONS = ["--train", "--loss", "cross_entropy", "--optimizer", "sgd", "--lr",
           "0.1", "--momentum", "0.9", "--embed-parameters=false"]
# Hyperparameters whose module value is 0 (weight decay) run with this, so
# the term they scale is checked too.
HYPERPARAMETER = 0.01
# The step counter: past the first step, whose momentum update ignores the
# buffer.
STEP = 3
# Optimizer state (momentum buffers): N(0, 1) times this, about a gradient.
STATE_SCALE = 0.01
SEED = 7


def missing_tool(flatc):
    """What the emulation lacks to run ("flatc", "g++"), or None."""
    for tool, what in [(flatc, "flatc"), (shutil.which("g++"), "g++")]:
        if not tool:
            return what
    return None


def build_kernels(data: dict, out: str) -> ctypes.CDLL:
    """The CUDA module's kernels compiled for the host into `out` (with a
    DLC_EMU_ENTRY per kernel), loaded. -O1: the sources are large and each
    kernel runs on little data. -ffp-contract=off: every product and sum
    rounded as the source writes it (on a GPU, NVRTC's default --fmad
    fuses some: a rounding-level difference). -w: code written for NVRTC
    has unused values g++ would warn about (a fused member's `it`)."""
    with open(out + ".cpp", "w") as f:
        f.write(f'#include "{SHIM}/cuda_shim.h"\n')
        f.write(data["kernel_source"])
        f.write("".join(f"DLC_EMU_ENTRY({k['name']})\n"
                        for k in data["kernels"]))
    subprocess.run(["g++", "-std=c++17", "-O1", "-ffp-contract=off", "-fPIC",
                    "-shared", "-w", "-o", out, out + ".cpp",
                    os.path.join(SHIM, "cuda_shim.cpp"), "-lpthread"],
                   check=True)
    lib = ctypes.CDLL(out)
    lib.dlc_emu_launch.restype = ctypes.c_char_p
    lib.dlc_emu_launch.argtypes = [ctypes.c_void_p, ctypes.c_void_p,
                                   ctypes.c_longlong, ctypes.c_uint,
                                   ctypes.c_uint, ctypes.c_uint]
    lib.dlc_emu_aligned_views.restype = ctypes.c_ulonglong
    return lib


def load_cpu_kernels(data: dict, out: str) -> ctypes.CDLL:
    """The CPU module's shared object, written to `out` and loaded."""
    with open(out, "wb") as f:
        f.write(bytes(data["cpu_shared_object"]))
    return ctypes.CDLL(out)


class Memory:
    """A function's buffers: each starts `misalign` bytes past a 64-byte
    boundary. Arena and results start as 0xff bytes (NaN in every float
    type), so reading what no step wrote leaves a trace."""

    def __init__(self, misalign: int):
        self.misalign = misalign

    def allocate(self, nbytes: int, fill: int = 0) -> np.ndarray:
        raw = np.full(nbytes + 64 + self.misalign, fill, np.uint8)
        start = (-raw.ctypes.data) % 64 + self.misalign
        return raw[start:start + nbytes]


def run(data: dict, function: str, arguments: dict, launch,
        misalign: int) -> dict:
    """Runs `function` of module `data` on `arguments` (by name), kernel
    steps through launch(kernel index, addresses, step). Returns its
    results by name."""
    fn = next(f for f in data["functions"] if f["name"] == function)
    memory = Memory(misalign)

    def nbytes(t):
        return int(np.prod(t["shape"], dtype=np.int64)) * \
            np.dtype(DTYPES[t["dtype"]]).itemsize

    args = []
    for a in fn["arguments"]:
        buffer = memory.allocate(nbytes(a["type"]))
        buffer[:] = np.ascontiguousarray(arguments[a["name"]]).view(
            np.uint8).reshape(-1)
        args.append(buffer)
    results = [memory.allocate(nbytes(r["type"]), 0xff)
               for r in fn["results"]]
    arena = memory.allocate(fn["arena_size"], 0xff)
    constants = []
    for c in data.get("constants") or []:
        buffer = memory.allocate(len(c["data"]))
        buffer[:] = c["data"]
        constants.append(buffer)
    bases = {"Argument": args, "Result": results, "Constant": constants}

    def address(ref):
        base = arena if ref["kind"] == "Arena" else \
            bases[ref["kind"]][ref["index"]]
        return base.ctypes.data + ref["offset"]

    def view(ref, dtype, shape):
        count = int(np.prod(shape, dtype=np.int64))
        raw = (ctypes.c_char * (count * np.dtype(dtype).itemsize)) \
            .from_address(address(ref))
        return np.frombuffer(raw, dtype).reshape(shape)

    for step in fn["steps"]:
        kind, body = step["step_type"], step["step"]
        if kind == "KernelStep":
            addresses = (ctypes.c_void_p * len(body["buffers"]))(
                *[address(r) for r in body["buffers"]])
            error = launch(body["kernel"], addresses, body)
            if error:
                kernel = data["kernels"][body["kernel"]]["name"]
                raise RuntimeError(f"{function}: {step['location']}: "
                                   f"{kernel}: {error}")
        elif kind == "MatmulStep":
            matmul(body, view)
        elif kind == "ConvStep":
            conv(body, view)
        elif kind == "CopyStep":
            ctypes.memmove(address(body["destination"]),
                           address(body["source"]), body["bytes"])
        else:
            raise RuntimeError(f"{function}: {step['location']}: cannot "
                               f"emulate a {kind}")
    values = {}
    for r, buffer in zip(fn["results"], results):
        value = buffer.view(DTYPES[r["type"]["dtype"]]).reshape(
            r["type"]["shape"]).copy()
        # bfloat16 results are compared as the numbers they are.
        values[r["name"]] = (from_bfloat16(value)
                             if r["type"]["dtype"] == "BF16" else value)
    return values


def from_bfloat16(bits):
    """bfloat16 patterns (uint16) as float64."""
    return (bits.astype(np.uint32) << 16).view(np.float32).astype(np.float64)


def to_bfloat16(values):
    """float64 values as bfloat16 patterns, through float32, rounding to
    nearest even (NaN stays NaN), as the kernels' dlc_store_bf16."""
    bits = values.astype(np.float32).view(np.uint32)
    rounded = ((bits + 0x7fff + ((bits >> 16) & 1)) >> 16).astype(np.uint16)
    return np.where(np.isnan(values), (bits >> 16) | 0x40,
                    rounded).astype(np.uint16)


class Bfloat16View:
    """A bfloat16 buffer read and written as float64 through
    __getitem__/__setitem__, like the numpy views of other types."""

    def __init__(self, bits):
        self.bits = bits

    def __getitem__(self, key):
        return from_bfloat16(self.bits[key])

    def __setitem__(self, key, values):
        self.bits[key] = to_bfloat16(np.asarray(values, np.float64))


def typed_view(view, ref, type_name, shape):
    """`view` of `ref` as `type_name`'s numpy type, or a Bfloat16View."""
    if type_name == "BF16":
        return Bfloat16View(view(ref, np.uint16, shape))
    return view(ref, DTYPES[type_name], shape)


def matmul(s: dict, view):
    """A MatmulStep in float64, rounded once to its type, with its
    epilogue (the CUDA target's folded bias or bias + ReLU)."""
    batch, m, n, k = s["batch"], s["m"], s["n"], s["k"]
    ls, rs = s["lhs_batch_stride"], s["rhs_batch_stride"]
    lhs = typed_view(view, s["lhs"], s["dtype"], [ls * (batch - 1) + m * k])
    rhs = typed_view(view, s["rhs"], s["dtype"], [rs * (batch - 1) + k * n])
    out = typed_view(view, s["result"], s["dtype"], [batch, m, n])
    for b in range(batch):
        a = lhs[b * ls:b * ls + m * k].astype(np.float64)
        a = a.reshape(k, m).T if s["lhs_transposed"] else a.reshape(m, k)
        c = rhs[b * rs:b * rs + k * n].astype(np.float64)
        c = c.reshape(n, k).T if s["rhs_transposed"] else c.reshape(k, n)
        product = a @ c
        if s["epilogue"] != "None":
            product += typed_view(view, s["bias"], s["dtype"], [n])[:]
            if s["epilogue"] == "BiasRelu":
                product = np.maximum(product, 0)
        out[b] = product


def conv(s: dict, view):
    """An N-d ConvStep in float64 (grouped, strided, padded, dilated), its
    buffers channels first (NCHW / OIHW in 2-d) or, channels_last, with the
    channels innermost (NHWC / OHWI)."""
    dtype = DTYPES[s["dtype"]]
    xs, ws, ys = s["x_shape"], s["w_shape"], s["y_shape"]
    stride, low, high = s["stride"], s["pad_low"], s["pad_high"]
    dilation, groups = s["dilation"], s["groups"]
    channels_last = s.get("channels_last", False)

    def channels_first_view(key, shape):
        """The buffer as an array of `shape` (channels first), a view that
        writes through."""
        if not channels_last:
            return view(s[key], dtype, shape)
        stored = [shape[0], *shape[2:], shape[1]]
        return np.moveaxis(view(s[key], dtype, stored), -1, 1)
    x, w, y = (channels_first_view(k, shape)
               for k, shape in (("x", xs), ("w", ws), ("y", ys)))
    n, c, spatial = xs[0], xs[1], xs[2:]
    o, cg, kernel = ws[0], ws[1], ws[2:]
    out_spatial = ys[2:]
    og = o // groups
    padded = tuple(size + lo + hi for size, lo, hi in
                   zip(spatial, low, high))
    inside = (slice(None), slice(None)) + tuple(
        slice(lo, lo + size) for lo, size in zip(low, spatial))
    wg = w.astype(np.float64).reshape(groups, og, cg, *kernel)
    if s["kind"] in ("Forward", "BackwardFilter"):
        xp = np.zeros((n, c) + padded)
        xp[inside] = x
    if s["kind"] == "Forward":
        out = np.zeros((n, groups, og, *out_spatial))
    elif s["kind"] == "BackwardFilter":
        dy = y.astype(np.float64).reshape(n, groups, og, *out_spatial)
        out = np.zeros((groups, og, cg, *kernel))
    else:
        dy = y.astype(np.float64).reshape(n, groups, og, *out_spatial)
        out = np.zeros((n, groups, cg) + padded)
    for tap in itertools.product(*(range(k) for k in kernel)):
        window = (slice(None),) * 3 + tuple(
            slice(t * d, t * d + (size - 1) * st + 1, st)
            for t, d, size, st in zip(tap, dilation, out_spatial, stride))
        if s["kind"] == "Forward":
            patch = xp.reshape(n, groups, cg, *padded)[window]
            out += np.einsum("ngc...,goc->ngo...", patch, wg[(...,) + tap],
                             optimize=True)
        elif s["kind"] == "BackwardFilter":
            patch = xp.reshape(n, groups, cg, *padded)[window]
            out[(...,) + tap] += np.einsum("ngc...,ngo...->goc", patch, dy,
                                           optimize=True)
        else:
            out[window] += np.einsum("ngo...,goc->ngc...", dy,
                                     wg[(...,) + tap], optimize=True)
    if s["kind"] == "Forward":
        y[...] = out.reshape(ys)
    elif s["kind"] == "BackwardFilter":
        w[...] = out.reshape(ws)
    else:
        x[...] = out.reshape((n, c) + padded)[inside]


def cuda_launcher(data: dict, lib: ctypes.CDLL):
    """Kernel steps of the CUDA module: over the emulated grid."""
    entries = [ctypes.cast(getattr(lib, "dlc_emu_entry_" + k["name"]),
                           ctypes.c_void_p) for k in data["kernels"]]

    def launch(kernel, addresses, step):
        threads = step["threads_per_iteration"]
        error = lib.dlc_emu_launch(entries[kernel], addresses,
                                   step["iterations"], threads, GRID_BLOCKS,
                                   threads if threads > 32 else BLOCK_THREADS)
        return error.decode() if error else None
    return launch


def cpu_launcher(data: dict, lib: ctypes.CDLL):
    """Kernel steps of the CPU module: all iterations in one call."""
    kernels = [getattr(lib, k["name"]) for k in data["kernels"]]
    for kernel in kernels:
        kernel.argtypes = [ctypes.c_void_p, ctypes.c_int64, ctypes.c_int64]
        kernel.restype = None

    def launch(kernel, addresses, step):
        kernels[kernel](addresses, 0, step["iterations"])
    return launch


def draw_arguments(data: dict, base: str, batch: int) -> dict:
    """Every argument of the module's functions, by name: the model's
    parameters as exported (torch's initialization: what a run starts from,
    and what keeps the deep models' activations in range), BatchNorm
    statistics and hyperparameters as the module holds them (a zero
    hyperparameter, the weight decay, as HYPERPARAMETER), the step counter
    STEP, the 16-bit copies of parameters (the parameters rounded),
    momentum buffers drawn from a seeded generator (the loss scale
    and its counters, dlc.*, as the module holds them), and the first
    `batch` samples and labels of the exported data."""
    rng = np.random.default_rng(SEED)
    samples = np.load(base + ".data.npz")
    initializers = {i.name: i for i in onnx.load(base + ".onnx")
                    .graph.initializer}
    arguments = {}
    for a in (a for f in data["functions"] for a in f["arguments"]):
        if a["name"] in arguments:
            continue
        dtype, shape, role = DTYPES[a["type"]["dtype"]], a["type"]["shape"], \
            a["role"]
        if a["global"] < 0:
            value = samples["labels" if role == "label" else a["name"]][:batch]
        elif role == "param":
            value = numpy_helper.to_array(initializers[a["name"]])
        elif role == "weight_copy":
            # The parameter rounded, as the runtime keeps it.
            source = numpy_helper.to_array(
                initializers[a["name"].rsplit("@", 1)[0]]).astype(np.float64)
            value = (to_bfloat16(source) if a["type"]["dtype"] == "BF16"
                     else source)
        elif role == "optimizer_state" and not a["name"].startswith("dlc."):
            value = rng.standard_normal(shape) * STATE_SCALE
        elif role == "step":
            value = STEP
        else:
            initial = data["globals"][a["global"]].get("initial_value")
            value = np.frombuffer(bytes(initial), dtype) if initial else \
                HYPERPARAMETER if role == "hyperparameter" else 0
        value = np.asarray(value).astype(dtype)
        arguments[a["name"]] = np.broadcast_to(value.reshape(
            shape if value.size != 1 else [1] * len(shape)), shape).copy()
    return arguments


def compare(expected: dict, got: dict, tolerance: float):
    """(largest relative float difference, problems) of `got` against
    `expected`, result by result."""
    worst, problems = 0.0, []
    for name, want in expected.items():
        have = got[name]
        if want.dtype.kind != "f":
            if not np.array_equal(want, have):
                problems.append(f"{name}: {np.count_nonzero(want != have)} "
                                f"of {want.size} elements differ")
            continue
        if not (np.isfinite(want).all() and np.isfinite(have).all()):
            problems.append(f"{name}: non-finite elements (cpu "
                            f"{np.count_nonzero(~np.isfinite(want))}, cuda "
                            f"{np.count_nonzero(~np.isfinite(have))})")
            continue
        scale = float(np.abs(want).max(initial=0))
        diff = float(np.abs(have.astype(np.float64) - want).max(initial=0))
        relative = diff / scale if scale else diff
        worst = max(worst, relative)
        if relative > tolerance:
            problems.append(f"{name}: max |cuda - cpu| {diff:.3g} is "
                            f"{relative:.3g} of max |cpu| {scale:.3g} "
                            f"(tolerance {tolerance:g})")
    return worst, problems


def features(data: dict, function: str) -> dict:
    """What the CUDA plan of `function` has of the shapes checked here."""
    steps = next(f for f in data["functions"]
                 if f["name"] == function)["steps"]
    return {
        "warp steps": sum(s["step_type"] == "KernelStep" and
                          s["step"]["threads_per_iteration"] == 32
                          for s in steps),
        "block steps": sum(s["step_type"] == "KernelStep" and
                           s["step"]["threads_per_iteration"] > 32
                           for s in steps),
        "epilogues": sum(s["step_type"] == "MatmulStep" and
                         s["step"]["epilogue"] != "None" for s in steps),
        "channels-last convolutions": sum(
            s["step_type"] == "ConvStep" and s["step"]["channels_last"]
            for s in steps),
    }


def signature(data: dict, function: str) -> list:
    """The names and types of `function`'s arguments and results."""
    fn = next(f for f in data["functions"] if f["name"] == function)
    return [(v["name"], v["type"]) for v in fn["arguments"] + fn["results"]]


def check_case(name: str, dtype: str, batch: int, functions: list,
               cuda_options: list, shared_options: list, args,
               totals: dict) -> int:
    """Checks model `name` exported in `dtype` at `batch`, its CUDA module
    compiled with `cuda_options` and both with `shared_options`: prints a
    PASS or FAIL line per function and returns how many failed."""
    precision = (shared_options[shared_options.index("--precision") + 1]
                 if "--precision" in shared_options else None)
    tolerance = {"bf16": TOLERANCE_BF16,
                 "fp16": TOLERANCE_FP16}.get(precision, TOLERANCE[dtype])
    base = train_check.prepare(name, args.work, dtype, 1)
    data = {}
    # A case's own file names: ctypes would reuse a library loaded from the
    # same path by an earlier case.
    variant = base + "".join(cuda_options + shared_options).replace("-", "_")
    for target in ["cuda", "cpu"]:
        module = f"{variant}.{target}.dlcm"
        extra = shared_options + (cuda_options if target == "cuda" else [])
        proc = subprocess.run(
            [args.dlc_compile, base + ".onnx", *OPTIONS, *extra,
             "--batch-size", str(batch), "--target", target, "--cuda-arch",
             "sm_80", "-o", module], capture_output=True, text=True)
        if proc.returncode != 0:
            raise RuntimeError(f"dlc-compile --target {target}: "
                               f"{proc.stderr.strip()}")
        data[target] = read_module(args.flatc, module, args.work,
                                   defaults=True)
    cuda_lib = build_kernels(data["cuda"], f"{variant}.cuda.so")
    cuda = cuda_launcher(data["cuda"], cuda_lib)
    cpu = cpu_launcher(data["cpu"], load_cpu_kernels(data["cpu"],
                                                     f"{variant}.cpu.so"))
    for function in functions:
        if signature(data["cuda"], function) != signature(data["cpu"],
                                                          function):
            raise RuntimeError(f"the modules' {function} signatures differ")
    arguments = draw_arguments(data["cuda"], base, batch)
    failed = 0
    for function in functions:
        start = time.monotonic()
        expected = run(data["cpu"], function, arguments, cpu, 0)
        views = cuda_lib.dlc_emu_aligned_views()
        got = run(data["cuda"], function, arguments, cuda, 0)
        views = cuda_lib.dlc_emu_aligned_views() - views
        worst, found = compare(expected, got, tolerance)
        shapes = features(data["cuda"], function)
        totals["aligned views"] += views
        for key, count in shapes.items():
            totals[key] += count
        offset = ""
        if (name, dtype) in OFFSET_CASES:
            before = cuda_lib.dlc_emu_aligned_views()
            shifted = run(data["cuda"], function, arguments, cuda, 4)
            offset = "; 4 bytes off alignment: no aligned views, " \
                "bit-identical results"
            if cuda_lib.dlc_emu_aligned_views() != before:
                found.append("buffers 4 bytes off 16-byte alignment still "
                             "took aligned views")
                offset = ""
            differ = [r for r in got if got[r].tobytes() !=
                      shifted[r].tobytes()]
            if differ:
                found.append(f"buffers 4 bytes off 16-byte alignment change "
                             f"{len(differ)} results: {', '.join(differ)}")
                offset = ""
        layout = (", CUDA NHWC" if cuda_options == NHWC else "") + \
            (f", {precision}" if precision else "")
        if "skipped_steps" in expected:
            # Loss scaling: whether the update under test ran.
            layout += (", step skipped" if expected["skipped_steps"].item()
                       else ", clean step")
        line = (f"{name}/{function} ({dtype}, batch {batch}{layout}): "
                f"{len(expected)} "
                f"results, max |cuda - cpu| / max |cpu| {worst:.2e} "
                f"(tolerance {tolerance:g}); {shapes['warp steps']} warp "
                f"steps, {shapes['block steps']} block steps, "
                f"{shapes['epilogues']} GEMM epilogues, "
                f"{shapes['channels-last convolutions']} channels-last "
                f"convolutions, {views} "
                f"aligned views{offset} ({time.monotonic() - start:.1f} s)")
        if found:
            print(f"FAIL {line}:\n  " + "\n  ".join(found), flush=True)
            failed += 1
        else:
            print(f"PASS {line}", flush=True)
    return failed


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--dlc-compile", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--flatc", default=shutil.which("flatc"),
                   help="flatc, which builds dlc (default: from PATH)")
    p.add_argument("--models", default=",".join(models.MODELS),
                   help="comma-separated (default: all seven)")
    args = p.parse_args()
    missing = missing_tool(args.flatc)
    if missing:
        print(f"SKIP: no {missing}")
        return SKIP
    os.makedirs(args.work, exist_ok=True)
    selected = args.models.split(",")
    checks = failed = 0
    totals = dict.fromkeys(["warp steps", "block steps", "epilogues",
                            "channels-last convolutions", "aligned views"], 0)
    for name, dtype, batch, functions, cuda_options, shared_options in CASES:
        if name not in selected:
            continue
        start = time.monotonic()
        checks += len(functions)
        try:
            failed += check_case(name, dtype, batch, functions,
                                 cuda_options, shared_options, args, totals)
        except (RuntimeError, subprocess.CalledProcessError) as e:
            if NO_NVRTC in str(e):
                print(f"SKIP: {e}")
                return SKIP
            print(f"FAIL {name} ({dtype}): {e}", flush=True)
            failed += len(functions)
        print(f"  {name} ({dtype}): {time.monotonic() - start:.1f} s",
              flush=True)
    if failed == 0 and set(selected) >= set(models.MODELS):
        for key, count in totals.items():
            if count == 0:
                print(f"FAIL: no {key} ran")
                checks += 1
                failed += 1
    print(f"{checks - failed} passed, {failed} failed")
    return 0 if failed == 0 and checks else 1


if __name__ == "__main__":
    sys.exit(main())
