#!/usr/bin/env bash
# The whole GPU round, one command on the GPU machine (under 10 minutes):
# the `gpu` tests (the runtime's GPU unit tests, then the five models on
# cuda:0 against the CPU: tests/gpu/gpu_check.py), then the benchmark
# table (bench/bench_gpu.py: dlc against PyTorch eager and torch.compile,
# and the generated kernels' bandwidth against a device copy).
# Needs .gpu-bundle/bundle.tar.xz from bench/prepare_gpu_bundle.sh:
#   run: bash bench/gpu_round.sh   (carry: .gpu-bundle)
# Writes its logs to $OUT when set.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bundle="${DLC_BUNDLE_DIR:-/tmp/dlc-bundle}"
logs="${OUT:-/tmp/dlc-logs}"
mkdir -p "$bundle" "$logs"
tar -C "$bundle" -xJf "$root/.gpu-bundle/bundle.tar.xz" || exit 1

# cuBLASLt, cuDNN and NVRTC come with PyTorch's nvidia-* packages there.
nvidia_libs="$(python3 - <<'PY'
import glob, os, site
dirs = set()
for base in site.getsitepackages() + [site.getusersitepackages()]:
    for lib in glob.glob(os.path.join(base, "nvidia", "*", "lib")):
        dirs.add(lib)
print(":".join(sorted(dirs)))
PY
)"
export LD_LIBRARY_PATH="$bundle/lib:$nvidia_libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
export PYTHONUNBUFFERED=1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv | tee "$logs/gpu.txt"

status=0
step() {
  echo "=== $1"
  shift
  "$@" 2>&1 | tee -a "$logs/round.log"
  local rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || { echo "=== exit code $rc"; status=1; }
}
step "runtime GPU unit tests" "$bundle/bin/dlc_runtime_tests" --gtest_filter='Gpu*'
step "CUDA session tests" "$bundle/bin/dlc_cuda_session_tests"
step "CUDA logic tests" "$bundle/bin/dlc_cuda_logic_tests" --gtest_brief=1
step "models on cuda:0 against the CPU" timeout 240 python3 "$root/tests/gpu/gpu_check.py" run \
  --dlc-runner "$bundle/bin/dlc-runner" --dir "$bundle/models"
step "benchmark" timeout 330 python3 "$root/bench/bench_gpu.py" run --bundle "$bundle" \
  ${DLC_BENCH_ARGS:-}
exit $status
