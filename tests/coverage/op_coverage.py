"""Every dlc op compiles for the CPU and for CUDA and matches the evaluator.

The ops are enumerated from the dialect itself: the generated op
declarations (BUILD/ir/DLCOps.h.inc) name each op, so an op added to
ir/DLCOps.td without a case here fails this test. Each case of CASES is a
small dlc IR module whose @forward uses the ops it covers (the gradient ops
and the training-only ops too), on seeded inputs drawn inside each op's
domain. Per case:
  - the reference: the evaluator (`dlc-run --interpret`), in float64
    arithmetic rounded per op;
  - cpu: `dlc-compile CASE.mlir --target cpu` run by the runtime (`dlc-run
    CASE.dlcm`: generated C++ kernels, oneDNN for matmuls and
    convolutions);
  - cuda: `dlc-compile CASE.mlir --target cuda`, its kernels compiled with
    g++ against the CUDA stand-in and run over an emulated grid
    (tests/models/cuda_emulation_check.py; matmul and convolution steps,
    cuBLASLt and cuDNN on a GPU, in numpy there).
Float results must lie within TOLERANCE[dtype] of each array's largest
magnitude, integer and bool results must be equal.

Structural ops are covered where they occur: dlc.global, global_load and
global_store by a case that reads and writes a global (the compiler turns
them into arguments and results), dlc.constant by cases that use constants,
dlc.fusion and dlc.yield in every case (dlc-fuse makes them).

With --table FILE the op x target table is checked against FILE (the
committed docs/op-coverage.md; --write-table regenerates it).

Prints PASS/FAIL per case and target, then `N passed, M failed`; exits 77
(ctest: skipped) without flatc, g++ or NVRTC for the CUDA half.

Usage: /usr/bin/python3 tests/coverage/op_coverage.py --build BUILD
           --work DIR [--table docs/op-coverage.md] [--write-table]
           [-k SUBSTRING]
"""

import argparse
import os
import re
import shutil
import subprocess
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "models"))
import cuda_emulation_check as emulation  # noqa: E402
from cuda_kernels_check import read_module  # noqa: E402

SKIP = 77
SEED = 11
# Largest |compiled - evaluator| allowed, relative to the array's largest
# |evaluator|. The evaluator rounds each op's float64 result to the element
# type once; compiled kernels compute in the element type (a transcendental
# function within a few ulps, 2^-22 ~ 2.4e-7 relative for float32) and sum
# in their own order (the largest sum here has 64 terms: 64 * 2^-24 ~ 4e-6
# of the sum of magnitudes, which is about the array's largest magnitude
# for these inputs). 2e-5 is 5x that; a wrong index, operand or formula is
# off by far more. Float64: the same counting with 2^-53, 1e-12.
TOLERANCE = {"float32": 2e-5, "float64": 1e-12}
# The CUDA module's target architecture: NVRTC checks the source for it.
CUDA_ARCH = "sm_80"

# ---------------------------------------------------------------------------
# Cases: (name, the ops they cover, IR, inputs). Inputs are (low, high) for
# uniform floats, ("int", low, high) for integers, "bool", or an array.


def tensor(shape, element="f32"):
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def module(args, results, body, prelude=""):
    """A module whose @forward takes `args` [(name, type)], runs `body`
    and returns `results` [(name, value, type)], each named (dlc.name)."""
    params = ", ".join(f'%{n}: {t} {{dlc.name = "{n}"}}' for n, t in args)
    outs = ", ".join(f'{t} {{dlc.name = "{n}"}}' for n, _, t in results)
    values = ", ".join(v for _, v, _ in results)
    types = ", ".join(t for _, _, t in results)
    lines = "\n".join("  " + line for line in body.strip().splitlines())
    return (f"{prelude}func.func @forward({params}) -> ({outs}) {{\n"
            f"{lines}\n  return {values} : {types}\n}}\n")


UNARY = {
    # op: the input range inside its domain
    "neg": (-2, 2), "abs": (-2, 2), "sign": (-2, 2), "exp": (-2, 2),
    "log": (0.1, 3), "sqrt": (0.1, 3), "rsqrt": (0.1, 3),
    "reciprocal": (0.5, 3), "ceil": (-3, 3), "floor": (-3, 3),
    "round": (-3, 3), "erf": (-2, 2), "sin": (-3, 3), "cos": (-3, 3),
    "tanh": (-2, 2), "tan": (-1.2, 1.2), "asin": (-0.95, 0.95),
    "acos": (-0.95, 0.95), "atan": (-3, 3), "sinh": (-2, 2),
    "cosh": (-2, 2), "asinh": (-3, 3), "acosh": (1.1, 3),
    "atanh": (-0.9, 0.9), "sigmoid": (-3, 3),
}


def unary_case():
    t = tensor([3, 37])
    args = [(op, t) for op in UNARY]
    body = "\n".join(f"%{op}_r = dlc.{op} %{op} : {t}" for op in UNARY)
    results = [(f"{op}_r", f"%{op}_r", t) for op in UNARY]
    return ("unary", list(UNARY), module(args, results, body),
            {op: rng for op, rng in UNARY.items()})


