#!/usr/bin/env bash
# `gpuscope trace` on the GPU machine, in one device call, with the sweep's dry run and a check
# of the /metrics server beside it:
#   1. builds gpuscope and libgpuscope_inject.so (Release; headers and static libs from .carry);
#   2. each example program of bench/trace_examples alone, then under `gpuscope trace` with the
#      default window: the program's own median step time in both runs, the trace's median step
#      time inside the window and outside it, and what the trace saw (busy share, data wait,
#      syncs and kernels per step): trace_cli_results.txt;
#   3. the same programs traced over a short window (fixtures for the analysis tests), packed
#      with every summary.json into trace_cli_runs.tar.gz;
#   4. `gpuscope sweep --dry-run` on a bf16 matmul loop (changes nothing);
#   5. a /metrics scrape with five idle connections open.
#
#   bash bench/trace_cli_device.sh prepare   # here: .carry (monitor_device.sh prepare, plotly)
#   bash bench/trace_cli_device.sh run       # there (carry .carry)
# Reads the GPU only: never changes a power limit, clocks, MIG, persistence or compute mode.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
build="$root/build/device-cli"
bin="$build/tools/gpuscope/gpuscope"
export NCCL_NVLS_ENABLE=0

prepare() {
  bash bench/monitor_device.sh prepare && cp .deps/python/plotly/package_data/plotly.min.js .carry/
}

# gpuscope and the injection library (RelWithDebInfo, no gpuscope-torch) into build/device-cli;
# bench/trace_overhead_device.sh builds through this too.
build() {
  build_cli_and_inject "$build" "$out/cli_build.log" || return 1
  echo "built $bin"
  ldd "$bin" | grep -E "gnutls|not found" || true
}

# NAME "PROGRAM ARGS" "TRACE OPTIONS": the program alone, then traced; one result line.
pair() {
  local name="$1" args="$2" topts="$3"
  python3 "bench/trace_examples/$name.py" $args >"$out/$name-base.out" 2>"$out/$name-base.err"
  "$bin" trace $topts -o "$out/runs/$name" -- python3 "bench/trace_examples/$name.py" $args \
    >"$out/$name-trace.out" 2>"$out/$name-trace.err"
  echo "$name: trace exit $?"
  tail -25 "$out/$name-trace.err"
  python3 - "$name" "$out" <<'PY'
import json, sys
name, out = sys.argv[1], sys.argv[2]
def last_json(path):
    for line in reversed(open(path).read().splitlines()):
        if line.startswith("{"):
            return json.loads(line)
base, traced = last_json(f"{out}/{name}-base.out"), last_json(f"{out}/{name}-trace.out")
s = json.load(open(f"{out}/runs/{name}/summary.json"))
st, g = s["steps"], s["gpu"]
def ms(x): return f"{x*1e3:.3f}" if x is not None else "-"
row = {
  "program": name,
  "own_median_ms_alone": base["step_time_s_median"] * 1e3,
  "own_median_ms_traced_run": traced["step_time_s_median"] * 1e3,
  "trace_marked_median_ms": (st.get("marked_median_s") or 0) * 1e3,
  "trace_window_median_ms": (st.get("median_s") or 0) * 1e3,
  "trace_untraced_median_ms": (st.get("untraced_median_s") or 0) * 1e3,
  "steps_traced": st["traced"], "step_source": st["source"],
  "busy_share": g["busy_share"], "kernels_per_step": g.get("kernels_per_step"),
  "mean_kernel_us": g["mean_kernel_s"] * 1e6,
  "syncs_per_step": s["syncs"].get("per_step"), "data_wait_share": s["data_wait"]["share"],
}
row["window_vs_alone"] = row["trace_window_median_ms"] / row["own_median_ms_alone"] - 1
row["untraced_vs_alone"] = (row["trace_untraced_median_ms"] / row["own_median_ms_alone"] - 1) if row["trace_untraced_median_ms"] else None
row["marked_vs_own_traced_run"] = row["trace_marked_median_ms"] / row["own_median_ms_traced_run"] - 1
print("RESULT " + json.dumps(row))
with open(f"{out}/trace_cli_results.txt", "a") as f:
    f.write(json.dumps(row) + "\n")
PY
}

