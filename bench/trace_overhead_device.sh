#!/usr/bin/env bash
# What `gpuscope trace` costs the traced program, on the GPU machine, in one device call: each
# program alone (twice) and under `gpuscope trace` with the injection library's settings varied
# one at a time, the program's own step times (CUDA events per step) split into the steps before
# the window, inside it, just after it (the first 30) and long after it. Also checks that the
# runtime/driver records' thread ids are the process's kernel thread ids (/proc/self/task) and
# whether CUPTI was detached after the window (`cupti_teardown`).
#
#   bash bench/trace_overhead_device.sh prepare   # here: .carry (as bench/trace_cli_device.sh)
#   bash bench/trace_overhead_device.sh run       # there (carry .carry); about 4 minutes
# Results: $OUT/trace_overhead.txt (table), $OUT/trace_overhead.jsonl, $OUT/trace_overhead.tar.gz.
# TRACE_PROGRAMS="launch_loop healthy_train launch_bound" picks the programs (launch_loop: C++,
# bench/trace_examples/launch_loop.cu, the per-launch cost without Python's noise; default the
# two Python ones; TRACE_LOOP_CALLS="0 8": launch_loop's extra CUDA calls per launch, a set of rows
# each); TRACE_VARIANTS=zeroed: CUPTI zeroing its own buffers against ours, kernels alone, every API
# call recorded (calls per kernel) and CUPTI left attached after the window; TRACE_VARIANTS=kindcost:
# kernels alone and kernels plus each other kind, twice (which kinds cost per CUDA call);
# TRACE_VARIANTS=clock2: the default and kernels+sync, with gpuscope's clock and CUPTI's own;
# TRACE_VARIANTS=light: `trace --light` against the default and the program alone, three times;
# TRACE_VARIANTS=peers: alone, the default, --light, kernels alone and torch.profiler over the same
# window (the Python programs' --torch-profiler), interleaved three times. TRACE_HEALTHY_ONLY=1 / TRACE_LAUNCH_ONLY=1 run one program; TRACE_THREADS=1 samples every
# thread's CPU time and CPU during each run (bench/thread_cpu_sampler.py, threads-*.jsonl).
# Reads the GPU only: never changes a power limit, clocks, MIG, persistence or compute mode.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
build="$root/build/device-cli"  # bench/trace_cli_device.sh build's
bin="${TRACE_BIN:-$build/tools/gpuscope/gpuscope}"  # TRACE_BIN: a prebuilt one, no build
export NCCL_NVLS_ENABLE=0

