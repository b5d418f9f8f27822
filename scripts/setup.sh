#!/usr/bin/env bash
# Installs every system dependency of dlc from Debian's packages (DESIGN.md,
# ENVIRONMENT.md). Idempotent: when everything is present it only checks and exits.
set -euo pipefail

packages=(
  # compiler toolchain
  cmake ninja-build g++ lld pkg-config
  # MLIR/LLVM 22 (the Debian package version is the pin, DESIGN.md decision 1)
  llvm-22-dev libmlir-22-dev mlir-22-tools llvm-22-tools
  # ONNX + protobuf, and the ONNX backend test data
  libonnx-dev protobuf-compiler libprotobuf-dev libonnx-testdata
  # .npz files
  libzip-dev zlib1g-dev
  # the .dlcm module schema
  libflatbuffers-dev flatbuffers-compiler
  # CPU math, MPI, tests
  libdnnl-dev libopenblas-dev openmpi-bin libopenmpi-dev libgtest-dev libgmock-dev
  # Python references (for /usr/bin/python3)
  python3-onnx python3-torch python3-torchvision python3-numpy
  # plots of training logs (scripts/plot_metrics.py)
  python3-matplotlib
  # fuzzing (fuzz/run.sh): clang with libFuzzer, the sanitizer runtimes, and
  # clang's OpenMP, which the runtime links when built with clang
  clang-22 libfuzzer-22-dev libclang-rt-22-dev libomp-22-dev
)

missing=()
for p in "${packages[@]}"; do
  if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
    missing+=("$p")
  fi
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "setup: all ${#packages[@]} packages present"
  exit 0
fi

SUDO=""
if [ "$(id -u)" -ne 0 ]; then
  if ! command -v sudo >/dev/null 2>&1; then
    echo "setup: missing packages: ${missing[*]}" >&2
    echo "setup: installing them needs root, and sudo is not installed: run this script as root, or install them with apt-get as root" >&2
    exit 1
  fi
  SUDO="sudo"
fi
echo "setup: installing ${missing[*]}"
export DEBIAN_FRONTEND=noninteractive
$SUDO apt-get update -qq
if ! apt-cache show llvm-22-dev >/dev/null 2>&1; then
  echo "setup: llvm-22-dev is not in this machine's Debian sources; dlc is pinned to LLVM 22" >&2
  exit 1
fi
$SUDO apt-get install -y -qq --no-install-recommends "${missing[@]}"
echo "setup: done"
