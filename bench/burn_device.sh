#!/usr/bin/env bash
# burn vs PyTorch on a GPU machine, in one call: builds gpuscope-burn-worker (and the GPU
# tests) there, runs the GPU tests, then bench/burn_vs_torch.py, which runs our worker and
# PyTorch side by side on the same GPU and prints ratios.
#
# Run from the repository root:   bench/burn_device.sh [OUT_DIR]
# Environment: BURN_DURATION (seconds per precision, default 5), BURN_SIZE (default 8192),
#   CUDA_ARCH (default 90), BURN_SKIP_TESTS=1.
# Needs nvcc 13, CMake, Ninja, CLI11, fmt, nlohmann-json, GoogleTest (tests only), python3 with
# torch. The whole tree is tried first (nvml.h from .deps/, as scripts/setup-deps.sh installs
# it, or from build/burn-carry/nvml); if it does not configure or build there, only burn's own
# targets are built, from a minimal CMake project written into the build folder. If CLI11/fmt/nlohmann-json are missing there, a prefix carried in
# build/burn-carry/usr (copied from a development machine) is tried.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${1:-${OUT:-$root/build/burn-device-out}}"
mkdir -p "$out"
arch="${CUDA_ARCH:-90}"
jobs="$(nproc)"
log() { echo "== $*" | tee -a "$out/build.log" >&2; }

# The minimal project: burn's engine, the worker and burn's tests over a libgpuscope made of
# src/common and the CUDA error adapter only (Status, Precision, the API check), with the
# project's own cmake/ modules.
write_standalone_project() {
  local dir="$1"
  mkdir -p "$dir"
  cat >"$dir/CMakeLists.txt" <<CMAKE
cmake_minimum_required(VERSION 3.25)
project(gpuscope_burn_standalone LANGUAGES CXX)
set(GPUSCOPE_ROOT "$root")
option(GPUSCOPE_WERROR "" OFF)
option(GPUSCOPE_BUILD_TESTS "" ON)
list(APPEND CMAKE_MODULE_PATH "\${GPUSCOPE_ROOT}/cmake")
include(warnings)
include(cuda)
include(fmt)
include(nlohmann_json)
include(cli11)
add_library(gpuscope STATIC
  "\${GPUSCOPE_ROOT}/src/common/api_check.cc"
  "\${GPUSCOPE_ROOT}/src/common/precision.cc"
  "\${GPUSCOPE_ROOT}/src/common/status.cc"
  "\${GPUSCOPE_ROOT}/src/cuda/cuda_error.cc")
target_include_directories(gpuscope PUBLIC "\${GPUSCOPE_ROOT}/include"
  PRIVATE "\${GPUSCOPE_ROOT}/src")
target_compile_features(gpuscope PUBLIC cxx_std_20)
target_link_libraries(gpuscope PUBLIC nlohmann_json::nlohmann_json
  PRIVATE fmt::fmt CUDA::cudart_static)
gpuscope_target_warnings(gpuscope)
add_library(gpuscope_internal INTERFACE)
target_link_libraries(gpuscope_internal INTERFACE gpuscope fmt::fmt)
target_include_directories(gpuscope_internal INTERFACE "\${GPUSCOPE_ROOT}/src")
add_subdirectory("\${GPUSCOPE_ROOT}/src/capability" capability)
add_subdirectory("\${GPUSCOPE_ROOT}/tools/gpuscope-burn-worker" worker)
if(GPUSCOPE_BUILD_TESTS)
  include(gtest)
  enable_testing()
  function(gpuscope_add_test name)
    cmake_parse_arguments(ARG "" "" "SOURCES;LIBS;LABELS" \${ARGN})
    add_executable(\${name} \${ARG_SOURCES})
    target_link_libraries(\${name} PRIVATE gpuscope_internal GTest::gmock GTest::gtest_main
      \${ARG_LIBS})
    gpuscope_target_warnings(\${name})
    gtest_discover_tests(\${name} PROPERTIES LABELS "cpu;\${ARG_LABELS}" DISCOVERY_TIMEOUT 60)
  endfunction()
  add_subdirectory("\${GPUSCOPE_ROOT}/tests/capability" tests)
endif()
CMAKE
}

configure() {  # configure SRC BUILD [extra args]
  local src="$1" build="$2"
  shift 2
  cmake -S "$src" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES="$arch" "$@" >>"$out/build.log" 2>&1
}

tests=ON
[ "${BURN_SKIP_TESTS:-0}" = 1 ] && tests=OFF
targets=(gpuscope_burn_worker)
[ "$tests" = ON ] && targets+=(capability_gpu_test capability_test)
carry_prefix=()
[ -d "$root/build/burn-carry/usr" ] && carry_prefix=(-DCMAKE_PREFIX_PATH="$root/build/burn-carry/usr")

# nvml.h for the whole tree: from .deps/, else from a copy carried in build/burn-carry/nvml.
nvml=()
if [ ! -f "$root/.deps/python/nvidia/cu13/include/nvml.h" ] &&
  [ -f "$root/build/burn-carry/nvml/nvml.h" ]; then
  nvml=(-DGPUSCOPE_NVML_INCLUDE_DIR="$root/build/burn-carry/nvml")
fi

build=""
log "configure: whole tree"
if configure "$root" "$root/build/burn-device" -DGPUSCOPE_BUILD_TESTS=$tests "${nvml[@]}" &&
  cmake --build "$root/build/burn-device" -j "$jobs" --target "${targets[@]}" >>"$out/build.log" 2>&1; then
  build="$root/build/burn-device"
  worker="$build/tools/gpuscope-burn-worker/gpuscope-burn-worker"
  gpu_test="$build/tests/capability/capability_gpu_test"
else
  log "whole tree did not build; building burn's targets alone"
  write_standalone_project "$root/build/burn-standalone-src"
  for attempt in plain carried; do
    extra=()
    [ "$attempt" = carried ] && extra=("${carry_prefix[@]}")
    [ "$attempt" = carried ] && [ ${#extra[@]} -eq 0 ] && break
    rm -rf "$root/build/burn-standalone"
    if configure "$root/build/burn-standalone-src" "$root/build/burn-standalone" \
      -DGPUSCOPE_BUILD_TESTS=$tests "${extra[@]}" &&
      cmake --build "$root/build/burn-standalone" -j "$jobs" --target "${targets[@]}" >>"$out/build.log" 2>&1; then
      build="$root/build/burn-standalone"
      break
    fi
    log "standalone build ($attempt) failed"
  done
  worker="$build/worker/gpuscope-burn-worker"
  gpu_test="$build/tests/capability_gpu_test"
fi
if [ -z "$build" ]; then
  log "BUILD FAILED"
  tail -n 60 "$out/build.log" >&2
  exit 1
fi
log "built $worker"

nvidia-smi --query-gpu=name,driver_version,pci.bus_id,power.limit,clocks.max.sm,temperature.gpu \
  --format=csv 2>&1 | tee "$out/nvidia-smi.txt"

if [ "$tests" = ON ]; then
  log "GPU tests"
  timeout 180 "$gpu_test" 2>&1 | tee "$out/gpu_tests.log" | tail -n 25
fi

log "burn vs PyTorch"
PYTHONUNBUFFERED=1 python3 "$root/bench/burn_vs_torch.py" --worker "$worker" --out "$out" \
  --duration "${BURN_DURATION:-5}" --size "${BURN_SIZE:-8192}" 2>&1 | tee "$out/burn.log"
exit "${PIPESTATUS[0]}"
