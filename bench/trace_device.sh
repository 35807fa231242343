#!/usr/bin/env bash
# The recording half of `gpuscope trace` on the GPU machine (through the device tool, one call):
# builds libgpuscope_inject.so and the record reader's summary tool, runs a small PyTorch
# training loop (bench/trace_examples/smoke_train.py) under CUDA_INJECTION64_PATH +
# NVTX_INJECTION64_PATH, and prints per process: CUPTI's state, the recording window, counts per
# record kind, and the step-time cost of tracing against the same loop without the library.
#
#   bash bench/trace_device.sh prepare   # here, before the call: fills .carry (headers of the
#                                        # -dev packages and NVML, as monitor_device.sh does)
#   bash bench/trace_device.sh run       # there (carry .carry): build, then the runs below
#
# Runs (each in its own run folder, sent back as $OUT/trace-NAME.tar.gz):
#   baseline  the loop without the library (step times only)
#   full      no window settings: the whole run traced
#   window    GPUSCOPE_TRACE_SKIP_STEPS=50 GPUSCOPE_TRACE_STEPS=20: CUPTI on for 20 steps only
#   term      the windowed loop killed by SIGTERM mid-run: the records up to the signal survive
# Environment: TRACE_STEPS (200), TRACE_WORKERS (2 DataLoader workers), CUDA_HOME
# (/usr/local/cuda). Reads the GPU only; changes no setting.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
cuda="${CUDA_HOME:-/usr/local/cuda}"
steps="${TRACE_STEPS:-200}"
workers="${TRACE_WORKERS:-2}"
build="$root/build/device-trace"
lib=""
summary=""

gpu_facts() {
  {
    date -u +"%Y-%m-%dT%H:%M:%SZ"
    nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv || true
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)' || true
  } 2>&1 | tee "$out/trace_gpu.txt"
}

