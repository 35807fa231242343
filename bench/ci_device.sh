#!/usr/bin/env bash
# The CPU test suite on the GPU machine's 16 cores, as a fast first check of a large change (the
# development machine has 2): configure the tests without gpuscope-torch (headers and static libs
# from .carry, as the other device scripts), build everything, run every CTest test except the
# browser ones (no Chromium there) with the GPU-only tests included. CI itself still runs
# scripts/test.sh on the development machine type; this does not replace it.
#   bash bench/ci_device.sh prepare   # here: .carry (monitor_device.sh prepare + GoogleTest)
#   bash bench/ci_device.sh run       # there (carry .carry)
#   bash bench/ci_device.sh asan      # there: the same with ASan + UBSan (the asan preset's flags
#                                     # and environment), without the GPU-only tests
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
case "${1:-run}" in
  prepare)
    bash bench/monitor_device.sh prepare || exit 1
    lib=/usr/lib/x86_64-linux-gnu
    cp -r /usr/include/gtest /usr/include/gmock "$usr/include/"
    cp "$lib"/libgtest*.a "$lib"/libgmock*.a "$usr/lib/x86_64-linux-gnu/"
    cp -r "$lib/cmake/GTest" "$usr/lib/x86_64-linux-gnu/cmake/"
    cp .deps/python/plotly/package_data/plotly.min.js .carry/
    du -sh .carry
    ;;
  run | asan)
    build="$root/build/device-$1"
    sanitize=OFF
    labels="browser"
    if [ "$1" = asan ]; then
      sanitize=ON
      labels="browser|gpu"
      export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:strict_string_checks=1:detect_stack_use_after_return=1"
      export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1"
      export LSAN_OPTIONS="suppressions=$root/tests/sanitizers/lsan.supp:print_suppressions=0"
    fi
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Debug -DCMAKE_CUDA_ARCHITECTURES=90 \
      -DGPUSCOPE_SANITIZE="$sanitize" \
      -DGPUSCOPE_BUILD_TORCH=OFF -DCMAKE_PREFIX_PATH="$usr" -DSQLite3_INCLUDE_DIR="$usr/include" \
      -DSQLite3_LIBRARY="$usr/lib/x86_64-linux-gnu/libsqlite3.a" \
      -DGPUSCOPE_PLOTLY_JS="$root/.carry/plotly.min.js" >"$out/ci_configure.log" 2>&1 ||
      { tail -30 "$out/ci_configure.log"; exit 1; }
    cmake --build "$build" -j "$(nproc)" -- -k 0 >"$out/ci_build.log" 2>&1
    echo "build exit $?"
    grep -E "error:|FAILED:" "$out/ci_build.log" | head -60
    ctest --test-dir "$build" -j "$(nproc)" -LE "$labels" --timeout 300 --output-on-failure \
      >"$out/ci_test.log" 2>&1
    echo "ctest exit $?"
    grep -E "tests passed|tests failed|Failed|\*\*\*|Not Run" "$out/ci_test.log" | head -80
    grep -E "ERROR: AddressSanitizer|runtime error:|ERROR: LeakSanitizer|SUMMARY:" "$out/ci_test.log" | sort | uniq -c | head -30
    ;;
esac
