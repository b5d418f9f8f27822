#!/usr/bin/env bash
# The whole GPU round, one command on the GPU machine, within
# DLC_ROUND_SECONDS (default 450, inside the 8 minutes a round may take
# with its start): the `gpu` tests (the runtime's GPU unit tests, then the
# six models on cuda:0 against the CPU: tests/gpu/gpu_check.py), cuDNN's
# fused attention at GPT-2's shape (dlc-attention-rate), then the
# benchmarks (bench/bench_gpu.py): GPT-2 124M and ResNet-50 in float32,
# TF32 and bfloat16 against PyTorch eager and torch.compile (autocast for
# bfloat16; bench/large_models.py:
# bench_large.txt, bench_large.json and dlc's profiles and kernel tables
# in the logs), then the five small models without torch.compile. Each
# step gets a time limit that leaves the later steps theirs; the large
# models' torch.compile runs get what is left and are reported as skipped
# past it. DLC_BENCH_ARGS go to both benchmark steps.
# Needs .gpu-bundle/bundle.tar.xz from bench/prepare_gpu_bundle.sh:
#   run: bash bench/gpu_round.sh   (carry: .gpu-bundle)
# Writes its logs to $OUT when set: round.log, gpu.txt, cudnn.log,
# bench_large.txt and .json, and the large models' profiles and kernel
# tables packed into profiles.tar.xz (the device tool brings back 8 files
# at most).
set -uo pipefail
limit="${DLC_ROUND_SECONDS:-450}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
bundle="${DLC_BUNDLE_DIR:-/tmp/dlc-bundle}"
logs="${OUT:-/tmp/dlc-logs}"
mkdir -p "$bundle" "$logs/large"
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
# Seconds for a step: at most $1, leaving $2 for the steps after it.
within() {
  local left=$((limit - SECONDS - $2))
  echo $((left < $1 ? left : $1))
}
say() { echo "$1" | tee -a "$logs/round.log"; }
# step NAME SECONDS COMMAND...: COMMAND for at most SECONDS.
step() {
  local name=$1 seconds=$2
  shift 2
  say "=== $name"
  if [ "$seconds" -lt 10 ]; then
    say "=== skipped: under 10 s left for it of the round's ${limit} s"
    status=1
    return
  fi
  timeout "$seconds" "$@" 2>&1 | tee -a "$logs/round.log"
  local rc=${PIPESTATUS[0]}
  [ "$rc" -ne 124 ] || say "=== stopped after $seconds s"
  [ "$rc" -eq 0 ] || { say "=== exit code $rc"; status=1; }
}
# cuDNN's own account of what it refused goes to cudnn.log.
CUDNN_LOGERR_DBG=1 CUDNN_LOGWARN_DBG=1 CUDNN_LOGDEST_DBG="$logs/cudnn.log" \
  step "runtime GPU unit tests (cuDNN attention among them)" \
  "$(within 60 360)" "$bundle/bin/dlc_runtime_tests" --gtest_filter='Gpu*'
step "CUDA session tests" "$(within 60 340)" \
  "$bundle/bin/dlc_cuda_session_tests"
step "CUDA logic tests" "$(within 60 320)" \
  "$bundle/bin/dlc_cuda_logic_tests" --gtest_brief=1
step "models on cuda:0 against the CPU" "$(within 240 280)" \
  python3 "$root/tests/gpu/gpu_check.py" run \
  --dlc-runner "$bundle/bin/dlc-runner" --dir "$bundle/models"
step "benchmark: cuDNN attention at GPT-2's shape" "$(within 20 320)" \
  "$bundle/bin/dlc-attention-rate"
large=$(within 420 60)
step "benchmark: GPT-2 124M and ResNet-50" "$large" \
  python3 "$root/bench/bench_gpu.py" run --bundle "$bundle" --models '' \
  --out "$logs/large" --budget $((large - 10)) ${DLC_BENCH_ARGS:-}
step "benchmark: five small models" "$(within 60 0)" \
  python3 "$root/bench/bench_gpu.py" run --bundle "$bundle" --large '' \
  --no-compile ${DLC_BENCH_ARGS:-}
mv "$logs"/large/bench_large.* "$logs/" 2>/dev/null
tar -C "$logs/large" -cJf "$logs/profiles.tar.xz" . && rm -rf "$logs/large"
exit $status
