"""Every generated CUDA kernel of the seven models compiles, and the kernels
take the shapes the CUDA code generator promises. Each model
(tests/models/models.py, exported for training) is compiled with
`dlc-compile --train --target cuda`, which generates the kernels of @forward
and @train_step and compiles them with NVRTC to sm_80 and sm_90a cubins and
compute_80 PTX. The module is then read back with flatc (its JSON view of
runtime/module/dlcm.fbs) and checked:
  - it holds a cubin for each architecture;
  - a kernel step runs more than one thread per iteration exactly when its
    kernel's PTX holds warp shuffles (shfl.sync), and more than 32 (a block
    per iteration) exactly when it also holds barriers (bar.sync) and is
    compiled for blocks of that size (.maxntid): the split reductions need
    their threads, and a thread-per-iteration kernel given 32 would compute
    every iteration 32 times;
  - every 16-byte aligned view of a kernel's 4-byte elements
    (`__builtin_assume_aligned(..., 16)` in its source, one per buffer of an
    elementwise group) became a 16-byte access in its PTX (at least as many
    ld.global.v4 and st.global.v4 as views read and written), in the kernels
    that run several fusions' kernels in one launch (horizontal fusion,
    codegen/HorizontalFusion.h) as in the others;
and across the seven models:
  - some kernel reduces with warp shuffles, and some with a whole block;
  - some kernel reads and writes 16 bytes at a time (ld.global.v4 and
    st.global.v4: NVVM merged an elementwise group's accesses);
  - some matmul step applies a bias epilogue (a folded fusion);
  - resnet18's optimizer updates (the kernel steps that write parameters)
    take at most UPDATE_LAUNCHES launches, where each parameter's update is
    a kernel of its own.
Each model's line reports the kernel steps of train_step, and how many
kernels they run (the steps there would be without horizontal fusion).
No GPU is needed. Where NVRTC cannot be loaded the test exits 77, which
ctest reports as skipped (never as passed).

Usage: /usr/bin/python3 tests/models/cuda_kernels_check.py
           --dlc-compile build/bin/dlc-compile --work DIR [--flatc flatc]
"""

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import models  # noqa: E402
import train_check  # noqa: E402  (prepare, BATCH)

SKIP = 77
NO_NVRTC = "needs NVRTC"
SCHEMA = os.path.join(HERE, "..", "..", "runtime", "module", "dlcm.fbs")
ARCHS = ["sm_80", "sm_90a"]
SHUFFLE = re.compile(r"\bshfl\.sync\.")
BARRIER = re.compile(r"\b(bar|barrier)\.sync\b")
LOAD16 = re.compile(r"\bld\.global(\.nc)?\.v4\.")
STORE16 = re.compile(r"\bst\.global\.v4\.")
# A kernel in the module's source: its header comment (a group's says how
# many kernels it runs) and its text.
KERNEL = re.compile(r"(?:^// (?:(\d+) kernels in one launch)?[^\n]*\n)+"
                    r"(extern \"C\" __global__ void "
                    r"(?:__launch_bounds__\(\d+\) )?(\w+)\(.*?\n}\n)",
                    re.M | re.S)
# The aligned views of an elementwise group's 4-byte elements, read and
# written (KernelEmitter's emitVectorBody).
VIEW_READ = re.compile(r"const (?:float|u?int32_t) \*__restrict q\d+ = "
                       r"\(const (?:float|u?int32_t) \*\)"
                       r"__builtin_assume_aligned\(p\d+ \+ first, 16\);")
VIEW_WRITTEN = re.compile(r"(?:float|u?int32_t) \*__restrict "
                          r"q\d+ = \((?:float|u?int32_t) \*\)"
                          r"__builtin_assume_aligned\(p\d+ \+ first, 16\);")
# resnet18 updates 62 parameters: in a group of thread-per-iteration kernels
# (kernels of at most 511 buffers, KernelStep parameters within 4 KB), one
# of warp-per-iteration kernels (the BatchNorm biases, whose gradient is a
# long sum), and a group or two of the updates that read a gradient sum
# another update writes.
UPDATE_LAUNCHES = 6