def binary_case():
    f, row, i, b = tensor([4, 9]), tensor([9]), tensor([4, 9], "i32"), \
        tensor([4, 9], "i1")
    body = f"""
%add = dlc.add %x, %y : {f}, {row} -> {f}
%sub = dlc.sub %x, %y : {f}, {row} -> {f}
%mul = dlc.mul %x, %y : {f}, {row} -> {f}
%div = dlc.div %x, %y : {f}, {row} -> {f}
%rem = dlc.rem %x, %y : {f}, {row} -> {f}
%pow = dlc.pow %p, %y : {f}, {row} -> {f}
%max = dlc.max %x, %y : {f}, {row} -> {f}
%min = dlc.min %x, %y : {f}, {row} -> {f}
%idiv = dlc.div %i, %j : {i}, {i} -> {i}
%irem = dlc.rem %i, %j : {i}, {i} -> {i}
%imax = dlc.max %i, %j : {i}, {i} -> {i}
%and = dlc.and %a, %c : {b}, {b} -> {b}
%or = dlc.or %a, %c : {b}, {b} -> {b}
%xor = dlc.xor %a, %c : {b}, {b} -> {b}
%not = dlc.not %a : {b}
%lt = dlc.compare lt, %x, %y : {f}, {row} -> {b}
%ge = dlc.compare ge, %i, %j : {i}, {i} -> {b}
%eq = dlc.compare eq, %i, %j : {i}, {i} -> {b}
%sel = dlc.select %lt, %x, %p : {b}, {f}, {f} -> {f}
"""
    names = ["add", "sub", "mul", "div", "rem", "pow", "max", "min", "idiv",
             "irem", "imax", "and", "or", "xor", "not", "lt", "ge", "eq",
             "sel"]
    types = {"idiv": i, "irem": i, "imax": i, "and": b, "or": b, "xor": b,
             "not": b, "lt": b, "ge": b, "eq": b}
    results = [(n, "%" + n, types.get(n, f)) for n in names]
    args = [("x", f), ("y", row), ("p", f), ("i", i), ("j", i), ("a", b),
            ("c", b)]
    # y away from 0 (div, rem), p positive (pow of a real base); integer
    # divisors positive and negative, never 0.
    inputs = {"x": (-3, 3), "y": (0.5, 2), "p": (0.1, 2),
              "i": ("int", -20, 20),
              "j": np.array([[(-1) ** (k % 2) * (1 + k % 5)
                              for k in range(9)]] * 4, np.int32),
              "a": "bool", "c": "bool"}
    return ("elementwise binary, compare, select",
            ["add", "sub", "mul", "div", "rem", "pow", "max", "min", "and",
             "or", "xor", "not", "compare", "select"],
            module(args, results, body), inputs)


def cast_case():
    f, i, b = tensor([5, 7]), tensor([5, 7], "i32"), tensor([5, 7], "i1")
    i64, f64 = tensor([5, 7], "i64"), tensor([5, 7], "f64")
    body = f"""
%to_i = dlc.cast %x : {f} to {i}
%to_f = dlc.cast %i : {i} to {f}
%to_b = dlc.cast %x : {f} to {b}
%from_b = dlc.cast %a : {b} to {f}
%to_i64 = dlc.cast %i : {i} to {i64}
%to_f64 = dlc.cast %x : {f} to {f64}
"""
    results = [("to_i", "%to_i", i), ("to_f", "%to_f", f),
               ("to_b", "%to_b", b), ("from_b", "%from_b", f),
               ("to_i64", "%to_i64", i64), ("to_f64", "%to_f64", f64)]
    return ("cast", ["cast"],
            module([("x", f), ("i", i), ("a", b)], results, body),
            {"x": (-40, 40), "i": ("int", -50, 50), "a": "bool"})


def movement_case():
    x = tensor([4, 6])
    body = f"""
%r = dlc.reshape %x : {x} to {tensor([3, 8])}
%t = dlc.transpose %x [1, 0] : {x} -> {tensor([6, 4])}
%bc = dlc.broadcast_to %v : {tensor([6])} to {tensor([2, 4, 6])}
%cat = dlc.concat %x, %x {{axis = 1 : i64}} : {x}, {x} -> {tensor([4, 12])}
%sl = dlc.slice %x offsets [3, 1] sizes [2, 3] strides [-2, 2] : {x} -> {tensor([2, 3])}
%zero = dlc.constant dense<0.5> : tensor<f32>
%pc = dlc.pad %x value %zero : tensor<f32> low [1, 0] high [0, 2] mode constant : {x} -> {tensor([5, 8])}
%pr = dlc.pad %x low [2, 1] high [1, 3] mode reflect : {x} -> {tensor([7, 10])}
%pe = dlc.pad %x low [0, 2] high [2, 0] mode edge : {x} -> {tensor([6, 8])}
%t3 = dlc.transpose %z [2, 0, 1] : {tensor([3, 4, 5])} -> {tensor([5, 3, 4])}
%sg = dlc.stop_gradient %x : {x}
%sgr = dlc.reshape %sg : {x} to {tensor([24])}
"""
    results = [("r", "%r", tensor([3, 8])), ("t", "%t", tensor([6, 4])),
               ("bc", "%bc", tensor([2, 4, 6])),
               ("cat", "%cat", tensor([4, 12])),
               ("sl", "%sl", tensor([2, 3])), ("pc", "%pc", tensor([5, 8])),
               ("pr", "%pr", tensor([7, 10])), ("pe", "%pe", tensor([6, 8])),
               ("t3", "%t3", tensor([5, 3, 4])),
               ("sgr", "%sgr", tensor([24]))]
    return ("data movement",
            ["reshape", "transpose", "broadcast_to", "concat", "slice", "pad",
             "constant", "stop_gradient"],
            module([("x", x), ("v", tensor([6])), ("z", tensor([3, 4, 5]))],
                   results, body),
            {"x": (-2, 2), "v": (-2, 2), "z": (-2, 2)})