# PROGRAM ARGS SKIP STEPS VARIANT [ENV...]: one run; one JSON row in trace_overhead.jsonl.
one() {
  local program="$1" args="$2" skip="$3" steps="$4" variant="$5"
  shift 5
  local name="${label:-$program}"  # label: the row's name where one program runs with other args
  local tag="$name-$variant" dir="$out/runs/$name-$variant" sampler=""
  # TRACE_THREADS=1: each thread's CPU time and CPU, every 20 ms (where the window's cost goes).
  if [ -n "${TRACE_THREADS:-}" ]; then
    python3 bench/thread_cpu_sampler.py "trace_examples/$program.py" "$out/threads-$tag.jsonl" 20 &
    sampler=$!
  fi
  local command=(python3 "bench/trace_examples/$program.py")
  [ "$program" = launch_loop ] && command=("$launch_loop")  # C++: bench/trace_examples/launch_loop.cu
  if [[ "$variant" == alone* ]]; then
    env "$@" "${command[@]}" $args >"$out/$tag.out" 2>"$out/$tag.err"
  elif [[ "$variant" == peer-torch-profiler* ]]; then  # the peer: torch.profiler, same window
    env "$@" "${command[@]}" $args --torch-profiler "$skip:$steps" >"$out/$tag.out" 2>"$out/$tag.err"
  else
    local light=""
    [[ "$variant" == *light* ]] && light="--light"  # a variant named *light*: trace --light
    env "$@" "$bin" trace $light --skip-steps "$skip" --steps "$steps" -o "$dir" -- \
      "${command[@]}" $args >"$out/$tag.out" 2>"$out/$tag.err"
  fi
  local rc=$?
  [ -n "$sampler" ] && kill "$sampler"
  python3 - "$out" "$name" "$variant" "$args" "$skip" "$steps" "$rc" "$dir" "$*" <<'PY'
import glob, json, statistics, sys
out, program, variant, args, skip, steps, rc, run_dir, env = sys.argv[1:]
skip, steps, rc = int(skip), int(steps), int(rc)
row = {"program": program, "variant": variant, "env": env, "exit": rc}
own = None
for line in reversed(open(f"{out}/{program}-{variant}.out").read().splitlines()):
    if line.startswith("{"):
        own = json.loads(line)
        break
if own:
    warmup = int(args.split("--warmup ")[1].split()[0])
    times = own["step_times_s"]
    def med(lo, hi):
        xs = [t for k, t in enumerate(times) if lo <= warmup + k < hi]
        return round(statistics.median(xs) * 1e3, 3) if xs else None
    end = skip + steps
    row.update(before_ms=med(0, skip), inside_ms=med(skip, end), after_near_ms=med(end, end + 30),
               after_far_ms=med(end + 30, 10**9), all_ms=round(own["step_time_s_median"] * 1e3, 3))
    if "launch_us_median" in own:  # launch_loop: the launch call itself, host time
        row["launch_us_median"] = own["launch_us_median"]
        row["clock_ns"] = own.get("clock_ns")
if not variant.startswith(("alone", "peer")):
    files = glob.glob(f"{run_dir}/**/gpuscope-trace-*.jsonl", recursive=True)
    api_tids, teardown, kernels, api, cupti, header, errors = set(), [], 0, 0, None, None, []
    samples = []
    for path in files:
        for line in open(path, errors="replace"):
            try:
                r = json.loads(line)
            except ValueError:
                continue
            t = r.get("t")
            if t in ("runtime", "driver"):
                api += 1
                api_tids.add(r["tid"])
            elif t == "kernel":
                kernels += 1
            elif t == "cupti_teardown":
                teardown.append(r["status"])
            elif t == "cupti":
                cupti = r["status"]
            elif t == "cupti_error":
                errors.append(f'{r.get("call")}:{r.get("error")}')
            elif t == "sample":
                samples.append(r.get("cost_ns", 0))
            elif t == "header" and header is None:
                header = {k: r.get(k) for k in ("kinds", "api", "defer", "teardown")}
    row.update(record_files=len(files), kernels=kernels, api_records=api, cupti=cupti,
               teardown=teardown, header=header, cupti_errors=errors)
    if samples:  # a sampled window: how often CUPTI was paused or resumed, and what that took
        row.update(sample_toggles=len(samples), sample_cost_us_max=round(max(samples) / 1e3, 1),
                   sample_cost_us_median=round(statistics.median(samples) / 1e3, 1))
    try:  # the window's GPU gaps of 10-100 us: the host falling behind its GPU
        summary = json.load(open(f"{run_dir}/summary.json"))
        row["gaps_10_100us"] = next((b["gaps"] for b in summary["gpu"]["idle"]
                                     if b["gap"] == "10us-100us"), None)
    except (OSError, ValueError, KeyError):
        pass
    if own:
        row["api_tids"] = sorted(api_tids)
        row["api_tids_in_proc"] = api_tids <= set(own["tids"])
        row["main_thread_in_api_tids"] = own["pid"] in api_tids
print(json.dumps(row))
with open(f"{out}/trace_overhead.jsonl", "a") as f:
    f.write(json.dumps(row) + "\n")
PY
}