def read_module(flatc: str, module: str, work: str,
                defaults: bool = False) -> dict:
    """The module as JSON, with every field written out when `defaults`
    (flatc writes BASE.json into `work`)."""
    subprocess.run([flatc, "--json", "--strict-json", "--raw-binary"] +
                   (["--defaults-json"] if defaults else []) +
                   ["-o", work, SCHEMA, "--", module], check=True)
    stem = os.path.splitext(os.path.basename(module))[0]
    path = os.path.join(work, stem + ".json")
    with open(path) as f:
        data = json.load(f)
    os.remove(path)
    return data


def ptx_by_kernel(ptx: str) -> dict:
    """Kernel name -> the PTX of its entry."""
    entries = re.split(r"(?=^\.visible \.entry )", ptx, flags=re.M)[1:]
    return {re.match(r"\.visible \.entry (\w+)", e).group(1): e
            for e in entries}


def kernel_sources(source: str) -> dict:
    """Kernel name -> (how many fusions' kernels it runs, its source)."""
    return {m.group(3): (int(m.group(1) or 1), m.group(2))
            for m in KERNEL.finditer(source)}


def check(name: str, data: dict, totals: dict, counts: dict) -> list:
    """Problems with model `name`'s module; counts its kernel shapes into
    `totals` and its kernel steps into `counts`: per function, the kernel
    steps and the kernels they run, and train_step's optimizer update
    launches and parameters."""
    problems = []
    archs = sorted(b["arch"] for b in data.get("cuda_binaries", []))
    if archs != sorted(ARCHS):
        problems.append(f"cubins for {archs}, expected {ARCHS}")
    kernels = [k["name"] for k in data.get("kernels", [])]
    ptx = ptx_by_kernel(data.get("cuda_ptx", ""))
    missing = [k for k in kernels if k not in ptx]
    if missing:
        problems.append(f"kernels without PTX: {missing}")
    sources = kernel_sources(data.get("kernel_source", ""))
    missing = [k for k in kernels if k not in sources]
    if missing:
        problems.append(f"kernels without source: {missing}")
    for kernel in kernels:
        text = ptx.get(kernel, "")
        totals["kernels"] += 1
        totals["shuffle"] += bool(SHUFFLE.search(text))
        totals["load16"] += bool(LOAD16.search(text))
        totals["store16"] += bool(STORE16.search(text))
        source = sources.get(kernel, (1, ""))[1]
        for view, access, what in [(VIEW_READ, LOAD16, "loads"),
                                   (VIEW_WRITTEN, STORE16, "stores")]:
            views = len(view.findall(source))
            accesses = len(access.findall(text))
            if accesses < views:
                problems.append(f"{kernel} {what} through {views} 16-byte "
                                f"aligned views, but its PTX has {accesses} "
                                f"16-byte {what}")
    for function in data["functions"]:
        params = {i for i, r in enumerate(function.get("results", []))
                  if r.get("role") == "param"}
        steps = counts.setdefault(function["name"], {"steps": 0, "kernels": 0})
        updates = counts.setdefault("updates", {"steps": 0, "params": 0})
        for step in function.get("steps", []):
            body = step["step"]
            if step["step_type"] == "MatmulStep":
                totals["epilogues"] += body.get("epilogue", "None") != "None"
                continue
            if step["step_type"] != "KernelStep":
                continue
            kernel = kernels[body.get("kernel", 0)]
            steps["steps"] += 1
            steps["kernels"] += sources.get(kernel, (1, ""))[0]
            buffers = body.get("buffers", [])
            written = {b.get("index", 0)
                       for b in buffers[len(buffers) - body.get("outputs", 0):]
                       if b.get("kind") == "Result"} & params
            updates["steps"] += bool(written)
            updates["params"] += len(written)
            threads = body.get("threads_per_iteration", 1)
            text = ptx.get(kernel, "")
            shuffles = bool(SHUFFLE.search(text))
            barriers = bool(BARRIER.search(text))
            bound = re.search(rf"\.entry {re.escape(kernel)}\b[^{{]*?"
                              r"\.maxntid (\d+)", text)
            if (threads > 1) != shuffles or (threads > 32) != barriers:
                problems.append(
                    f"{function['name']}: {step['location']} runs {kernel} "
                    f"with {threads} threads per iteration, but its PTX "
                    f"{'has' if shuffles else 'has no'} warp shuffles and "
                    f"{'has' if barriers else 'has no'} barriers")
            if threads > 32 and (not bound or int(bound[1]) != threads):
                problems.append(
                    f"{function['name']}: {step['location']} runs {kernel} "
                    f"on blocks of {threads} threads, but its PTX bounds its "
                    f"blocks to {bound[1] if bound else 'no size'}")
            totals["block"] += threads > 32
    return problems


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--dlc-compile", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--flatc", default=shutil.which("flatc"),
                   help="flatc, which builds dlc (default: from PATH)")
    args = p.parse_args()
    if not args.flatc:
        print("FAIL: no flatc to read modules with (pass --flatc)")
        return 1
    os.makedirs(args.work, exist_ok=True)
    passed = failed = 0
    totals = dict.fromkeys(
        ["kernels", "shuffle", "block", "load16", "store16", "epilogues"], 0)
    for name in models.MODELS:
        base = train_check.prepare(name, args.work, "float32", 1)
        module = f"{base}.cuda.dlcm"
        start = time.monotonic()
        proc = subprocess.run(
            [args.dlc_compile, base + ".onnx", "--train", "--loss",
             "cross_entropy", "--optimizer", "adamw", "--batch-size",
             str(train_check.BATCH[name]), "--target", "cuda",
             "--cuda-arch", ",".join(ARCHS), "--embed-parameters=false",
             "-o", module],
            capture_output=True, text=True)
        if proc.returncode != 0 and NO_NVRTC in proc.stderr:
            print(f"SKIP: {proc.stderr.strip()}")
            return SKIP
        if proc.returncode != 0:
            print(f"FAIL {name}: {proc.stderr.strip()}")
            failed += 1
            continue
        counts = {}
        problems = check(name, read_module(args.flatc, module, args.work),
                         totals, counts)
        train, updates = counts["train_step"], counts["updates"]
        if name == "resnet18" and updates["steps"] > UPDATE_LAUNCHES:
            problems.append(f"{updates['params']} parameter updates take "
                            f"{updates['steps']} launches, more than "
                            f"{UPDATE_LAUNCHES}")
        if problems:
            print(f"FAIL {name}:\n  " + "\n  ".join(problems))
            failed += 1
            continue
        print(f"PASS {name}: forward and train_step kernels compile for "
              f"{', '.join(ARCHS)} ({os.path.getsize(module) / 1e6:.1f} MB "
              f"module, {time.monotonic() - start:.1f} s); train_step: "
              f"{train['steps']} kernel steps run {train['kernels']} kernels, "
              f"{updates['params']} parameter updates in {updates['steps']} "
              f"launch{'' if updates['steps'] == 1 else 'es'}", flush=True)
        passed += 1
    print(f"{totals['kernels']} kernels: {totals['shuffle']} reduce with warp "
          f"shuffles ({totals['block']} block-per-iteration steps), "
          f"{totals['load16']} load and {totals['store16']} store "
          f"16 bytes at a time; {totals['epilogues']} matmul steps apply an "
          f"epilogue")
    for key, problem in [
            ("shuffle", "no kernel reduces with warp shuffles (shfl.sync)"),
            ("block", "no kernel step reduces with a block per iteration"),
            ("load16", "no kernel loads 16 bytes at a time (ld.global.v4)"),
            ("store16", "no kernel stores 16 bytes at a time (st.global.v4)"),
            ("epilogues", "no matmul step applies a bias epilogue")]:
        if failed == 0 and totals[key] == 0:
            print(f"FAIL: {problem}")
            failed += 1
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
