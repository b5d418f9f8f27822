#!/usr/bin/env bash
# The whole test suite: set up, build, then every test through ctest (lit IR
# tests, unit tests, ONNX backend node tests, exported PyTorch models).
# ctest's closing line reports the counts.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${DLC_BUILD_DIR:-$root/build}"

bash "$root/scripts/build.sh"
cd "$build"
ctest --output-on-failure -j "${DLC_JOBS:-2}" "$@"