def indexing_case():
    x, i64 = tensor([5, 6]), "i64"
    ids = np.array([3, 0, 3, 1, 0, 3, 2, 0], np.int64)
    order = np.argsort(ids, kind="stable").astype(np.int64)
    starts = np.array([int(np.searchsorted(ids[order], v)) for v in range(5)],
                      np.int64)
    starts[4] = len(ids)  # segment 4 has no rows
    body = f"""
%g = dlc.gather %x[%idx] {{axis = 1 : i64}} : {x}, {tensor([7], i64)} -> {tensor([5, 7])}
%ge = dlc.gather_elements %x[%idx2] {{axis = 0 : i64}} : {x}, {tensor([3, 6], i64)} -> {tensor([3, 6])}
%sn = dlc.scatter_elements %x[%idx2], %u {{axis = 0 : i64}} reduction none : {x}, {tensor([3, 6], i64)}, {tensor([3, 6])}
%sa = dlc.scatter_elements %x[%idx2], %u {{axis = 0 : i64}} reduction add : {x}, {tensor([3, 6], i64)}, {tensor([3, 6])}
%sm = dlc.scatter_elements %x[%idx2], %u {{axis = 0 : i64}} reduction max : {x}, {tensor([3, 6], i64)}, {tensor([3, 6])}
%seg = dlc.segment_sum %rows[%ids, %order, %starts] : {tensor([8, 3])}, {tensor([8], i64)}, {tensor([8], i64)}, {tensor([5], i64)} -> {tensor([5, 3])}
"""
    results = [("g", "%g", tensor([5, 7])), ("ge", "%ge", tensor([3, 6])),
               ("sn", "%sn", x), ("sa", "%sa", x), ("sm", "%sm", x),
               ("seg", "%seg", tensor([5, 3]))]
    # scatter (none) with distinct targets per column: a permutation of rows.
    idx2 = np.array([[(c + r * 2) % 5 for c in range(6)] for r in range(3)],
                    np.int64)
    return ("indexing",
            ["gather", "gather_elements", "scatter_elements", "segment_sum"],
            module([("x", x), ("idx", tensor([7], i64)),
                    ("idx2", tensor([3, 6], i64)), ("u", tensor([3, 6])),
                    ("rows", tensor([8, 3])), ("ids", tensor([8], i64)),
                    ("order", tensor([8], i64)), ("starts", tensor([5], i64))],
                   results, body),
            {"x": (-2, 2), "idx": np.array([5, 0, 2, 2, 4, 1, 3], np.int64),
             "idx2": idx2, "u": (-2, 2), "rows": (-2, 2), "ids": ids,
             "order": order, "starts": starts})


def reduction_case():
    x = tensor([6, 64])
    body = f"""
%s = dlc.reduce_sum %x axes [1] : {x} -> {tensor([6])}
%sk = dlc.reduce_sum %x axes [0] keep_dims : {x} -> {tensor([1, 64])}
%p = dlc.reduce_prod %small axes [1] : {tensor([6, 8])} -> {tensor([6])}
%mx = dlc.reduce_max %x axes [0, 1] : {x} -> tensor<f32>
%mn = dlc.reduce_min %x axes [1] : {x} -> {tensor([6])}
%am = dlc.argmax %x {{axis = 1 : i64}} : {x} -> {tensor([6], "i64")}
%an = dlc.argmin %x {{axis = 0 : i64, keep_dims}} : {x} -> {tensor([1, 64], "i64")}
%cs = dlc.cumsum %x {{axis = 1 : i64}} : {x}
%cx = dlc.cumsum %x {{axis = 0 : i64, exclusive, reverse}} : {x}
%tv, %ti = dlc.top_k %x {{axis = 1 : i64, k = 5 : i64, largest, sorted}} : {x} -> {tensor([6, 5])}, {tensor([6, 5], "i64")}
%bv, %bi = dlc.top_k %x {{axis = 0 : i64, k = 2 : i64, sorted}} : {x} -> {tensor([2, 64])}, {tensor([2, 64], "i64")}
"""
    results = [("s", "%s", tensor([6])), ("sk", "%sk", tensor([1, 64])),
               ("p", "%p", tensor([6])), ("mx", "%mx", "tensor<f32>"),
               ("mn", "%mn", tensor([6])),
               ("am", "%am", tensor([6], "i64")),
               ("an", "%an", tensor([1, 64], "i64")),
               ("cs", "%cs", x), ("cx", "%cx", x),
               ("tv", "%tv", tensor([6, 5])),
               ("ti", "%ti", tensor([6, 5], "i64")),
               ("bv", "%bv", tensor([2, 64])),
               ("bi", "%bi", tensor([2, 64], "i64"))]
    return ("reductions",
            ["reduce_sum", "reduce_prod", "reduce_max", "reduce_min",
             "argmax", "argmin", "cumsum", "top_k"],
            module([("x", x), ("small", tensor([6, 8]))], results, body),
            # Distinct values (no ties for argmax or top_k); products of 8
            # factors near 1.
            {"x": "distinct", "small": (0.5, 1.5)})


