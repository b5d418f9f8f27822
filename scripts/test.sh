#!/usr/bin/env bash
# The whole test suite: set up, build, then every test through ctest (lit IR
# tests, unit tests, ONNX backend node tests, exported PyTorch models).
# ctest's closing line reports the counts.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${DLC_BUILD_DIR:-$root/build}"

bash "$root/scripts/build.sh"
cd "$build"
# fuzz.ci's executions per target: ctest shows a passing test's output only
# with -V, and CI's record should have them.
fuzz_summary="$root/build-fuzz/ci/summary.txt"
rm -f "$fuzz_summary"
status=0
ctest --output-on-failure -j "${DLC_JOBS:-2}" "$@" || status=$?
if [ -f "$fuzz_summary" ]; then
  cat "$fuzz_summary"
fi
exit "$status"