# The library through CMake (the project's way); if that cannot configure here, with g++ alone.
build_library() {
  local extra=()
  if [ -d "$usr" ]; then
    extra=(-DCMAKE_PREFIX_PATH="$usr" -DSQLite3_INCLUDE_DIR="$usr/include"
      -DSQLite3_LIBRARY="$usr/lib/x86_64-linux-gnu/libsqlite3.a")
  fi
  if cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DGPUSCOPE_BUILD_TESTS=OFF -DGPUSCOPE_BUILD_TORCH=OFF "${extra[@]}" \
    >"$out/trace_build.log" 2>&1 &&
    cmake --build "$build" --target gpuscope_inject -j "$(nproc)" >>"$out/trace_build.log" 2>&1; then
    lib="$build/src/inject/libgpuscope_inject.so"
    echo "built $lib with CMake"
  else
    echo "CMake could not build the library (last lines of trace_build.log below); using g++ directly"
    tail -8 "$out/trace_build.log"
    mkdir -p "$build"
    lib="$build/libgpuscope_inject.so"
    g++ -std=c++20 -O2 -g -fPIC -shared -fvisibility=hidden -fvisibility-inlines-hidden \
      -Isrc -I"$cuda/include" src/inject/*.cc -L"$cuda/lib64" -lcupti -ldl -lpthread \
      -Wl,-rpath,"$cuda/lib64" -Wl,-z,now -static-libstdc++ -static-libgcc -Wl,--exclude-libs,ALL \
      -Wl,--version-script=src/inject/exports.map -o "$lib"
    echo "built $lib with g++"
  fi
  echo "exports: $(nm -D --defined-only "$lib" | awk '{print $3}' | tr '\n' ' ')"
  ldd "$lib" | grep -E "cupti|stdc|not found" || true
}

# The reader's summary tool: three source files and header-only JSON and fmt.
build_summary() {
  summary="$build/trace_summary"
  if g++ -std=c++20 -O2 -DFMT_HEADER_ONLY=1 -Iinclude -Isrc -I"$usr/include" \
    bench/trace_summary.cc src/trace/records.cc src/common/status.cc -o "$summary" \
    >>"$out/trace_build.log" 2>&1; then
    echo "built $summary"
  else
    echo "the summary tool did not build (no .carry/usr?): counting record types with Python"
    summary=""
  fi
}

summarize() {
  local dir="$1"
  if [ -n "$summary" ]; then
    "$summary" "$dir" || echo "trace_summary failed: exit $?"
  else
    python3 - "$dir" <<'PY'
import collections, glob, json, sys
for path in sorted(glob.glob(sys.argv[1] + "/gpuscope-trace-*.jsonl")):
    kinds = collections.Counter()
    cupti = window = None
    for line in open(path, errors="replace"):
        try:
            r = json.loads(line)
        except ValueError:
            kinds["(cut line)"] += 1
            continue
        kinds[r["t"]] += 1
        if r["t"] == "cupti":
            cupti = r
        if r["t"].startswith("window"):
            window = (window or []) + [r]
    print(path, dict(kinds), "cupti:", cupti, "window:", window)
PY
  fi
}

# run_case NAME [VAR=VALUE...]: the loop under the library, its run folder summarized and archived.
run_case() {
  local name="$1" dir="$out/trace-$1" start rc=0
  shift
  rm -rf "$dir"
  mkdir -p "$dir"
  start=$(date +%s.%N)
  env GPUSCOPE_TRACE_DIR="$dir" CUDA_INJECTION64_PATH="$lib" NVTX_INJECTION64_PATH="$lib" "$@" \
    python3 bench/trace_examples/smoke_train.py --steps "$steps" --workers "$workers" \
    --out "$dir/steps.json" >"$dir/stdout.txt" 2>"$dir/stderr.txt" || rc=$?
  echo "== $name ($*): exit $rc after $(python3 -c "import time; print(f'{time.time() - $start:.1f}')") s"
  cat "$dir/stdout.txt"
  grep -v "^\s*$" "$dir/stderr.txt" | tail -5 || true
  summarize "$dir"
}

# The SIGTERM case: the windowed loop, long enough to be killed mid-run.
run_term() {
  local dir="$out/trace-term" rc=0
  rm -rf "$dir"
  mkdir -p "$dir"
  env GPUSCOPE_TRACE_DIR="$dir" CUDA_INJECTION64_PATH="$lib" NVTX_INJECTION64_PATH="$lib" \
    GPUSCOPE_TRACE_SKIP_STEPS=50 GPUSCOPE_TRACE_STEPS=20 \
    timeout -s TERM "${TRACE_TERM_AFTER:-25}" python3 bench/trace_examples/smoke_train.py \
    --steps 1000000 --workers "$workers" --out "$dir/steps.json" \
    >"$dir/stdout.txt" 2>"$dir/stderr.txt" || rc=$?
  echo "== term: exit $rc (124: timeout's SIGTERM ended it)"
  grep -h '"t":"signal"' "$dir"/gpuscope-trace-*.jsonl || echo "no signal record"
  summarize "$dir"
}

compare_steps() {
  python3 - "$out" <<'PY'
import json, os, statistics, sys
out = sys.argv[1]
def steps(path):
    try:
        return json.load(open(path))["step_s"]
    except (OSError, ValueError, KeyError):
        return None
def median_ms(xs):
    return statistics.median(xs) * 1e3 if xs else float("nan")
base = steps(f"{out}/baseline-steps.json")
full = steps(f"{out}/trace-full/steps.json")
win = steps(f"{out}/trace-window/steps.json")
if not base:
    sys.exit("no baseline step times")
b = median_ms(base[10:])
print(f"step time, median after 10 warm-up steps: baseline {b:.3f} ms")
if full:
    f = median_ms(full[10:])
    print(f"  full trace          {f:.3f} ms ({(f / b - 1) * 100:+.1f} %)")
if win:
    inside = median_ms(win[50:70])
    outside = median_ms(win[10:50] + win[75:])
    print(f"  window, inside  [50,70) {inside:.3f} ms ({(inside / b - 1) * 100:+.1f} %)")
    print(f"  window, outside         {outside:.3f} ms ({(outside / b - 1) * 100:+.1f} %)"
          "  <- what the untraced steps cost (NVTX records only)")
for name in ("full", "window"):
    path = f"{out}/trace-{name}/steps.json"
    if os.path.exists(path):
        print(f"  CUPTI loaded in the {name} run: {json.load(open(path)).get('cupti_libraries')}")
PY
}

case "${1:-}" in
  prepare)
    bash bench/monitor_device.sh prepare
    ;;
  run)
    gpu_facts
    build_library
    build_summary
    echo "== baseline (no library)"
    python3 bench/trace_examples/smoke_train.py --steps "$steps" --workers "$workers" \
      --out "$out/baseline-steps.json"
    run_case full
    run_case window GPUSCOPE_TRACE_SKIP_STEPS=50 GPUSCOPE_TRACE_STEPS=20
    run_term
    echo "== the cost of tracing"
    compare_steps || true
    for name in full window term; do
      tar -czf "$out/trace-$name.tar.gz" -C "$out" "trace-$name" && rm -rf "$out/trace-$name"
    done
    ls -la "$out"
    ;;
  *)
    echo "usage: $0 prepare | run" >&2
    exit 2
    ;;
esac
