#!/usr/bin/env python3
"""Checks dlc's gradient rules against finite differences and torch.autograd.

    gradcheck.py CASES.py [CASES.py...] --build BUILD_DIR [-k SUBSTRING]

Each CASES.py defines CASES, a list of Case: a float64 MLIR function @f, its
inputs, and the same function in PyTorch. For each case, on seeded random
inputs and random result cotangents, `dlc-run --gradcheck` evaluates the
gradient of sum_i <cotangent_i, f_i(x)> by dlc's autodiff and by central
finite differences (both on the reference evaluator); this script also
computes it with torch.autograd and compares all three, and compares f's
results with PyTorch's. Prints one line per case and exits 1 if any fails.
"""
import argparse
import importlib.util
import os
import subprocess
import sys
import tempfile

import numpy as np
import torch

# Finite differences in float64 with a relative step of 1e-6 are accurate
# to about 1e-9 relative on smooth functions (truncation ~h^2, rounding
# ~eps/h); 1e-6 leaves room for curvature. Autodiff and torch.autograd
# compute the same float64 formulas in a different order: 1e-10.
FD_TOL = 1e-6
TORCH_TOL = 1e-10


class Spec:
    """How to make one input."""

    def __init__(self, make):
        self.make = make


def rand(*shape, low=-2.0, high=2.0):
    return Spec(lambda rng: rng.uniform(low, high, size=shape).astype(np.float64))


def positive(*shape, low=0.5, high=2.0):
    return rand(*shape, low=low, high=high)


def data(array):
    array = np.asarray(array)
    return Spec(lambda rng: array.copy())


class Case:
    def __init__(self, name, mlir, torch, inputs, fd=True, tol=None):
        self.name, self.mlir, self.torch = name, mlir, torch
        self.inputs, self.fd, self.tol = inputs, fd, tol


def load_cases(path):
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    spec = importlib.util.spec_from_file_location(
        os.path.splitext(os.path.basename(path))[0], path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.CASES


def close(actual, expected, tol):
    actual, expected = np.asarray(actual, np.float64), np.asarray(expected, np.float64)
    if actual.shape != expected.shape:
        return False, f"shape {actual.shape} != {expected.shape}"
    err = np.abs(actual - expected)
    bound = tol * (1 + np.abs(expected))
    if np.all(err <= bound):
        return True, f"{err.max() if err.size else 0:.1e}"
    i = np.unravel_index(np.argmax(err - bound), err.shape)
    return False, f"at {i}: {actual[i]!r} vs {expected[i]!r}"


def run_case(case, build, workdir, seed):
    rng = np.random.default_rng(seed)
    inputs = [spec.make(rng) for spec in case.inputs]
    mlir_path = os.path.join(workdir, "f.mlir")
    with open(mlir_path, "w") as f:
        f.write(case.mlir)

    # PyTorch: results, then gradients against random cotangents.
    # Integer data (indices) reaches PyTorch as int64, its index type.
    tensors = [torch.tensor(x, requires_grad=True) if x.dtype == np.float64
               else torch.tensor(x.astype(np.int64)) if x.dtype.kind in "iu"
               else torch.tensor(x) for x in inputs]
    results = case.torch(*tensors)
    if not isinstance(results, tuple):
        results = (results,)
    cotangents = {}
    pairing = 0
    for i, r in enumerate(results):
        if r is not None and r.dtype == torch.float64:
            c = rng.uniform(-1, 1, size=tuple(r.shape))
            cotangents[f"result{i}"] = c
            pairing = pairing + (r * torch.tensor(c)).sum()
    float_args = [k for k, x in enumerate(inputs) if x.dtype == np.float64]
    torch_grads = {}
    if torch.is_tensor(pairing) and pairing.requires_grad:
        grads = torch.autograd.grad(pairing, [tensors[k] for k in float_args],
                                    allow_unused=True)
        for k, g in zip(float_args, grads):
            torch_grads[k] = (np.zeros_like(inputs[k]) if g is None
                              else g.detach().numpy())
    else:
        torch_grads = {k: np.zeros_like(inputs[k]) for k in float_args}

    in_path = os.path.join(workdir, "in.npz")
    cot_path = os.path.join(workdir, "cot.npz")
    out_path = os.path.join(workdir, "out.npz")
    np.savez(in_path, **{f"arg{k}": x for k, x in enumerate(inputs)})
    np.savez(cot_path, **cotangents)
    proc = subprocess.run(
        [os.path.join(build, "bin", "dlc-run"), "--interpret", mlir_path,
         "--function", "f", "--inputs", in_path, "--gradcheck", cot_path,
         "--outputs", out_path], capture_output=True, text=True)
    if proc.returncode != 0:
        return False, "dlc-run failed: " + proc.stderr.strip()
    out = np.load(out_path)
    notes = []
    for i, r in enumerate(results):
        if r is None:
            continue
        ok, note = close(out[f"result{i}"], r.detach().numpy(), TORCH_TOL)
        if not ok:
            return False, f"result {i} differs from PyTorch {note}"
    for k in float_args:
        grad = out[f"grad{k}"]
        ok, note = close(grad, torch_grads[k], case.tol or TORCH_TOL)
        if not ok:
            return False, f"gradient of arg{k} differs from torch.autograd {note}"
        notes.append(f"torch {note}")
        if case.fd:
            ok, note = close(grad, out[f"fd_grad{k}"], case.tol or FD_TOL)
            if not ok:
                return False, f"gradient of arg{k} differs from finite differences {note}"
            notes.append(f"fd {note}")
    return True, ", ".join(notes)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("cases", nargs="+")
    parser.add_argument("--build", required=True)
    parser.add_argument("-k", default="", help="run cases whose name contains this")
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args()
    failures = total = 0
    with tempfile.TemporaryDirectory() as workdir:
        for path in args.cases:
            for case in load_cases(path):
                if args.k not in case.name:
                    continue
                total += 1
                try:
                    ok, note = run_case(case, args.build, workdir, args.seed)
                except Exception as e:  # a broken case is a failure, not a crash
                    ok, note = False, f"{type(e).__name__}: {e}"
                print(f"{'PASS' if ok else 'FAIL'} {case.name}: {note}")
                failures += not ok
    print(f"{total - failures} of {total} gradient cases pass")
    return 1 if failures or total == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
