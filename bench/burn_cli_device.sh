#!/usr/bin/env bash
# `gpuscope burn` on the GPU machine (through the device tool): the whole command, parent and
# worker, on the real GPU, plus a fault-injected run that must exit 1 naming the GPU.
#
#   bench/burn_cli_device.sh prepare [BUILD]  # here: copy BUILD's (default build/h4) gpuscope,
#                                             # its worker and the shared libraries they need
#                                             # that the GPU machine lacks into build/h4-carry
#   bench/burn_cli_device.sh run              # there, carrying build/h4-carry: the runs below,
#                                             # outputs under $OUT
#   bench/burn_cli_device.sh signals          # there: Ctrl-C mid-run (exit 130, partial results)
#                                             # and a worker killed mid-run (its GPU failed)
#
# Binaries built on the development machine run there (its glibc is newer). If they do not,
# `run` builds gpuscope and the worker there instead (needs .carry/ from
# bench/monitor_device.sh prepare). Never changes power limits, clocks, MIG, persistence or
# compute mode.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="${OUT:-$root/out}"
carry="$root/build/h4-carry"
mkdir -p "$out"

prepare() {
  local build="${1:-build/h4}"
  rm -rf "$carry"
  mkdir -p "$carry/bin" "$carry/lib"
  cp "$build/tools/gpuscope/gpuscope" "$build/tools/gpuscope-burn-worker/gpuscope-burn-worker" \
    "$carry/bin/" || return 1
  strip --strip-debug "$carry/bin/"*
  # Everything but the C/C++ runtime and CUDA, which the GPU machine has in newer versions.
  ldd "$carry/bin/"* | awk '/=> \// {print $3}' | sort -u |
    grep -v -E '/(libc|libm|libstdc\+\+|libgcc_s|ld-linux[^/]*|libpthread|libdl|librt|libcuda|libcublas[A-Za-z]*|libcudart)\.so' |
    while read -r lib; do cp -L "$lib" "$carry/lib/"; done
  ls -l "$carry/bin" "$carry/lib"
  du -sh "$carry"
}

# Prints the gpuscope binary to use.
binary() {
  if LD_LIBRARY_PATH="$carry/lib" "$carry/bin/gpuscope" --version >/dev/null 2>&1; then
    echo "$carry/bin/gpuscope"
    return 0
  fi
  echo "carried binaries do not run here; building" >&2
  local build="$root/build/device" usr="$root/.carry/usr"
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DGPUSCOPE_BUILD_TESTS=OFF -DCMAKE_PREFIX_PATH="$usr" -DSQLite3_INCLUDE_DIR="$usr/include" \
    -DSQLite3_LIBRARY="$usr/lib/x86_64-linux-gnu/libsqlite3.a" >"$out/configure.log" 2>&1 &&
    cmake --build "$build" --target gpuscope_cli gpuscope_burn_worker -j "$(nproc)" \
      >"$out/build.log" 2>&1 || { tail -30 "$out/build.log" "$out/configure.log" >&2; return 1; }
  echo "$build/tools/gpuscope/gpuscope"
}

run() {
  local bin
  bin="$(binary)" || return 1
  export LD_LIBRARY_PATH="$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  local worker
  worker="$(dirname "$bin")/gpuscope-burn-worker"
  [ -x "$worker" ] || worker="$(dirname "$bin")/../gpuscope-burn-worker/gpuscope-burn-worker"
  echo "== $(date -u +%FT%TZ) $(nvidia-smi --query-gpu=name,driver_version,power.limit,pstate,temperature.gpu --format=csv,noheader)"

  echo "== gpuscope burn --duration 3   (every precision, memory, host link)"
  timeout 240 "$bin" burn --duration 3 >"$out/burn_cli.txt" 2>"$out/burn_cli_stderr.txt"
  echo "exit code: $?"
  cat "$out/burn_cli.txt"
  echo "-- stderr (progress):"
  cat "$out/burn_cli_stderr.txt"

  echo "== gpuscope burn --duration 3 --precision bf16 --no-memory --no-host-link --inject-fault"
  timeout 60 "$bin" burn --duration 3 --precision bf16 --no-memory --no-host-link --inject-fault \
    >"$out/burn_cli_fault.txt" 2>"$out/burn_cli_fault_stderr.txt"
  echo "exit code: $? (expected 1)"
  cat "$out/burn_cli_fault.txt"
  grep -v "^gpuscope: burn " "$out/burn_cli_fault_stderr.txt"

  echo "== gpuscope burn --json --duration 2 --precision fp64,bf16,fp8 --no-host-link"
  timeout 60 "$bin" burn --json --duration 2 --precision fp64,bf16,fp8 --no-host-link \
    >"$out/burn_cli.json" 2>/dev/null
  echo "exit code: $? ($(wc -c <"$out/burn_cli.json") bytes)"

  echo "== worker alone: --precision bf16 --duration 2 --memory --host-link --host-link-max-bytes 16777216"
  CUDA_VISIBLE_DEVICES=0 timeout 60 "$worker" --precision bf16 --duration 2 --memory --host-link \
    --host-link-max-bytes 16777216 >"$out/worker_recorded.jsonl" 2>"$out/worker_stderr.txt"
  echo "exit code: $? ($(wc -l <"$out/worker_recorded.jsonl") lines)"
}

signals() {
  local bin
  bin="$(binary)" || return 1
  export LD_LIBRARY_PATH="$carry/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  echo "== Ctrl-C: gpuscope burn --duration 3 --precision fp64,bf16,fp8 --no-memory --no-host-link, SIGINT after 9 s"
  "$bin" burn --duration 3 --precision fp64,bf16,fp8 --no-memory --no-host-link \
    >"$out/burn_cli_interrupt.txt" 2>"$out/burn_cli_interrupt_stderr.txt" &
  local pid=$!
  sleep 9
  kill -INT "$pid"
  wait "$pid"
  echo "exit code: $? (expected 130)"
  cat "$out/burn_cli_interrupt.txt" "$out/burn_cli_interrupt_stderr.txt"

  echo "== a worker killed: gpuscope burn --duration 3 --precision bf16,fp8 --no-memory --no-host-link, SIGKILL to the worker after 6 s"
  "$bin" burn --duration 3 --precision bf16,fp8 --no-memory --no-host-link \
    >"$out/burn_cli_killed.txt" 2>"$out/burn_cli_killed_stderr.txt" &
  pid=$!
  sleep 6
  local worker_pid
  worker_pid="$(pgrep -P "$pid")"
  echo "worker pid: $worker_pid"
  kill -KILL $worker_pid
  wait "$pid"
  echo "exit code: $? (expected 6)"
  cat "$out/burn_cli_killed.txt" "$out/burn_cli_killed_stderr.txt"
}

case "${1:-run}" in
  prepare) prepare "${2:-build/h4}" ;;
  run) run ;;
  signals) signals ;;
  *) echo "usage: bench/burn_cli_device.sh prepare [BUILD] | run | signals" >&2; exit 2 ;;
esac
