#!/usr/bin/env bash
# `gpuscope monitor` on the GPU machine: a believable summary of a PyTorch training run compared
# with a direct NVML energy-counter read, a /metrics scrape during the run, a short recording
# kept as a test fixture, and the slowdown the sampler causes at 100 ms and 20 ms.
#
#   bench/monitor_device.sh prepare   # here, before the device call: fills .carry/
#   bench/monitor_device.sh run       # there (carry .carry): build, then parts a and b
#
# Environment: MONITOR_PARTS (default "a b"), MONITOR_REPS (5), MONITOR_STEPS (250),
#   MONITOR_TRAIN_SECONDS (20). Writes everything under $OUT (default ./out).
# The GPU machine has CUDA, CMake, Ninja and PyTorch but not the Debian -dev packages gpuscope
# builds with; `prepare` copies their headers (and static SQLite and libmicrohttpd; GnuTLS, which
# libmicrohttpd needs, is there as libgnutls.so.30) into .carry/usr. ncurses is
# left out on purpose: the build there is the one without the live view
# (GPUSCOPE_WITH_NCURSES turns itself off). Never changes power limits, clocks, MIG,
# persistence or compute mode.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
what="${1:-run}"

prepare() {
  bash bench/device.sh prepare || return 1
  local usr=.carry/usr lib=/usr/lib/x86_64-linux-gnu
  rm -rf "$usr"
  mkdir -p "$usr/include" "$usr/lib/x86_64-linux-gnu/cmake" "$usr/share/cmake"
  cp -r /usr/include/CLI /usr/include/fmt /usr/include/nlohmann /usr/include/sqlite3.h \
    /usr/include/sqlite3ext.h /usr/include/microhttpd.h "$usr/include/"
  cp -a "$lib"/libfmt.so* "$lib/libsqlite3.a" "$lib/libmicrohttpd.a" "$usr/lib/x86_64-linux-gnu/"
  cp -r "$lib/cmake/fmt" "$usr/lib/x86_64-linux-gnu/cmake/"
  cp -r /usr/share/cmake/CLI11 /usr/share/cmake/nlohmann_json "$usr/share/cmake/"
  du -sh .carry
}

build() {
  local build="$root/build/device" usr="$root/.carry/usr"
  local extra=()
  if [ -d "$usr" ]; then
    extra=(-DCMAKE_PREFIX_PATH="$usr" -DSQLite3_INCLUDE_DIR="$usr/include"
      -DSQLite3_LIBRARY="$usr/lib/x86_64-linux-gnu/libsqlite3.a")
  fi
  if [ ! -f "$build/build.ninja" ]; then
    cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DGPUSCOPE_BUILD_TESTS=OFF "${extra[@]}" \
      >"$out/monitor_configure.log" 2>&1 || { tail -30 "$out/monitor_configure.log"; return 1; }
  fi
  grep -E "ncurses|SQLite" "$out/monitor_configure.log" 2>/dev/null
  cmake --build "$build" --target gpuscope_cli -j "$(nproc)" >"$out/monitor_build.log" 2>&1 ||
    { tail -40 "$out/monitor_build.log"; return 1; }
  echo "$build/tools/gpuscope/gpuscope"
}

# Part a: monitor -- python3 training loop, with JSON lines, /metrics scraped mid-run.
part_a() {
  local bin="$1" port=9464
  echo "== part a: $bin monitor --jsonl --listen 127.0.0.1:$port -- python3 bench/monitor_workload.py train"
  (for _ in $(seq 900); do  # scrape mid-training: after the 100th step
    grep -q "^step 100 " "$out/monitor_run_stdout.txt" 2>/dev/null && break
    sleep 0.1
  done
    python3 -c "import urllib.request as u; print(u.urlopen('http://127.0.0.1:$port/metrics', timeout=5).read().decode(), end='')" \
      >"$out/monitor_metrics_scrape.txt" 2>"$out/monitor_metrics_scrape.err") &
  local scraper=$!
  "$bin" monitor --jsonl "$out/monitor_run.jsonl" --listen "127.0.0.1:$port" -- \
    python3 bench/monitor_workload.py train --seconds "${MONITOR_TRAIN_SECONDS:-20}" \
    >"$out/monitor_run_stdout.txt" 2>"$out/monitor_run_summary.txt"
  echo "monitor exit code: $?"
  wait "$scraper"
  cat "$out/monitor_run_summary.txt"
  echo "== /metrics scrape during the run: $(wc -l <"$out/monitor_metrics_scrape.txt") lines"
  grep -E "^DCGM_FI_(DEV_GPU_UTIL|DEV_POWER_USAGE|DEV_TOTAL_ENERGY|PROF_PIPE_TENSOR|PROF_SM_ACTIVE|DEV_GPU_TEMP|DEV_SM_CLOCK|DEV_FB_USED)" \
    "$out/monitor_metrics_scrape.txt" | head -12
  python3 bench/monitor_analyze.py "$out/monitor_run.jsonl" "$out/monitor_run_stdout.txt" |
    tee "$out/monitor_energy_comparison.json"
  echo "== short recording for the fixture"
  "$bin" monitor --jsonl "$out/monitor_h100_short.jsonl" -- \
    python3 bench/monitor_workload.py train --seconds 3 >/dev/null 2>"$out/monitor_short_summary.txt"
  echo "short recording: $(wc -l <"$out/monitor_h100_short.jsonl") lines, exit $?"
}

# Part b: the same steps with no monitor, monitor at 100 ms and at 20 ms, rotated.
part_b() {
  local bin="$1"
  echo "== part b: slowdown, ${MONITOR_REPS:-5} repetitions x ${MONITOR_STEPS:-250} steps per mode"
  python3 bench/monitor_workload.py slowdown --gpuscope "$bin" --reps "${MONITOR_REPS:-5}" \
    --steps "${MONITOR_STEPS:-250}" --settle-steps "${MONITOR_SETTLE_STEPS:-25}" | tee "$out/monitor_slowdown.jsonl"
}

case "$what" in
  prepare) prepare ;;
  run)
    nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv |
      tee "$out/monitor_gpu.txt"
    bin="$(build)" || { echo "$bin"; exit 1; }
    bin="$(echo "$bin" | tail -1)"
    for part in ${MONITOR_PARTS:-a b}; do "part_$part" "$bin"; done
    ;;
  *) echo "usage: bench/monitor_device.sh prepare|run" >&2; exit 2 ;;
esac