def ties_case():
    """The choices the evaluator makes for ties and NaN: argmax's first
    (last with select_last_index) of equal values and first NaN; top_k's
    NaN-first order for the largest, NaN-last for the smallest, equal
    values by position; integer scans."""
    x, i = tensor([4, 10]), tensor([4, 10], "i32")
    nan = np.nan
    data = np.array([[1, 3, 3, 2, 3, 0, 1, 2, 3, 1],
                     [2, nan, 5, 5, nan, 1, 0, 5, 2, 2],
                     [-1, -1, -1, -1, -1, -1, -1, -1, -1, -1],
                     [4, 2, 4, 1, 1, 0, 0, 4, 2, 1]], np.float32)
    body = f"""
%am = dlc.argmax %x {{axis = 1 : i64}} : {x} -> {tensor([4], "i64")}
%al = dlc.argmax %x {{axis = 1 : i64, select_last_index}} : {x} -> {tensor([4], "i64")}
%an = dlc.argmin %x {{axis = 1 : i64, select_last_index}} : {x} -> {tensor([4], "i64")}
%tv, %ti = dlc.top_k %x {{axis = 1 : i64, k = 4 : i64, largest, sorted}} : {x} -> {tensor([4, 4])}, {tensor([4, 4], "i64")}
%sv, %si = dlc.top_k %x {{axis = 1 : i64, k = 6 : i64, sorted}} : {x} -> {tensor([4, 6])}, {tensor([4, 6], "i64")}
%cs = dlc.cumsum %i {{axis = 1 : i64, reverse}} : {i}
%ce = dlc.cumsum %i {{axis = 0 : i64, exclusive}} : {i}
%mx = dlc.reduce_max %x axes [1] : {x} -> {tensor([4])}
"""
    results = [("am", "%am", tensor([4], "i64")),
               ("al", "%al", tensor([4], "i64")),
               ("an", "%an", tensor([4], "i64")),
               ("tv", "%tv", tensor([4, 4])),
               ("ti", "%ti", tensor([4, 4], "i64")),
               ("sv", "%sv", tensor([4, 6])),
               ("si", "%si", tensor([4, 6], "i64")),
               ("cs", "%cs", i), ("ce", "%ce", i),
               ("mx", "%mx", tensor([4]))]
    return ("ties and NaN", ["argmax", "argmin", "top_k", "cumsum",
                             "reduce_max"],
            module([("x", x), ("i", i)], results, body),
            {"x": data, "i": ("int", -1000, 1000)})


