#!/usr/bin/python3
"""Runs dlc's evaluator on the exported PyTorch models and compares with PyTorch.

For every case export.py wrote (6 models x opsets 13, 14, 17 x train/eval):
  dlc-run --interpret M.onnx --inputs M.inputs.npz --outputs OUT.npz --batch-size B
(B, the model's test batch, from M.json), then each output listed in M.json is
checked against the same model run by PyTorch in float64 (M.expected64.npz,
"ref64"), elementwise:
  |dlc - ref64| <= K * E + rtol * |ref64| + atol
where
  - E = max |torch32 - ref64| over the output: PyTorch's own float32 error on
    it (M.expected.npz is torch32). dlc rounds to float32 where PyTorch does,
    so an equally accurate evaluator is about E from the exact result (but
    not at the same elements: where PyTorch happens to land on the exact
    value, dlc has no reason to, so the elementwise distance is no bound:
    measured, dlc is up to 440x PyTorch's error at single elements while at
    most 0.62x E). This is what makes ill-conditioned outputs checkable:
    train-mode BatchNorm over few samples (mobilenet_v2's near-dead
    depthwise channels) amplifies rounding to ~1e-3 relative in PyTorch
    itself, and no float32 evaluator can be asked to do better.
  - K = REFERENCE_ERROR_FACTOR (4): dlc may be at most 4x as far from the
    exact result as PyTorch float32 is. Equal accuracy is ~1x (measured at
    most 0.62x over the 30 cases); the margin allows for E itself varying
    between machines, since PyTorch's CPU kernels pick blocking and vector
    width at run time.
  - rtol = 1e-4, the requirement ("the evaluator's outputs match PyTorch's
    within 1e-4 relative") for well-conditioned outputs, where K * E is tiny.
  - atol = ATOL_ULPS (2) float32 ulps of max|ref64|: the final rounding to
    float32 alone, for entries near zero of an output PyTorch computed
    exactly (E = 0); at least ATOL_FLOOR (1e-7, an ulp of 1, the inputs'
    scale) for an output that is all zeros.
Infinities must be equal, NaN matches NaN (np.isclose with equal_nan).
Integer and bool outputs must equal PyTorch's exactly.

Prints `PASS name` (with, per output, the worst err/tol and dlc's max abs and
max relative error against torch32) or `FAIL name: why` per case, then
`N passed, M failed`; exits non-zero if any case failed or none ran. A case
that could not be exported counts as failed, never as passed.

Usage: /usr/bin/python3 tests/models/check_models.py --dlc-run build/bin/dlc-run
           --work /tmp/exported [--rtol 1e-4] [--atol X] [--models mlp,gpt]
           [--opsets 13] [--modes train] [--jobs 2] [--timeout 600]
"""

import argparse
import concurrent.futures
import json
import os
import subprocess
import sys

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import export  # noqa: E402  (fingerprint, case names and files)
import models  # noqa: E402

# The terms of the tolerance; each one's reason is in the docstring above.
# K: how many times PyTorch float32's own error dlc may be from the exact
# result (equal accuracy measures <= 0.62x; 4 absorbs machine variation).
REFERENCE_ERROR_FACTOR = 4.0
# atol: the output's final rounding to float32, in ulps of its largest value.
ATOL_ULPS = 2.0
# atol's floor, for an all-zero output: an ulp of 1, the inputs' scale.
ATOL_FLOOR = 1e-7
F32_EPS = float(np.finfo(np.float32).eps)


def ensure_exported(work: str):
    """Runs export.py into `work` unless a complete, current export is there."""
    manifest = os.path.join(work, "manifest.json")
    try:
        with open(manifest) as f:
            data = json.load(f)
        if data.get("fingerprint") == export.fingerprint() and all(
                case_complete(os.path.join(work, c))
                for c in data.get("cases", [])):
            return
    except (OSError, ValueError):
        pass
    print(f"exporting models into {work} ...", flush=True)
    subprocess.run([sys.executable, os.path.join(HERE, "export.py"),
                    "--out", work], check=True)


