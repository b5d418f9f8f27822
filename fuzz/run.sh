#!/usr/bin/env bash
# Builds and runs dlc's libFuzzer targets (fuzz/*.cpp) in their own build
# folder, configured with clang-22 and the address and undefined-behaviour
# sanitizers (DLC_FUZZ=ON).
#
#   fuzz/run.sh ci
#       Every target replays its regressions (fuzz/regressions/TARGET), then
#       fuzzes from its committed corpus (fuzz/corpus/TARGET) for
#       DLC_FUZZ_CI_SECONDS (default 8) seconds; prints the executions per
#       target. Exit 1 on any crash, leak, timeout or sanitizer report.
#   fuzz/run.sh campaign SECONDS | campaign TARGET=SECONDS...
#       A long run: SECONDS shared equally by all targets, or each named
#       target for its own time, one after another, going on after a
#       finding. New corpus entries go to BUILD/campaign/corpus/TARGET
#       (outside git), findings to BUILD/campaign/artifacts. Prints the
#       executions per target and in all; exit 1 if anything was found.
#
# BUILD is DLC_FUZZ_BUILD (default: build-fuzz in the repository); builds
# use DLC_JOBS (default 2) jobs. Exits 77 (ctest's "skipped") where clang-22,
# libFuzzer or the sanitizer runtimes are missing (scripts/setup.sh installs
# them).
set -euo pipefail
repo="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${DLC_FUZZ_BUILD:-$repo/build-fuzz}"
targets=(onnx-import external-data module-load checkpoint npy npz runner-options token-file)

usage() {
  sed -n '5,17p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//' >&2
  exit 2
}

# The dictionary a target's mutations draw from, if any.
dictionary() {
  case "$1" in
  onnx-import | external-data) echo "$repo/fuzz/onnx.dict" ;;
  checkpoint | npy | npz) echo "$repo/fuzz/npz.dict" ;;
  module-load) echo "$repo/fuzz/module.dict" ;;
  runner-options) echo "$repo/fuzz/runner-options.dict" ;;
  esac
}

# A fuzzer that links tells clang-22, libFuzzer and the sanitizer runtimes
# are all there.
probe() {
  if ! command -v clang++-22 >/dev/null 2>&1; then
    echo "fuzz: clang++-22 not found: skipped (scripts/setup.sh installs it)"
    exit 77
  fi
  local dir
  dir="$(mktemp -d)"
  if ! echo 'extern "C" int LLVMFuzzerTestOneInput(const char *, unsigned long) { return 0; }' |
    clang++-22 -x c++ - -fsanitize=fuzzer,address,undefined -o "$dir/probe" \
      >"$dir/log" 2>&1; then
    cat "$dir/log"
    rm -rf "$dir"
    echo "fuzz: clang++-22 cannot link a libFuzzer target with the sanitizers:" \
      "skipped (libfuzzer-22-dev and libclang-rt-22-dev; scripts/setup.sh)"
    exit 77
  fi
  rm -rf "$dir"
}

# Configures (once) and builds the targets. -O1 -g without NDEBUG: asserts
# stay on, so an assertion reached by input is a finding too.
build_targets() {
  mkdir -p "$build"
  if [ ! -f "$build/CMakeCache.txt" ]; then
    cmake -S "$repo" -B "$build" -G Ninja \
      -DCMAKE_C_COMPILER=clang-22 -DCMAKE_CXX_COMPILER=clang++-22 \
      -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      "-DCMAKE_C_FLAGS_RELWITHDEBINFO=-O1 -g" \
      "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g" \
      -DDLC_FUZZ=ON -DDLC_CUDA=OFF >"$build/configure.log" 2>&1 ||
      { cat "$build/configure.log"; exit 1; }
  fi
  local start=$SECONDS
  ninja -C "$build" -j "${DLC_JOBS:-2}" dlc-fuzzers >"$build/fuzzers.log" 2>&1 ||
    { tail -50 "$build/fuzzers.log"; exit 1; }
  echo "fuzz: targets built in $((SECONDS - start)) s ($build)"
}

# The executions libFuzzer reports in LOG (-print_final_stats=1, also after
# a finding); 0 when it died without its stats.
executions() {
  local n
  n="$(sed -n 's/^stat::number_of_executed_units: *//p' "$1" | tail -1)"
  echo "${n:-0}"
}

# run_target TARGET ARGS...: runs TARGET's binary with the flags every run
# shares. The targets' scratch folders (fuzz/Scratch.h) go to a folder of
# this run's own, in memory (/dev/shm) where there is one: the targets that
# read a path write every input to a file, at disk speed otherwise. It is
# removed afterwards, also after a finding.
run_target() {
  local target="$1" base="${TMPDIR:-/tmp}" scratch status=0
  shift
  if [ -w /dev/shm ]; then
    base=/dev/shm
  fi
  scratch="$(mktemp -d "$base/dlc-fuzz-run.XXXXXX")"
  TMPDIR="$scratch" "$build/bin/dlc-fuzz-$target" -error_exitcode=1 \
    -timeout_exitcode=1 -timeout=10 -rss_limit_mb=2048 "$@" || status=$?
  rm -rf "$scratch"
  return "$status"
}