def matmul_conv_case(element, dtype):
    def t(shape):
        return tensor(shape, element)
    body = f"""
%mm = dlc.matmul %a, %b : {t([3, 5, 16])}, {t([16, 7])} -> {t([3, 5, 7])}
%y = dlc.conv %x, %w stride [2, 1] pad_low [1, 0] pad_high [1, 2] dilation [1, 2] groups 2 : {t([2, 4, 7, 6])}, {t([6, 2, 3, 2])} -> {t([2, 6, 4, 6])}
%y1 = dlc.conv %x1, %w1 stride [2] pad_low [1] pad_high [0] dilation [1] groups 1 : {t([2, 3, 9])}, {t([4, 3, 3])} -> {t([2, 4, 4])}
%dx = dlc.conv_grad_input %dy, %w stride [2, 1] pad_low [1, 0] pad_high [1, 2] dilation [1, 2] groups 2 : {t([2, 6, 4, 6])}, {t([6, 2, 3, 2])} -> {t([2, 4, 7, 6])}
%dw = dlc.conv_grad_filter %x, %dy stride [2, 1] pad_low [1, 0] pad_high [1, 2] dilation [1, 2] groups 2 : {t([2, 4, 7, 6])}, {t([2, 6, 4, 6])} -> {t([6, 2, 3, 2])}
%mp = dlc.max_pool %x window [2, 3] stride [2, 2] pad_low [0, 1] pad_high [1, 0] dilation [1, 1] : {t([2, 4, 7, 6])} -> {t([2, 4, 4, 3])}
%dmp = dlc.max_pool_grad %x, %dp window [2, 3] stride [2, 2] pad_low [0, 1] pad_high [1, 0] dilation [1, 1] : {t([2, 4, 7, 6])}, {t([2, 4, 4, 3])} -> {t([2, 4, 7, 6])}
%sp = dlc.sum_pool %x window [3, 3] stride [1, 2] pad_low [1, 1] pad_high [1, 0] dilation [1, 1] : {t([2, 4, 7, 6])} -> {t([2, 4, 7, 3])}
"""
    results = [("mm", "%mm", t([3, 5, 7])), ("y", "%y", t([2, 6, 4, 6])),
               ("y1", "%y1", t([2, 4, 4])), ("dx", "%dx", t([2, 4, 7, 6])),
               ("dw", "%dw", t([6, 2, 3, 2])),
               ("mp", "%mp", t([2, 4, 4, 3])),
               ("dmp", "%dmp", t([2, 4, 7, 6])),
               ("sp", "%sp", t([2, 4, 7, 3]))]
    args = [("a", t([3, 5, 16])), ("b", t([16, 7])), ("x", t([2, 4, 7, 6])),
            ("w", t([6, 2, 3, 2])), ("x1", t([2, 3, 9])), ("w1", t([4, 3, 3])),
            ("dy", t([2, 6, 4, 6])), ("dp", t([2, 4, 4, 3]))]
    # x distinct: max_pool has no ties, so its gradient has one route.
    inputs = {n: (-1, 1) for n, _ in args}
    inputs["x"] = "distinct"
    return (f"matmul, convolution, pooling ({dtype})",
            ["matmul", "conv", "conv_grad_input", "conv_grad_filter",
             "max_pool", "max_pool_grad", "sum_pool"],
            module(args, results, body), inputs)


def attention_case():
    q, lse = tensor([2, 2, 8, 16]), tensor([2, 2, 8])
    mask = tensor([1, 1, 8, 8])
    logits, labels, rows = tensor([6, 11]), tensor([6], "i64"), tensor([6])
    body = f"""
%o, %l = dlc.attention %q, %k, %v bias %mask scale 2.500000e-01 : {q}, {q}, {q}, {mask} -> {q}, {lse}
%dq, %dk, %dv = dlc.attention_grad %q, %k, %v, %o, %l, %do bias %mask scale 2.500000e-01 : {q}, {q}, {q}, {q}, {lse}, {q}, {mask} -> {q}, {q}, {q}
%ce, %clse = dlc.cross_entropy %logits, %labels ignore_index 3 label_smoothing 1.000000e-01 : {logits}, {labels} -> {rows}, {rows}
%dce = dlc.cross_entropy_grad %logits, %labels, %clse, %g ignore_index 3 label_smoothing 1.000000e-01 : {logits}, {labels}, {rows}, {rows} -> {logits}
"""
    results = [("o", "%o", q), ("l", "%l", lse), ("dq", "%dq", q),
               ("dk", "%dk", q), ("dv", "%dv", q), ("ce", "%ce", rows),
               ("clse", "%clse", rows), ("dce", "%dce", logits)]
    causal = np.where(np.tril(np.ones((8, 8))) > 0, 0.0,
                      -np.inf).astype(np.float32).reshape(1, 1, 8, 8)
    return ("attention, cross-entropy",
            ["attention", "attention_grad", "cross_entropy",
             "cross_entropy_grad"],
            module([("q", q), ("k", q), ("v", q), ("mask", mask), ("do", q),
                    ("logits", logits), ("labels", labels), ("g", rows)],
                   results, body),
            {"q": (-1, 1), "k": (-1, 1), "v": (-1, 1), "mask": causal,
             "do": (-1, 1), "logits": (-3, 3),
             "labels": np.array([0, 3, 10, 5, 3, 1], np.int64),
             "g": (0.5, 1.5)})


def state_case():
    x, s = tensor([4, 5]), tensor([5])
    prelude = (f'dlc.global @"bias" : {s} = dense<[0.5, -1.0, 2.0, 0.25, '
               f'-0.75]> : {s}\n'
               f'dlc.global @"count" : {s} = dense<1.0> : {s}\n')
    body = f"""
%b = dlc.global_load @"bias" : {s}
%c = dlc.global_load @"count" : {s}
%y = dlc.add %x, %b : {x}, {s} -> {x}
%one = dlc.constant dense<1.0> : tensor<f32>
%next = dlc.add %c, %one : {s}, tensor<f32> -> {s}
dlc.global_store @"count", %next : {s}
%seed = dlc.constant dense<42> : tensor<i64>
%d, %mask = dlc.dropout %y, %seed {{ratio = 0.25 : f64, stream = 1 : i64}} : {x}, tensor<i64> -> {tensor([4, 5], "i1")}
%u = dlc.random_uniform %seed {{stream = 1073741824 : i64}} : tensor<i64> -> {tensor([3, 7])}
%od, %omask = dlc.dropout %y, %seed offset %start {{ratio = 0.25 : f64, stream = 2 : i64}} : {x}, tensor<i64>, tensor<i64> -> {tensor([4, 5], "i1")}
%ou = dlc.random_uniform %seed offset %start {{stream = 1073741825 : i64}} : tensor<i64>, tensor<i64> -> {tensor([3, 7])}
"""
    results = [("d", "%d", x), ("mask", "%mask", tensor([4, 5], "i1")),
               ("u", "%u", tensor([3, 7])), ("od", "%od", x),
               ("omask", "%omask", tensor([4, 5], "i1")),
               ("ou", "%ou", tensor([3, 7]))]
    # A data-parallel rank's counter offset (dlc-data-parallel), past 2^32
    # so that it carries into the counter's high word.
    start = np.array((1 << 33) + 5, np.int64)
    return ("globals, random draws",
            ["global", "global_load", "global_store", "dropout",
             "random_uniform"],
            module([("x", x), ("start", "tensor<i64>")], results, body,
                   prelude),
            {"x": (-2, 2), "start": start})


