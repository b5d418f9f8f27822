#!/usr/bin/env bash
# Prepares, on the build machine, everything bench/gpu_round.sh needs on a
# GPU machine, which has no MLIR and can install nothing (ENVIRONMENT.md):
# the runtime's binaries (the runner, the step timer, the GPU tests) and the
# shared libraries they need beyond the C and C++ runtimes, the seven models
# compiled for cpu and cuda without their weights (tests/gpu/gpu_check.py
# prepare) and the benchmark's modules and data (bench/bench_gpu.py
# prepare: the five small models, then GPT-2 124M and ResNet-50 in float32,
# TF32 and bfloat16, whose batches the GPU machine draws itself), packed
# into .gpu-bundle/bundle.tar.xz (about 30 MB, under the device tool's 64:
# carry .gpu-bundle with it). About 8 minutes on 2 cores; GPT-2's export
# takes ~5 GB of memory.
#   bash bench/prepare_gpu_bundle.sh [BUILD_DIR]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
out="$root/.gpu-bundle"
binaries=(bin/dlc-runner bin/dlc-step-timer bin/dlc-attention-rate
  runtime/test/dlc_runtime_tests
  runtime/cuda/test/dlc_cuda_logic_tests
  runtime/cuda/test/dlc_cuda_session_tests)
ninja -C "$build" -j "${DLC_JOBS:-2}" dlc-compile dlc-runner dlc-step-timer \
  dlc-attention-rate \
  dlc_runtime_tests dlc_cuda_logic_tests dlc_cuda_session_tests

stage="$(mktemp -d)"
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
for b in "${binaries[@]}"; do
  cp "$build/$b" "$stage/bin/"
done
# What the binaries link beyond glibc and the C++ runtime, which the GPU
# machine's newer system has (binaries built against Debian 12's glibc
# 2.36 run on it); oneDNN and OpenBLAS are most of the bundle.
for b in "$stage"/bin/*; do
  ldd "$b" | awk '/=> \// {print $3}'
done | sort -u | grep -vE '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux[^/]*|libpthread|libdl|librt)\.so' |
  while read -r lib; do cp -L "$lib" "$stage/lib/"; done

compiler="$build/bin/dlc-compile"
/usr/bin/python3 "$root/tests/gpu/gpu_check.py" prepare \
  --dlc-compile "$compiler" --dir "$stage/models"
rm -rf "$stage/models/export"
/usr/bin/python3 "$root/bench/bench_gpu.py" prepare \
  --dlc-compile "$compiler" --out "$stage/bench"

# .gpu-bundle is ignored by git (.gitignore): the device tool carries it.
mkdir -p "$out"
tar -C "$stage" -cJf "$out/bundle.tar.xz" .
du -h "$out/bundle.tar.xz"
