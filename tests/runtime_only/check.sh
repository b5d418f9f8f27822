#!/usr/bin/env bash
# The runtime-only build (DESIGN.md decision 8): configures dlc with
# -DDLC_BUILD_COMPILER=OFF in its own build folder, which must need no
# LLVM/MLIR or ONNX, builds the runtime, the runner (dlc-runner) and the
# runtime's tests, and runs those tests.
#   check.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
source_dir="$1"
build_dir="$2"
# DLC_CUDA=OFF: the main build covers the CUDA device; this one also checks
# that the runtime builds and runs without it (core/NoCuda.cpp).
cmake -S "$source_dir" -B "$build_dir" -G Ninja -DDLC_BUILD_COMPILER=OFF \
  -DDLC_CUDA=OFF -DCMAKE_BUILD_TYPE=Release > "$build_dir.configure.log" 2>&1 ||
  { cat "$build_dir.configure.log"; exit 1; }
if grep -qE "^(MLIR_DIR|LLVM_DIR|ONNX_DIR):PATH=/" "$build_dir/CMakeCache.txt"; then
  echo "the runtime-only configuration found LLVM, MLIR or ONNX" >&2
  exit 1
fi
ninja -C "$build_dir" -j "${DLC_JOBS:-2}"
test -x "$build_dir/bin/dlc-runner"
cd "$build_dir"
ctest --output-on-failure -j "${DLC_JOBS:-2}"