CASES = [unary_case(), binary_case(), cast_case(), movement_case(),
         indexing_case(), reduction_case(), ties_case(),
         matmul_conv_case("f32", "float32"),
         matmul_conv_case("f64", "float64"), attention_case(), state_case()]
# Made by the compiler in every case.
STRUCTURAL = {"fusion": "dlc-fuse groups every case's kernels",
              "yield": "ends every dlc.fusion body"}
# Ops that need more than one process, checked by their own tests: per op,
# whether the CPU and CUDA compile it, and what checks it.
CUDA_COLLECTIVES = ("; on CUDA, steps of the session over NCCL, checked "
                    "against a fake NCCL of mirrored ranks (runtime/cuda/"
                    "test/CudaCollectivesTest.cpp, which runs one NCCL rank "
                    "where a GPU is lent; not yet run on one)")
MULTI_RANK = {
    "all_reduce": (True, True,
                   "data-parallel gradient buckets (dlc-compile --dp N): "
                   "dlc.plan.all_reduce steps over MPI ranks, checked "
                   "against one process by tests/models/"
                   "data_parallel_check.py (mpirun -np 2 and 4)" +
                   CUDA_COLLECTIVES),
}
# Among a tensor group (`tensor`): a class head's logits joined, each
# rank's first class and token; CPU ranks only so far.
TENSOR_SLICES = ("; among tensor ranks (--tp), the vocabulary-parallel "
                 "embedding, class head and cross-entropy, checked against "
                 "one process by tools/runner/test/tensor-parallel.test "
                 "(mpirun -np 2 and 4) and on the evaluator's simulated "
                 "ranks by passes/test/tensor-parallel-classes-numerics.test "
                 "(no CUDA path yet)")
# ZeRO-1's (dlc-compile --dp N --zero 1): ShardStep steps over MPI ranks.
MULTI_RANK["reduce_scatter"] = (
    True, True,
    "ZeRO-1 (--zero 1): ShardStep steps over MPI ranks, checked against one "
    "process by tests/models/data_parallel_check.py (mpirun -np 2 and 4) "
    "and on the evaluator's simulated ranks by passes/test/"
    "zero-numerics.test" + CUDA_COLLECTIVES)
MULTI_RANK["all_gather"] = (MULTI_RANK["reduce_scatter"][0],
                            MULTI_RANK["reduce_scatter"][1],
                            MULTI_RANK["reduce_scatter"][2] + TENSOR_SLICES)
MULTI_RANK["rank_shard"] = (
    True, True,
    "ZeRO-1's shards and each rank's offset into random draws (--dp): a "
    "ShardStep over MPI ranks, checked against one process by tests/models/"
    "data_parallel_check.py and tools/runner/test/data-parallel-draws.test "
    "(mpirun -np 2 and 4) and on the evaluator's simulated ranks by passes/"
    "test/zero-numerics.test and data-parallel-numerics.test" +
    CUDA_COLLECTIVES + TENSOR_SLICES)
# Megatron-LM's pair (dlc-compile --tp N): CPU ranks only so far.
TENSOR_PARALLEL = ("checked against one device by tools/runner/test/"
                   "tensor-parallel.test (mpirun -np 2 and 4) and on the "
                   "evaluator's simulated ranks by passes/test/"
                   "tensor-parallel-numerics.test; no CUDA path yet")
MULTI_RANK["tp_copy"] = (
    True, False,
    "tensor parallelism (--tp): the identity, which dlc-decompose removes "
    "once autodiff has read it; " + TENSOR_PARALLEL)
MULTI_RANK["tp_reduce"] = (
    True, False,
    "tensor parallelism (--tp): dlc.plan.all_reduce steps among each "
    "tensor group over MPI ranks; " + TENSOR_PARALLEL)
# Pipeline parallelism (dlc-compile --pp N): CPU ranks only so far.
MULTI_RANK["pp_transfer"] = (
    True, False,
    "pipeline parallelism (--pp): a value one stage sends another, a "
    "TransferStep over MPI ranks, checked against one process by tools/"
    "runner/test/pipeline-parallel.test and tests/models/"
    "data_parallel_check.py (mpirun -np 2 and 4) and on the evaluator's "
    "simulated stages by passes/test/pipeline-numerics.test; no CUDA path "
    "yet")

