#!/usr/bin/env bash
# Installs dependencies (scripts/setup.sh), configures and builds dlc into
# build/ (or $DLC_BUILD_DIR). Incremental: a second run only rebuilds what
# changed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${DLC_BUILD_DIR:-$root/build}"

bash "$root/scripts/setup.sh"
if [ ! -f "$build/build.ninja" ]; then
  cmake -G Ninja -S "$root" -B "$build" -DCMAKE_BUILD_TYPE=Release
fi
# Two jobs: the machines dlc is developed and tested on have two cores, and
# an MLIR translation unit needs about 1 GB of memory.
cmake --build "$build" -j "${DLC_JOBS:-2}"
