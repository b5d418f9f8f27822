"""Every generated CUDA kernel of the five models compiles: each model
(tests/models/models.py, exported for training) is compiled with
`dlc-compile --train --target cuda --cuda-arch sm_90a`, which generates the
kernels of @forward and @train_step and compiles them with NVRTC to sm_90a
cubin and PTX. No GPU is needed. Where NVRTC cannot be loaded the test
exits 77, which ctest reports as skipped (never as passed).

Usage: /usr/bin/python3 tests/models/cuda_kernels_check.py
           --dlc-compile build/bin/dlc-compile --work DIR
"""

import argparse
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import models  # noqa: E402
import train_check  # noqa: E402  (prepare, BATCH)

SKIP = 77
NO_NVRTC = "needs NVRTC"


def main():
    p = argparse.ArgumentParser(description=__doc__,
                                formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--dlc-compile", required=True)
    p.add_argument("--work", required=True)
    p.add_argument("--arch", default="sm_90a")
    args = p.parse_args()
    os.makedirs(args.work, exist_ok=True)
    passed = failed = 0
    for name in models.MODELS:
        base = train_check.prepare(name, args.work, "float32", 1)
        module = f"{base}.cuda.dlcm"
        start = time.monotonic()
        proc = subprocess.run(
            [args.dlc_compile, base + ".onnx", "--train", "--loss",
             "cross_entropy", "--optimizer", "adamw", "--batch-size",
             str(train_check.BATCH[name]), "--target", "cuda",
             "--cuda-arch", args.arch, "-o", module],
            capture_output=True, text=True)
        if proc.returncode != 0 and NO_NVRTC in proc.stderr:
            print(f"SKIP: {proc.stderr.strip()}")
            return SKIP
        if proc.returncode != 0:
            print(f"FAIL {name}: {proc.stderr.strip()}")
            failed += 1
            continue
        print(f"PASS {name}: forward and train_step kernels compile for "
              f"{args.arch} ({os.path.getsize(module) / 1e6:.1f} MB module, "
              f"{time.monotonic() - start:.1f} s)", flush=True)
        passed += 1
    print(f"{passed} passed, {failed} failed")
    return 0 if failed == 0 else 1


if __name__ == "__main__":
    sys.exit(main())