# ---------------------------------------------------------------------------


def dialect_ops(build):
    """The dlc ops the dialect declares (tablegen's op declarations)."""
    with open(os.path.join(build, "ir", "DLCOps.h.inc")) as f:
        names = set(re.findall(r'StringLiteral\("dlc\.([a-z_0-9]+)"\)',
                               f.read()))
    if not names:
        raise RuntimeError("no op names in DLCOps.h.inc")
    return names


def draw(spec, shape, element, rng):
    dtype = {"f32": np.float32, "f64": np.float64, "i32": np.int32,
             "i64": np.int64, "i1": np.bool_}[element]
    if isinstance(spec, np.ndarray):
        return spec.astype(dtype).reshape(shape)
    if spec == "bool":
        return rng.random(shape) < 0.5
    if spec == "distinct":
        count = int(np.prod(shape))
        return (rng.permutation(count) / count * 4 - 2).astype(dtype) \
            .reshape(shape)
    if spec[0] == "int":
        return rng.integers(spec[1], spec[2], size=shape).astype(dtype)
    return rng.uniform(spec[0], spec[1], size=shape).astype(dtype)


def arguments(text, inputs, rng):
    """The seeded input arrays of a case's @forward, by name."""
    signature = text[text.index("@forward("):text.index(") -> (")]
    values = {}
    for name, body in re.findall(r'%(\w+): tensor<([^>]*)>', signature):
        parts = body.split("x")
        shape, element = [int(p) for p in parts[:-1]], parts[-1]
        values[name] = draw(inputs[name], shape, element, rng)
    return values


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        raise RuntimeError(f"{os.path.basename(cmd[0])}: "
                           f"{proc.stderr.strip()[-2000:]}")


def compare(want, got):
    """Problems of `got` against the evaluator's `want`, and the largest
    relative float difference."""
    problems, worst = [], 0.0
    for name in want:
        a, b = want[name], got.get(name)
        if b is None:
            problems.append(f"{name}: missing")
            continue
        if a.shape != b.shape:
            problems.append(f"{name}: shape {b.shape}, expected {a.shape}")
            continue
        if a.dtype.kind != "f":
            if not np.array_equal(a, b):
                problems.append(f"{name}: {np.count_nonzero(a != b)} of "
                                f"{a.size} elements differ")
            continue
        same = np.isnan(a) == np.isnan(b)
        if not same.all():
            problems.append(f"{name}: NaN in different places")
            continue
        finite, infinite = np.isfinite(a), np.isinf(a)
        if not (infinite == np.isinf(b)).all() or \
                not (a[infinite] == b[infinite]).all():
            problems.append(f"{name}: infinities differ")
            continue
        scale = float(np.abs(a[finite]).max(initial=0)) or 1.0
        diff = float(np.abs(b[finite].astype(np.float64) -
                            a[finite]).max(initial=0)) / scale
        worst = max(worst, diff)
        tolerance = TOLERANCE[a.dtype.name]
        if diff > tolerance:
            problems.append(f"{name}: max difference {diff:.2e} of the "
                            f"largest magnitude (tolerance {tolerance:g})")
    return problems, worst


def run_cuda(module_path, values, work, flatc):
    data = read_module(flatc, module_path, work, defaults=True)
    lib = emulation.build_kernels(data, module_path + ".so")
    fn = next(f for f in data["functions"] if f["name"] == "forward")
    args = dict(values)
    for a in fn["arguments"]:
        if a["name"] not in args:
            # A global's initial value; the module stores none for zeros.
            dtype = emulation.DTYPES[a["type"]["dtype"]]
            initial = data["globals"][a["global"]].get("initial_value")
            args[a["name"]] = (
                np.frombuffer(bytes(initial), dtype) if initial
                else np.zeros(int(np.prod(a["type"]["shape"])), dtype)
            ).reshape(a["type"]["shape"])
    return emulation.run(data, "forward", args,
                         emulation.cuda_launcher(data, lib), 0)


