"""Shared helpers of the training numeric tests (check_losses.py,
check_optimizers.py): running dlc-opt pipelines and dlc-run on small
hand-written modules, comparing arrays, and reporting one line per case.

Both scripts take `--build BUILD_DIR` (dlc-opt and dlc-run in BUILD_DIR/bin)
and `-k SUBSTRING` (run the cases whose name contains it), print PASS/FAIL
per case and a count, and exit 1 if any case fails or none ran.
"""
import argparse
import os
import subprocess
import sys
import tempfile

import numpy as np


class ToolError(Exception):
    """A dlc tool failed; the message holds its command and stderr."""


class Tools:
    """dlc-opt and dlc-run of a build tree, working in a temporary folder."""

    def __init__(self, build, workdir):
        self.opt = os.path.join(build, "bin", "dlc-opt")
        self.run = os.path.join(build, "bin", "dlc-run")
        self.workdir = workdir
        self.count = 0

    def _path(self, suffix):
        self.count += 1
        return os.path.join(self.workdir, f"{self.count}{suffix}")

    def _call(self, argv):
        proc = subprocess.run(argv, capture_output=True, text=True)
        if proc.returncode != 0:
            raise ToolError(" ".join(argv) + ":\n" + proc.stderr.strip())
        return proc.stdout

    def pipeline(self, mlir, passes):
        """Runs `dlc-opt` with `passes` (a list of pass arguments such as
        "--dlc-add-loss=loss=mse") on the module text `mlir`; returns the
        path of the resulting module."""
        source, result = self._path(".mlir"), self._path(".mlir")
        with open(source, "w") as f:
            f.write(mlir)
        self._call([self.opt, source, *passes, "-o", result])
        return result

    def call(self, module, function, inputs):
        """Runs `function` of the module file `module` on the reference
        evaluator; `inputs` maps argument names (dlc.name, else argN) to
        arrays. Returns the results by name (dlc.name, else resultN)."""
        in_path, out_path = self._path(".npz"), self._path(".npz")
        np.savez(in_path, **inputs)
        self._call([self.run, "--interpret", module, "--function", function,
                    "--inputs", in_path, "--outputs", out_path])
        with np.load(out_path) as out:
            return {name: out[name] for name in out.files}


def close(actual, expected, rtol, atol):
    """IREE's e2e comparison, |a - b| <= atol + rtol |b| elementwise, with
    equal shapes. Returns (ok, note): the largest error, or where it fails."""
    actual = np.asarray(actual, np.float64)
    expected = np.asarray(expected, np.float64)
    if actual.shape != expected.shape:
        return False, f"shape {actual.shape} != {expected.shape}"
    err = np.abs(actual - expected)
    bound = atol + rtol * np.abs(expected)
    if np.all(err <= bound):
        return True, f"{err.max() if err.size else 0.0:.1e}"
    i = np.unravel_index(np.argmax(err - bound), err.shape)
    return False, f"at {i}: {actual[i]!r} vs {expected[i]!r}"


class Mismatch(Exception):
    """A compared value differs; the message names it."""


def expect_close(what, actual, expected, rtol, atol):
    """Raises Mismatch naming `what` unless `actual` is close to `expected`;
    returns the largest error otherwise."""
    ok, note = close(actual, expected, rtol, atol)
    if not ok:
        raise Mismatch(f"{what} differs from PyTorch {note}")
    return float(note)


def mlir_dense(array):
    """An array as an MLIR dense literal of its own element type, each
    value written so that it parses back to the same number."""
    array = np.asarray(array)

    def text(a):
        if a.ndim == 0:
            # 17 significant digits read back as the same double, hence as
            # the same float32 for a widened one; MLIR wants the point.
            return "%.17e" % a.item() if a.dtype.kind == "f" else str(a.item())
        return "[" + ", ".join(text(x) for x in a) + "]"

    return f"dense<{text(array)}>"


def mlir_type(shape, element):
    return "tensor<" + "".join(f"{d}x" for d in shape) + element + ">"


def main(description, cases, run_case):
    """Parses the command line and runs `run_case(tools, case)` for each
    case (objects with a `name`), reporting PASS/FAIL with its note."""
    parser = argparse.ArgumentParser(description=description)
    parser.add_argument("--build", required=True,
                        help="the build folder, with bin/dlc-opt and bin/dlc-run")
    parser.add_argument("-k", default="", help="run cases whose name contains this")
    args = parser.parse_args()
    failures = total = 0
    with tempfile.TemporaryDirectory() as workdir:
        tools = Tools(args.build, workdir)
        for case in cases:
            if args.k not in case.name:
                continue
            total += 1
            try:
                note = run_case(tools, case)
                ok = True
            except (ToolError, Mismatch) as e:
                ok, note = False, str(e)
            except Exception as e:  # a broken case fails; the others still run
                ok, note = False, f"{type(e).__name__}: {e}"
            print(f"{'PASS' if ok else 'FAIL'} {case.name}: {note}", flush=True)
            failures += not ok
    print(f"{total - failures} of {total} cases pass")
    return 1 if failures or total == 0 else 0


if __name__ == "__main__":
    sys.exit("common.py holds helpers; run check_losses.py or check_optimizers.py")