# fuzz TARGET SECONDS WORK LOG [FLAGS...]: fuzzes from WORK/corpus/TARGET
# (where new entries go), the committed corpus and the regressions; findings
# go to WORK/artifacts. 0 when nothing was found.
fuzz() {
  local target="$1" seconds="$2" work="$3" log="$4"
  shift 4
  local dict seeds=("$repo/fuzz/corpus/$target")
  dict="$(dictionary "$target")"
  [ -d "$repo/fuzz/regressions/$target" ] && seeds+=("$repo/fuzz/regressions/$target")
  mkdir -p "$work/corpus/$target" "$work/artifacts"
  run_target "$target" -max_total_time="$seconds" -print_final_stats=1 \
    -artifact_prefix="$work/artifacts/$target-" ${dict:+-dict="$dict"} "$@" \
    "$work/corpus/$target" "${seeds[@]}" >"$log" 2>&1
}

# The findings of one target: the end of its log, where the report is.
report() {
  echo "fuzz: $1: FAILED; the end of $2:"
  tail -40 "$2" | sed 's/^/    /'
}

ci() {
  local seconds="${DLC_FUZZ_CI_SECONDS:-8}" failed=0 total=0
  local work="$build/ci"
  rm -rf "$work"
  mkdir -p "$work"
  for target in "${targets[@]}"; do
    local regressions=("$repo/fuzz/regressions/$target"/*) replayed=0
    if [ -e "${regressions[0]}" ]; then
      replayed=${#regressions[@]}
      if ! run_target "$target" "${regressions[@]}" \
        >"$work/$target.regressions.log" 2>&1; then
        report "$target" "$work/$target.regressions.log"
        echo "fuzz: $target: a regression FAILED" >>"$work/summary.txt"
        failed=1
        continue
      fi
    fi
    if ! fuzz "$target" "$seconds" "$work" "$work/$target.log"; then
      report "$target" "$work/$target.log"
      echo "fuzz: $target: FAILED (findings in $work/artifacts)" >>"$work/summary.txt"
      failed=1
      continue
    fi
    local n
    n="$(executions "$work/$target.log")"
    total=$((total + n))
    printf 'fuzz: %-15s %9d executions in %d s (%d regressions replayed)\n' \
      "$target" "$n" "$seconds" "$replayed" | tee -a "$work/summary.txt"
  done
  printf 'fuzz: %-15s %9d executions\n' "all" "$total" | tee -a "$work/summary.txt"
  return "$failed"
}

campaign() {
  [ $# -ge 1 ] || usage
  local plan=()
  if [ $# -eq 1 ] && [[ "$1" =~ ^[0-9]+$ ]]; then
    for target in "${targets[@]}"; do
      plan+=("$target=$(($1 / ${#targets[@]}))")
    done
  else
    plan=("$@")
  fi
  local work="$build/campaign" failed=0 total=0 start=$SECONDS results=()
  mkdir -p "$work/logs"
  for entry in "${plan[@]}"; do
    local target="${entry%%=*}" seconds="${entry#*=}"
    [ -x "$build/bin/dlc-fuzz-$target" ] || { echo "fuzz: no target '$target'" >&2; usage; }
    local stamp left="$seconds" runs=0 findings=0 n=0 log status=ok
    stamp="$(date +%Y%m%d-%H%M%S)"
    echo "fuzz: $target for $seconds s (logs $work/logs/$target-$stamp-*.log)"
    # libFuzzer stops at a finding (saved to the artifacts); the run goes on
    # from the grown corpus for the time left, so one bug does not end a
    # long campaign. Value profiles let libFuzzer solve the CRC and checksum
    # comparisons.
    while [ "$left" -gt 0 ]; do
      local began=$SECONDS
      log="$work/logs/$target-$stamp-$runs.log"
      runs=$((runs + 1))
      if ! fuzz "$target" "$left" "$work" "$log" -use_value_profile=1; then
        report "$target" "$log"
        findings=$((findings + 1))
        failed=1
      fi
      n=$((n + $(executions "$log")))
      left=$((left - (SECONDS - began)))
      # A finding in the seeds themselves would end every run at once.
      if [ $((SECONDS - began)) -lt 5 ] && [ "$findings" -gt 0 ]; then
        break
      fi
    done
    [ "$findings" -eq 0 ] || status="FAILED: $findings findings in $work/artifacts"
    total=$((total + n))
    results+=("$(printf '%-15s %11d executions in %6d s  %s' "$target" "$n" "$seconds" "$status")")
  done
  echo "fuzz: campaign of $((SECONDS - start)) s, finished $(date -u +%Y-%m-%dT%H:%MZ)"
  printf 'fuzz: %s\n' "${results[@]}"
  printf 'fuzz: %-15s %11d executions\n' "all" "$total"
  return "$failed"
}

main() {
  [ $# -ge 1 ] || usage
  local mode="$1"
  shift
  case "$mode" in
  ci)
    probe
    build_targets
    ci
    ;;
  campaign)
    probe
    build_targets
    campaign "$@"
    ;;
  *) usage ;;
  esac
}

# On one line, so that bash has read all of this file before running it:
# editing the script during a long campaign does not change the run.
main "$@"; exit