def check_case(case, index, args, totals):
    name, ops, text, inputs = case
    base = os.path.join(args.work, f"case{index}")
    with open(base + ".mlir", "w") as f:
        f.write(text)
    values = arguments(text, inputs, np.random.default_rng(SEED + index))
    np.savez(base + ".in.npz", **values)
    bin_dir = os.path.join(args.build, "bin")
    run([os.path.join(bin_dir, "dlc-run"), "--interpret", base + ".mlir",
         "--inputs", base + ".in.npz", "--outputs", base + ".want.npz"])
    with np.load(base + ".want.npz") as f:
        want = {k: f[k] for k in f.files}
    outcome = {}
    for target in ["cpu", "cuda"]:
        start = time.monotonic()
        module_path = f"{base}.{target}.dlcm"
        try:
            run([os.path.join(bin_dir, "dlc-compile"), base + ".mlir",
                 "--target", target, "--cuda-arch", CUDA_ARCH, "-o",
                 module_path])
            if target == "cpu":
                run([os.path.join(bin_dir, "dlc-run"), module_path,
                     "--inputs", base + ".in.npz", "--outputs",
                     base + ".cpu.npz"])
                with np.load(base + ".cpu.npz") as f:
                    got = {k: f[k] for k in f.files}
            else:
                got = run_cuda(module_path, values, args.work, args.flatc)
            problems, worst = compare(want, got)
        except (RuntimeError, subprocess.CalledProcessError) as e:
            if emulation.NO_NVRTC in str(e):
                raise
            problems, worst = [str(e)], 0.0
        line = (f"{name} on {target} ({', '.join(ops)}): {len(want)} "
                f"results, max difference {worst:.1e} "
                f"({time.monotonic() - start:.1f} s)")
        if problems:
            print(f"FAIL {line}:\n  " + "\n  ".join(problems), flush=True)
        else:
            print(f"PASS {line}", flush=True)
        outcome[target] = not problems
        totals[target] += 1
        totals["failed"] += bool(problems)
    return outcome


def table(coverage, ops):
    """The op x target table (markdown)."""
    lines = ["| op | CPU | CUDA | case |", "|---|---|---|---|"]
    for op in sorted(ops):
        if op in STRUCTURAL:
            lines.append(f"| {op} | yes | yes | {STRUCTURAL[op]} |")
            continue
        if op in MULTI_RANK:
            cpu, cuda, case = MULTI_RANK[op]
            lines.append(f"| {op} | {'yes' if cpu else 'NO'} | "
                         f"{'yes' if cuda else 'NO'} | {case} |")
            continue
        cases, cpu, cuda = coverage.get(op, ([], False, False))
        lines.append(f"| {op} | {'yes' if cpu else 'NO'} | "
                     f"{'yes' if cuda else 'NO'} | {'; '.join(cases)} |")
    return "\n".join(lines) + "\n"


TABLE_HEAD = """# Op coverage: every dlc op, compiled, on every target

Written by `tests/coverage/op_coverage.py --write-table`; the ctest
`coverage.ops` checks it is current. "yes": the op's case compiles with
`dlc-compile --target cpu` (run by the runtime) and `--target cuda` (run
through the CUDA emulation, tests/models/cuda_emulation) and matches the
reference evaluator (float32 within 2e-5 of each result's largest
magnitude, float64 within 1e-12, integers and bools exactly). The gradient
ops (`*_grad`, `conv_grad_*`) are covered as ops of their own; every
forward op's gradient is built from the ops in this table. bfloat16 and
float16 (mixed precision) are checked by the model tests
(tests/models/cuda_emulation_check.py, codegen/test/low-precision-*.test).

Not compiled, for want of a library kernel or a generated one: matmuls of
integers, and scatter_elements whose updates are bfloat16 or float16.
`dlc-compile` refuses a module with such ops in one error that lists each
of them with its ONNX node.

"""


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--build", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--flatc", default=shutil.which("flatc"))
    p.add_argument("--table", help="the committed table to check")
    p.add_argument("--write-table", action="store_true",
                   help="write --table instead of checking it")
    p.add_argument("-k", default="", help="only cases whose name has this")
    args = p.parse_args()
    missing = emulation.missing_tool(args.flatc)
    if missing:
        print(f"SKIP: no {missing}")
        return SKIP
    os.makedirs(args.work, exist_ok=True)
    ops = dialect_ops(args.build)
    covered = ({op for case in CASES for op in case[1]} | set(STRUCTURAL)
               | set(MULTI_RANK))
    failed = 0
    for op in sorted(ops - covered):
        print(f"FAIL {op}: no case covers this dialect op")
        failed += 1
    for op in sorted(covered - ops):
        print(f"FAIL {op}: a case covers an op the dialect does not have")
        failed += 1
    totals = {"cpu": 0, "cuda": 0, "failed": 0}
    coverage = {}
    for index, case in enumerate(CASES):
        if args.k not in case[0]:
            continue
        try:
            outcome = check_case(case, index, args, totals)
        except RuntimeError as e:
            print(f"SKIP: {e}")
            return SKIP
        for op in case[1]:
            cases, cpu, cuda = coverage.get(op, ([], True, True))
            coverage[op] = (cases + [case[0]], cpu and outcome["cpu"],
                            cuda and outcome["cuda"])
    failed += totals["failed"]
    checks = totals["cpu"] + totals["cuda"]
    if args.table and not args.k:
        text = TABLE_HEAD + table(coverage, ops)
        if args.write_table:
            with open(args.table, "w") as f:
                f.write(text)
        else:
            with open(args.table) as f:
                if f.read() != text:
                    print(f"FAIL {args.table} is not current: run "
                          f"tests/coverage/op_coverage.py --write-table")
                    failed += 1
    print(f"{len(ops)} dialect ops; {checks - totals['failed']} passed, "
          f"{failed} failed")
    return 0 if failed == 0 and checks else 1


if __name__ == "__main__":
    sys.exit(main())