# Where the cost of tracing comes from, on healthy_train (363 kernels a step): the program alone,
# under `gpuscope trace` as is, with fewer CUPTI kinds, without the shim, and with the library
# injected by hand (no gpuscope: no sampler); the program's own median step time each time.
overhead() {
  local p=bench/trace_examples/healthy_train.py args="--warmup 20 --steps 100 --batch 128"
  local lib="$build/src/inject/libgpuscope_inject.so"
  own() { python3 - "$1" <<'PY'
import json, sys
for line in reversed(open(sys.argv[1]).read().splitlines()):
    if line.startswith("{"):
        print(f'{json.loads(line)["step_time_s_median"] * 1e3:.3f} ms'); break
PY
  }
  one() {  # NAME COMMAND...: runs it, prints the program's own median
    local name="$1"; shift
    "$@" >"$out/oh-$name.out" 2>"$out/oh-$name.err"
    echo "$name: exit $? own median $(own "$out/oh-$name.out")" | tee -a "$out/trace_overhead.txt"
  }
  : >"$out/trace_overhead.txt"
  for rep in 1 2; do
    one "alone-$rep" python3 $p $args
    one "trace-default-$rep" "$bin" trace --skip-steps 30 --steps 50 -o "$out/oh/d$rep" -- python3 $p $args
    one "trace-no-api-kinds-$rep" env GPUSCOPE_TRACE_KINDS=kernel,memcpy,memset,sync,overhead \
      "$bin" trace --skip-steps 30 --steps 50 -o "$out/oh/k$rep" -- python3 $p $args
    one "trace-no-shim-$rep" "$bin" trace --no-shim --skip-steps 30 --steps 50 -o "$out/oh/s$rep" -- python3 $p $args
    one "trace-window-never-$rep" "$bin" trace --skip-steps 100000 --steps 1 --skip 100000 -o "$out/oh/n$rep" -- python3 $p $args
    one "nvtx-only-by-hand-$rep" env NVTX_INJECTION64_PATH="$lib" GPUSCOPE_TRACE_DIR="$out/oh/h$rep" python3 $p $args
    one "cuda-injection-by-hand-never-$rep" env CUDA_INJECTION64_PATH="$lib" NVTX_INJECTION64_PATH="$lib" \
      GPUSCOPE_TRACE_DIR="$out/oh/c$rep" GPUSCOPE_TRACE_SKIP_STEPS=100000 GPUSCOPE_TRACE_STEPS=1 python3 $p $args
  done
}

case "${1:-run}" in
  prepare) prepare ;;
  build) build ;;
  overhead)
    build || exit 1
    mkdir -p "$out/oh/h1" "$out/oh/h2" "$out/oh/c1" "$out/oh/c2"
    overhead
    rm -rf "$out/oh"
    ;;
  run)
    nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv | tee "$out/cli_gpu.txt"
    python3 -c 'import torch, torchvision; print("torch", torch.__version__, "torchvision", torchvision.__version__)' | tee -a "$out/cli_gpu.txt"
    build || exit 1
    mkdir -p "$out/runs" "$out/fixtures"
    : >"$out/trace_cli_results.txt"
    pair healthy_train "--warmup 20 --steps 100 --batch 128" "--skip-steps 30 --steps 50"
    pair sync_every_step "--warmup 20 --steps 100 --batch 128" "--skip-steps 30 --steps 50"
    pair launch_bound "--warmup 50 --steps 400 --batch 32" "--skip-steps 100 --steps 50"
    pair data_starved "--warmup 5 --steps 30 --batch 128" "--skip-steps 10 --steps 15"
    # Short windows: small record files to keep as labelled fixtures.
    for p in healthy_train sync_every_step launch_bound data_starved; do
      "$bin" trace --skip-steps 10 --steps 6 -o "$out/fixtures/$p" -- \
        python3 "bench/trace_examples/$p.py" --warmup 5 --steps 15 >/dev/null 2>"$out/fixtures/$p.err"
      echo "fixture $p: exit $? $(du -sh "$out/fixtures/$p" | cut -f1)"
    done
    echo "== sweep --dry-run"
    timeout 180 "$bin" sweep --dry-run --window 3 --warmup 3 -- python3 bench/sweep_matmul.py \
      >"$out/sweep_dry_run.txt" 2>&1
    echo "sweep exit $?"; cat "$out/sweep_dry_run.txt" | tail -40
    nvidia-smi --query-gpu=power.limit --format=csv | tee -a "$out/sweep_dry_run.txt"
    echo "== /metrics with five idle connections"
    "$bin" monitor --no-tui --duration 8 --listen 127.0.0.1:19400 >"$out/metrics_monitor.out" 2>&1 &
    sleep 2
    for i in 1 2 3 4 5; do exec {fd}<>/dev/tcp/127.0.0.1/19400; done
    for i in 1 2 3; do curl -s -o /dev/null -w "scrape %{http_code} in %{time_total} s\n" http://127.0.0.1:19400/metrics; done | tee "$out/metrics_idle.txt"
    wait
    (cd "$out" && tar czf trace_cli_runs.tar.gz runs/*/summary.json fixtures runs/data_starved/trace.json &&
      rm -rf runs fixtures)
    ls -la "$out"
    ;;
esac