# TRACE_VARIANTS=repeat: the default and kernels alone, interleaved three times (how often the
# window's cost comes); TRACE_VARIANTS=cupti: the default against CUPTI's worker thread flushing
# every 100 ms, a 32 MB device buffer, and both, interleaved twice; TRACE_VARIANTS=api: the
# default against no runtime/driver records, interleaved three times; TRACE_VARIANTS=drop: the
# default, kernels alone and the default less one of sync, API, driver API, three times;
# TRACE_VARIANTS=sync: kernels with sync records against kernels with copies, memsets and
# overhead records, four times; TRACE_VARIANTS=kinds (the default): the default kinds against every kind, and each kind beside
# kernels alone; TRACE_VARIANTS=clock: the timestamp callback against CUPTI's own clock;
# TRACE_VARIANTS=settings: the window settings of session 7.
programs() {
  local p="$1" args="$2" skip="$3" steps="$4"
  one "$p" "$args" "$skip" "$steps" alone-1
  if [ "${TRACE_VARIANTS:-kinds}" = peers ]; then  # against torch.profiler, interleaved 3 times
    local i
    for i in 1 2 3; do
      one "$p" "$args" "$skip" "$steps" "alone-r$i"
      one "$p" "$args" "$skip" "$steps" "trace-default-r$i"
      one "$p" "$args" "$skip" "$steps" "trace-light-r$i"
      one "$p" "$args" "$skip" "$steps" "trace-kernels-only-r$i" GPUSCOPE_TRACE_KINDS=kernel
      one "$p" "$args" "$skip" "$steps" "peer-torch-profiler-r$i"
    done
    return
  elif [ "${TRACE_VARIANTS:-kinds}" = light ]; then  # trace --light against the default, 3 times
    local i
    for i in 1 2 3; do
      one "$p" "$args" "$skip" "$steps" "alone-r$i"
      one "$p" "$args" "$skip" "$steps" "trace-light-r$i"
      one "$p" "$args" "$skip" "$steps" "trace-default-r$i"
    done
    return
  elif [ "${TRACE_VARIANTS:-kinds}" = clock2 ]; then  # the kinds that time every call, either clock
    local i
    for i in 1 2; do
      one "$p" "$args" "$skip" "$steps" "alone-r$i"
      one "$p" "$args" "$skip" "$steps" "trace-default-r$i"
      one "$p" "$args" "$skip" "$steps" "trace-default-cupti-clock-r$i" GPUSCOPE_TRACE_CUPTI_CLOCK=1
      one "$p" "$args" "$skip" "$steps" "trace-kernel+sync-r$i" GPUSCOPE_TRACE_KINDS=kernel,sync
      one "$p" "$args" "$skip" "$steps" "trace-kernel+sync-cupti-clock-r$i" \
        GPUSCOPE_TRACE_KINDS=kernel,sync GPUSCOPE_TRACE_CUPTI_CLOCK=1
    done
    return
  elif [ "${TRACE_VARIANTS:-kinds}" = kindcost ]; then  # kernels plus one kind each, twice
    local i k
    for i in 1 2; do
      one "$p" "$args" "$skip" "$steps" "alone-r$i"
      one "$p" "$args" "$skip" "$steps" "trace-kernel-r$i" GPUSCOPE_TRACE_KINDS=kernel
      for k in memcpy,memset sync overhead runtime driver; do
        one "$p" "$args" "$skip" "$steps" "trace-kernel+${k/,/+}-r$i" GPUSCOPE_TRACE_KINDS="kernel,$k"
      done
    done
    return
  elif [ "${TRACE_VARIANTS:-kinds}" = zeroed ]; then  # CUPTI zeroing its buffers itself, twice
    local i
    for i in 1 2; do
      one "$p" "$args" "$skip" "$steps" "trace-default-r$i"
      one "$p" "$args" "$skip" "$steps" "trace-cupti-zeroes-r$i" GPUSCOPE_TRACE_CUPTI_ZEROED_BUFFERS=0
      one "$p" "$args" "$skip" "$steps" "trace-kernels-only-r$i" GPUSCOPE_TRACE_KINDS=kernel
      one "$p" "$args" "$skip" "$steps" "alone-r$i"
    done
    # Every API call recorded: how many CUDA calls the program makes per kernel.
    one "$p" "$args" "$skip" "$steps" trace-api-all GPUSCOPE_TRACE_API=all
    # Kinds off after the window but CUPTI attached: what an attached CUPTI costs by itself.
    one "$p" "$args" "$skip" "$steps" trace-no-teardown GPUSCOPE_TRACE_TEARDOWN=0
    return
  elif [ "${TRACE_VARIANTS:-kinds}" = repeat ]; then  # how often each pays: interleaved, 3 times
    local i
    for i in 1 2 3; do
      one "$p" "$args" "$skip" "$steps" "trace-default-r$i"
      one "$p" "$args" "$skip" "$steps" "trace-kernels-only-r$i" GPUSCOPE_TRACE_KINDS=kernel
    done
    one "$p" "$args" "$skip" "$steps" alone-2
    return
  elif [ "${TRACE_VARIANTS:-kinds}" = api ]; then  # the API records' share: with and without
    local i
    for i in 1 2 3; do
      one "$p" "$args" "$skip" "$steps" "trace-default-r$i"
      one "$p" "$args" "$skip" "$steps" "trace-no-api-r$i" \
        GPUSCOPE_TRACE_KINDS=kernel,memcpy,memset,sync,overhead
    done
    one "$p" "$args" "$skip" "$steps" alone-2
    return
  elif [ "${TRACE_VARIANTS:-kinds}" = sync ]; then  # the sync kind against the other non-API ones
    local i
    for i in 1 2 3 4; do
      one "$p" "$args" "$skip" "$steps" "trace-kernel+sync-r$i" GPUSCOPE_TRACE_KINDS=kernel,sync
      one "$p" "$args" "$skip" "$steps" "trace-kernel+copies+overhead-r$i" \
        GPUSCOPE_TRACE_KINDS=kernel,memcpy,memset,overhead
    done
    one "$p" "$args" "$skip" "$steps" alone-2
    return
  elif [ "${TRACE_VARIANTS:-kinds}" = drop ]; then  # each kind left out of the default, 3 times
    local i
    for i in 1 2 3; do
      one "$p" "$args" "$skip" "$steps" "alone-r$i"
      one "$p" "$args" "$skip" "$steps" "trace-default-r$i"
      one "$p" "$args" "$skip" "$steps" "trace-kernels-only-r$i" GPUSCOPE_TRACE_KINDS=kernel
      one "$p" "$args" "$skip" "$steps" "trace-no-sync-r$i" \
        GPUSCOPE_TRACE_KINDS=kernel,memcpy,memset,runtime,driver,overhead
      one "$p" "$args" "$skip" "$steps" "trace-no-api-r$i" \
        GPUSCOPE_TRACE_KINDS=kernel,memcpy,memset,sync,overhead
      one "$p" "$args" "$skip" "$steps" "trace-no-driver-r$i" \
        GPUSCOPE_TRACE_KINDS=kernel,memcpy,memset,runtime,sync,overhead
    done
    return
  elif [ "${TRACE_VARIANTS:-kinds}" = cupti ]; then  # CUPTI's worker flush and device buffer
    local i
    for i in 1 2; do
      one "$p" "$args" "$skip" "$steps" "trace-default-r$i"
      one "$p" "$args" "$skip" "$steps" "trace-flush100-r$i" GPUSCOPE_TRACE_CUPTI_FLUSH_MS=100
      one "$p" "$args" "$skip" "$steps" "trace-devbuf32-r$i" GPUSCOPE_TRACE_CUPTI_DEVICE_BUFFER_MB=32
      one "$p" "$args" "$skip" "$steps" "trace-both-r$i" GPUSCOPE_TRACE_CUPTI_FLUSH_MS=100 \
        GPUSCOPE_TRACE_CUPTI_DEVICE_BUFFER_MB=32
    done
    one "$p" "$args" "$skip" "$steps" alone-2
    return
  elif [ "${TRACE_VARIANTS:-kinds}" = kinds ]; then
    one "$p" "$args" "$skip" "$steps" trace-default
    one "$p" "$args" "$skip" "$steps" trace-every-kind \
      GPUSCOPE_TRACE_KINDS=kernel,memcpy,memset,runtime,driver,sync,overhead
    local k
    for k in memset memcpy sync overhead runtime,driver; do
      one "$p" "$args" "$skip" "$steps" "trace-kernel+${k/,/+}" GPUSCOPE_TRACE_KINDS="kernel,$k"
    done
    one "$p" "$args" "$skip" "$steps" trace-default-2
  elif [ "${TRACE_VARIANTS:-kinds}" = settings ]; then
    one "$p" "$args" "$skip" "$steps" trace-new
    one "$p" "$args" "$skip" "$steps" trace-old GPUSCOPE_TRACE_API=all GPUSCOPE_TRACE_DEFER=0 \
      GPUSCOPE_TRACE_TEARDOWN=0
    one "$p" "$args" "$skip" "$steps" trace-new-api-all GPUSCOPE_TRACE_API=all
    one "$p" "$args" "$skip" "$steps" trace-new-no-defer GPUSCOPE_TRACE_DEFER=0
    one "$p" "$args" "$skip" "$steps" trace-new-no-teardown GPUSCOPE_TRACE_TEARDOWN=0
  else
    one "$p" "$args" "$skip" "$steps" trace-default
    one "$p" "$args" "$skip" "$steps" trace-cupti-clock GPUSCOPE_TRACE_CUPTI_CLOCK=1
    one "$p" "$args" "$skip" "$steps" trace-no-api GPUSCOPE_TRACE_KINDS=kernel,memcpy,memset,sync,overhead
    one "$p" "$args" "$skip" "$steps" trace-kernels-cupti-clock GPUSCOPE_TRACE_KINDS=kernel \
      GPUSCOPE_TRACE_CUPTI_CLOCK=1
  fi
  one "$p" "$args" "$skip" "$steps" trace-kernels-only GPUSCOPE_TRACE_KINDS=kernel
  one "$p" "$args" "$skip" "$steps" alone-2
}

