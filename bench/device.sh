#!/usr/bin/env bash
# The one script run on the GPU machine (through the device tool): builds gpuscope there,
# runs the checks that need a real GPU, and writes what it saw under $OUT.
#
#   bench/device.sh info     # gpuscope info / --json next to nvidia-smi -q
#   bench/device.sh tests    # the CPU test suite on that machine, plus GPU-labelled tests
#   bench/device.sh burn     # burn vs PyTorch side by side (bench/burn_device.sh)
#   bench/device.sh all
#
# Carry `.carry` (made here by `bench/device.sh prepare`: the NVML header, a few hundred KB);
# everything else is on the machine. (.deps is too large to travel.)
# Never changes the GPU's power limit, clocks, MIG layout, persistence or compute mode.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
build="$root/build/device"
what="${1:-all}"

configure() {
  [ -f "$build/build.ninja" ] && return 0
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
    -DCMAKE_CUDA_ARCHITECTURES=90 >"$out/configure.log" 2>&1 || {
    tail -30 "$out/configure.log"
    return 1
  }
}

run_info() {
  configure && cmake --build "$build" --target gpuscope_cli >"$out/build_info.log" 2>&1 || {
    tail -30 "$out/build_info.log"
    return 1
  }
  local bin="$build/tools/gpuscope/gpuscope"
  echo "== gpuscope info"
  "$bin" info
  echo "rc=$?"
  "$bin" info --json >"$out/info.json"
  echo "== gpuscope info --json rc=$? ($(wc -c <"$out/info.json") bytes)"
  "$bin" info --gpu 0 >/dev/null
  echo "== --gpu 0 rc=$?"
  "$bin" info --gpu 9
  echo "== --gpu 9 rc=$? (expected 2)"
  nvidia-smi -q >"$out/nvidia-smi-q.txt" 2>&1
  echo "== nvidia-smi -q (selected lines)"
  grep -E "Product Name|Driver Version|CUDA Version|Bus Id|Current Power Limit|Default Power Limit|Min Power Limit|Max Power Limit|Requested Power Limit|Enforced Power Limit|PCIe Generation|Link Width|Max  *:|Current  *:|MIG Mode|Persistence Mode|Compute Mode|GPU Shutdown Temp|GPU Slowdown Temp" \
    "$out/nvidia-smi-q.txt" | head -60
}

run_tests() {
  configure && cmake --build "$build" >"$out/build_all.log" 2>&1 || {
    tail -40 "$out/build_all.log"
    return 1
  }
  (cd "$build" && ctest -j 8 --output-on-failure 2>&1 | tail -25)
}

case "$what" in
  prepare)  # on the development machine, before the device call
    mkdir -p .carry/nvml && cp .deps/python/nvidia/cu13/include/nvml.h .carry/nvml/ && ls -l .carry/nvml
    exit 0 ;;
  info) run_info ;;
  tests) run_tests ;;
  burn) bash bench/burn_device.sh ;;
  all) run_info; run_tests; bash bench/burn_device.sh ;;
  *) echo "usage: bench/device.sh prepare|info|tests|burn|all" >&2; exit 2 ;;
esac