def case_complete(base: str) -> bool:
    """True if the case's .json and, unless it was skipped, its files exist."""
    with open(base + ".json") as f:
        meta = json.load(f)
    return "skipped" in meta or all(os.path.exists(base + ext)
                                    for ext in export.CASE_FILES)


def tail(text: str, lines: int = 8) -> str:
    kept = [ln for ln in text.strip().splitlines() if ln.strip()][-lines:]
    return " | ".join(kept) if kept else "(no output)"


def compare(name: str, actual: np.ndarray, torch32: np.ndarray,
            ref64: np.ndarray, rtol: float, atol):
    """Checks one output (see above). Returns (why, note): `why` is None if it
    matches, else a sentence saying how not; `note` reports the worst
    err/tol and the error against torch32."""
    if actual.shape != torch32.shape:
        return (f"output '{name}' has shape {list(actual.shape)}, "
                f"expected {list(torch32.shape)}"), ""
    if torch32.dtype.kind in "iub":
        if actual.dtype.kind not in "iub":
            return (f"output '{name}' has dtype {actual.dtype}, "
                    f"expected {torch32.dtype}"), ""
        bad = actual != torch32
        if bad.any():
            idx = np.unravel_index(np.argmax(bad), bad.shape)
            return (f"output '{name}': {int(bad.sum())} of {bad.size} entries "
                    f"differ, first at index {list(map(int, idx))}: got "
                    f"{actual[idx]}, expected {torch32[idx]}"), ""
        return None, ""
    if actual.dtype.kind != "f":
        return (f"output '{name}' has dtype {actual.dtype}, "
                f"expected {torch32.dtype}"), ""
    a = actual.astype(np.float64)
    t = torch32.astype(np.float64)
    r = ref64.astype(np.float64)
    finite = np.isfinite(r)
    scale = float(np.max(np.abs(r[finite]))) if finite.any() else 0.0
    if atol is None:
        atol = max(ATOL_ULPS * F32_EPS * scale, ATOL_FLOOR)
    both = finite & np.isfinite(t)
    ref_err = float(np.max(np.abs(t[both] - r[both]))) if both.any() else 0.0
    tol = REFERENCE_ERROR_FACTOR * ref_err + atol + rtol * np.abs(r)
    with np.errstate(invalid="ignore", divide="ignore"):
        err = np.abs(a - r)
        # np.isclose's rules: an infinity only matches the same infinity
        # (the formula would accept any finite value against ref64 = inf, as
        # inf <= inf), NaN matches NaN.
        inf = np.isinf(a) | np.isinf(r)
        nan = np.isnan(a) | np.isnan(r)
        ok = np.where(nan, np.isnan(a) & np.isnan(r),
                      np.where(inf, a == r, err <= tol))
        # What is reported: dlc's error against PyTorch float32, and how
        # close to the tolerance it came.
        vs32 = np.abs(a - t)
        rel32 = vs32 / np.abs(t)
        regular = ~(nan | inf)
        ratio = np.where(regular, err / np.where(tol > 0, tol, 1), 0.0)
    def worst(x):
        x = x[regular & np.isfinite(x)]
        return float(np.max(x)) if x.size else 0.0
    note = (f"{name}: err/tol {worst(ratio):.3f}, vs torch32 max abs err "
            f"{worst(vs32):.2e}, max rel err {worst(rel32):.2e}")
    if ok.all():
        return None, note
    bad = ~ok
    # The worst entry: a wrong infinity or NaN first, else the largest
    # err/tol.
    idx = np.unravel_index(np.argmax(np.where(bad, np.where(
        regular, ratio, np.inf), -1.0)), bad.shape)
    if regular[idx]:
        why = (f"tolerance {tol[idx]:.2e} = {REFERENCE_ERROR_FACTOR:g} x "
               f"{ref_err:.2e} + {atol:.2e} + {rtol:.0e} x |ref|")
    else:
        why = "infinities and NaN must match exactly"
    return (f"output '{name}' at index {list(map(int, idx))}: got "
            f"{a[idx]:.8g}, float64 reference {r[idx]:.8g} (torch32 "
            f"{t[idx]:.8g}), {why}; {int(bad.sum())} of {bad.size} entries "
            f"out of tolerance; {note}"), note