table() {
  python3 - "$out" <<'PY'
import json, sys
rows = [json.loads(l) for l in open(f"{sys.argv[1]}/trace_overhead.jsonl")]
base = {}
for r in rows:
    if r["variant"].startswith("alone") and r.get("all_ms"):
        base.setdefault(r["program"], []).append(r)
def pct(x, b):
    return f"{(x / b - 1) * 100:+.1f}%" if x and b else "-"
print(f'{"program":15} {"variant":24} {"before":>16} {"inside":>16} {"after<30":>16} {"after>30":>16} {"in/before":>9}  teardown / api records / tids ok')
for r in rows:
    b = base.get(r["program"], [])
    def ref(key):
        xs = [x[key] for x in b if x.get(key)]
        return sum(xs) / len(xs) if xs else None
    cells = []
    for key in ("before_ms", "inside_ms", "after_near_ms", "after_far_ms"):
        v = r.get(key)
        cells.append(f'{v:7.2f} {pct(v, ref(key)):>8}' if v else f'{"-":>16}')
    ib = r.get("inside_ms") / r["before_ms"] if r.get("inside_ms") and r.get("before_ms") else None
    cells.append(f'{ib:9.3f}' if ib else f'{"-":>9}')
    extra = "" if r["variant"].startswith(("alone", "peer")) else \
        f'{r.get("teardown")} / {r.get("api_records")} / {r.get("api_tids_in_proc")},{r.get("main_thread_in_api_tids")} / gaps {r.get("gaps_10_100us")} {r.get("cupti_errors") or ""}'
    if r.get("launch_us_median"):
        extra += f' launch {r["launch_us_median"]:.2f} us, clock {r.get("clock_ns")} ns'
    if r.get("sample_toggles"):
        extra += f' toggles {r["sample_toggles"]} (median {r["sample_cost_us_median"]} us, max {r["sample_cost_us_max"]} us)'
    print(f'{r["program"]:15} {r["variant"]:24} ' + " ".join(cells) + "  " + extra + f' exit {r["exit"]}')
PY
}

