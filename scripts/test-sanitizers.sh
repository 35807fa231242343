#!/usr/bin/env bash
# The tests that look for what a passing test cannot show (docs/testing.md): the asan preset
# (ASan + UBSan) built and run without the gpu and browser labels, then the fuzz preset (clang,
# libFuzzer), each fuzz target for GPUSCOPE_FUZZ_SECONDS (20 s). Run it before a stop; it is not
# part of scripts/test.sh (see docs/testing.md for why). Prints how long each part took; the
# last output is the fuzz run's CTest summary. Extra arguments go to both ctest runs.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/setup-deps.sh
jobs="$(nproc)"
timings=()
step() {  # step NAME COMMAND...: runs it, remembers how long it took
  local name="$1" start=$SECONDS
  shift
  "$@"
  timings+=("$(printf '%-14s %4d s' "$name" $((SECONDS - start)))")
}
step "asan build" bash -c "cmake --preset asan >/dev/null && cmake --build --preset asan"
step "asan tests" ctest --preset asan -j "$jobs" "$@"
step "fuzz build" bash -c "cmake --preset fuzz >/dev/null && cmake --build --preset fuzz"
printf '%s\n' "${timings[@]}"
ctest --preset fuzz -j "$jobs" "$@"