def run_case(case: str, args) -> (bool, str):
    base = os.path.join(args.work, case)
    with open(base + ".json") as f:
        meta = json.load(f)
    if "skipped" in meta:
        return False, f"FAIL {case}: not exported: {meta['skipped']}"

    out_dir = os.path.join(args.work, "results")
    os.makedirs(out_dir, exist_ok=True)
    out = os.path.join(out_dir, case + ".npz")
    if os.path.exists(out):
        os.remove(out)
    cmd = [args.dlc_run, "--interpret", base + ".onnx",
           "--inputs", base + ".inputs.npz", "--outputs", out,
           "--batch-size", str(meta["batch_size"])]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True,
                              timeout=args.timeout)
    except subprocess.TimeoutExpired:
        return False, f"FAIL {case}: dlc-run timed out after {args.timeout} s"
    except OSError as e:
        return False, f"FAIL {case}: cannot run {args.dlc_run}: {e}"
    if proc.returncode != 0:
        return False, (f"FAIL {case}: dlc-run exited with {proc.returncode}: "
                       f"{tail(proc.stderr or proc.stdout)}")
    try:
        with np.load(out) as f:
            actual = dict(f)
    except Exception as e:  # a missing or unreadable file is a tool bug
        return False, f"FAIL {case}: cannot read {out}: {e}"

    torch32 = dict(np.load(base + ".expected.npz"))
    ref64 = dict(np.load(base + ".expected64.npz"))
    notes = []
    for name in meta["outputs"]:
        if name not in actual:
            return False, (f"FAIL {case}: output '{name}' missing from "
                           f"{os.path.basename(out)} (has: "
                           f"{', '.join(sorted(actual)) or 'nothing'})")
        why, note = compare(name, actual[name], torch32[name], ref64[name],
                            args.rtol, args.atol)
        if why:
            return False, f"FAIL {case}: {why}"
        if note:
            notes.append(note)
    line = f"PASS {case}"
    if notes:
        line += "  (" + "; ".join(notes) + ")"
    return True, line


def main(argv=None) -> int:
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--dlc-run", required=True, help="path to dlc-run")
    p.add_argument("--work", required=True,
                   help="directory for the exported models and results")
    p.add_argument("--rtol", type=float, default=1e-4)
    p.add_argument("--atol", type=float, default=None,
                   help="one atol for every output (default: ATOL_ULPS "
                        "float32 ulps of the output's largest value, at "
                        "least ATOL_FLOOR)")
    p.add_argument("--models", default=",".join(models.MODELS))
    p.add_argument("--opsets", default=",".join(map(str, export.ALL_OPSETS)))
    p.add_argument("--modes", default=",".join(export.ALL_MODES))
    p.add_argument("--jobs", type=int, default=1,
                   help="cases run at once (default 1)")
    p.add_argument("--timeout", type=float, default=600,
                   help="seconds allowed per dlc-run call")
    args = p.parse_args(argv)

    if not (os.path.isfile(args.dlc_run) and os.access(args.dlc_run, os.X_OK)):
        p.error(f"--dlc-run '{args.dlc_run}' is not an executable file")
    args.work = os.path.abspath(args.work)
    ensure_exported(args.work)

    cases = [export.case_name(m, int(o), mode)
             for m in args.models.split(",") if m
             for o in args.opsets.split(",") if o
             for mode in args.modes.split(",") if mode]
    missing = [c for c in cases
               if not os.path.exists(os.path.join(args.work, c + ".json"))]
    if missing:
        p.error(f"not exported (unknown model, opset or mode?): "
                f"{', '.join(missing)}")

    passed = failed = 0
    with concurrent.futures.ThreadPoolExecutor(max(1, args.jobs)) as pool:
        # map() yields in submission order, so the report order is stable.
        for ok, line in pool.map(lambda c: run_case(c, args), cases):
            print(line, flush=True)
            passed += ok
            failed += not ok
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 and passed > 0 else 1


if __name__ == "__main__":
    sys.exit(main())