case "${1:-run}" in
  prepare)  # .deps: the shared one where this checkout has none (a link, removed after)
    linked=0
    [ -e .deps ] || { ln -s "${GPUSCOPE_DEPS_DIR:-/work/main/.deps}" .deps && linked=1; }
    bash bench/trace_cli_device.sh prepare; rc=$?
    [ "$linked" = 1 ] && rm .deps
    du -sh .carry; exit $rc ;;
  run)
    nvidia-smi --query-gpu=name,driver_version,power.limit --format=csv | tee "$out/gpu.txt"
    echo "clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)" |
      tee -a "$out/gpu.txt"
    python3 -c 'import torch; print("torch", torch.__version__)' | tee -a "$out/gpu.txt"
    [ -n "${TRACE_BIN:-}" ] || bash bench/trace_cli_device.sh build || exit 1
    : >"$out/trace_overhead.jsonl"
    # TRACE_PROGRAMS: which of launch_loop (C++, per-launch cost), healthy_train, launch_bound
    programs_wanted=" ${TRACE_PROGRAMS:-healthy_train launch_bound} "
    if [[ "$programs_wanted" == *" launch_loop "* ]]; then
      launch_loop="$root/build/launch_loop"
      nvcc -O2 -std=c++17 -o "$launch_loop" bench/trace_examples/launch_loop.cu || exit 1
      # TRACE_LOOP_CALLS: the extra CUDA calls per launch, one set of rows each
      for calls in ${TRACE_LOOP_CALLS:-0}; do
        label="launch_loop+$calls" programs launch_loop \
          "--warmup 50 --steps 250 --kernels 500 --host-us 15 --extra-calls $calls" 100 50
      done
    fi
    [[ "$programs_wanted" == *" healthy_train "* ]] && [ -z "${TRACE_LAUNCH_ONLY:-}" ] &&
      programs healthy_train "--warmup 20 --steps 170 --batch 128" 60 50
    [[ "$programs_wanted" == *" launch_bound "* ]] && [ -z "${TRACE_HEALTHY_ONLY:-}" ] &&
      programs launch_bound "--warmup 50 --steps 250 --batch 32" 100 50
    table | tee "$out/trace_overhead.txt"
    (cd "$out" && tar czf trace_overhead.tar.gz trace_overhead.jsonl *.err runs/*/summary.json \
      threads-*.jsonl cli_build.log 2>/dev/null)
    ;;
  *) echo "usage: $0 prepare|run" >&2; exit 2 ;;
esac
