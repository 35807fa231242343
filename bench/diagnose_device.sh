#!/usr/bin/env bash
# The diagnose example programs (bench/diagnose_examples) on the GPU machine, and traces of them
# as fixtures for `gpuscope diagnose` (issue 20), plus the GPU-verified hard cases of
# `gpuscope trace` (issue 15).
#
#   bash bench/diagnose_device.sh prepare   # here: .carry (headers, static libs, plotly.js)
#   bash bench/diagnose_device.sh run       # there (carry .carry), about 5-6 minutes:
#     1. builds gpuscope and libgpuscope_inject.so (as bench/trace_cli_device.sh);
#     2. every example plainly, flawed then fixed: the measured gain (fixed/flawed step time and
#        samples/s) -> diagnose_results.jsonl;
#     3. `gpuscope trace` on each flawed program and on the healthy control, a short window
#        (6-8 steps), with the program's own step time beside the trace's (the 2 % check)
#        -> diagnose_traces-N.tar.gz (one folder per example: records, telemetry, summary.json,
#        the program's stdout and the trace's stderr, the command; trace.json left out; at most
#        15 MB an archive: see pack)
#   bash bench/diagnose_device.sh traces    # there: as run, but of the plain runs only
#     sync_every_step's (about 4-5 minutes: build, 3 plain runs, 10 traces)
#   bash bench/diagnose_device.sh extra     # there (carry .carry), about 4-5 minutes:
#     1. traces of the fixed twins (diagnose must not name the planted flaw there)
#        -> diagnose_traces_fixed-N.tar.gz;
#     2. the trace hard cases: DataLoader workers forked after (and before) CUDA init and a
#        spawned CUDA child; a program that starts its own torch.profiler; CUDA-graph replays;
#        gpuscope-torch (built here) with graphs off and on -> trace_cases-N.tar.gz,
#        trace_cases.jsonl
#   bash bench/diagnose_device.sh live      # there, with a prebuilt DIAG_BIN (gpuscope, with
#     libgpuscope_inject.so beside it; DIAG_TORCH_BIN: gpuscope-torch, default beside it), no
#     build (without DIAG_BIN: built first, carry .carry), about 5-7 minutes:
#     1. the healthy control plainly, then under `gpuscope diagnose -- CMD`: the overhead (the
#        program's own step time, and the trace window's steps, against the plain run);
#     2. `gpuscope diagnose -- CMD` live on two flawed examples (no_tensor_cores, input_bound):
#        the first finding and its expected gain;
#     3. no_tensor_cores under `gpuscope trace` with the window closing on the GPU's completion
#        and, for comparison, with GPUSCOPE_TRACE_GPU_WAIT_S=0 (the old close: kernels lost);
#     4. the trace hard cases (as `cases`) -> diagnose_live.jsonl, diagnose_live-N.tar.gz,
#        trace_cases.jsonl, trace_cases-N.tar.gz
#   bash bench/diagnose_device.sh live-all  # there, with a prebuilt DIAG_BIN, about 7-8 minutes:
#     every example (and the healthy control) plainly, flawed then fixed (the measured gain), and
#     `gpuscope diagnose -- CMD` on the flawed program (the first finding, its expected gain):
#     diagnose_results.jsonl, diagnose_live.jsonl, diagnose_table.txt (flaw, first finding,
#     expected gain, measured gain, whether the measured gain is within the range or 2x of it)
#
# Environment: DIAG_MAX_SECONDS (timed seconds per plain run, default 3), DIAG_ONLY="a b" (only
# these examples). For a dry run of this script without a GPU: DIAG_BIN=a stand-in for gpuscope
# (no build), DIAG_PY_ARGS="--device cpu --batch 2 ..." appended to every example's arguments,
# e.g. PYTHONPATH=.deps/torch DIAG_BIN=bench/diagnose_examples/fake_gpuscope_trace.sh
# DIAG_ONLY=healthy DIAG_PY_ARGS="--device cpu --batch 2 --warmup 1" OUT=/tmp/dry
# bash bench/diagnose_device.sh traces. Reads the GPU only: never changes a power limit, clocks, MIG, persistence or
# compute mode. The "shared GPU" example starts a second process (gpu_hog.py, bf16 matmuls) on
# the same GPU for about 30 s, and stops it.
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
out="${OUT:-$root/out}"
mkdir -p "$out"
usr="$root/.carry/usr"
build="$root/build/device-diag"
bin="${DIAG_BIN:-$build/tools/gpuscope/gpuscope}"
read -r -a py_args <<<"${DIAG_PY_ARGS:-}"
[ -d "$usr" ] && export LD_LIBRARY_PATH="$usr/lib/x86_64-linux-gnu:$usr/lib:${LD_LIBRARY_PATH:-}"
ex=bench/diagnose_examples
cases=bench/trace_cases
export NCCL_NVLS_ENABLE=0
max_s="${DIAG_MAX_SECONDS:-3}"
results="$out/diagnose_results.jsonl"

prepare() {
  bash bench/monitor_device.sh prepare && bash bench/torch_jpeg_carry.sh &&
    cp .deps/python/plotly/package_data/plotly.min.js .carry/
}

gpu_facts() {
  command -v nvidia-smi >/dev/null || return 0
  {
    date -u +"%Y-%m-%dT%H:%M:%SZ"
    nvidia-smi --query-gpu=name,driver_version,power.limit,memory.total,compute_mode --format=csv
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
    echo "cpus $(nproc)"
    df -h /dev/shm | tail -1
    nvidia-smi --query-compute-apps=pid,process_name,used_memory --format=csv
  } 2>&1 | tee "$out/diagnose_gpu.txt"
}

# build [TARGETS...]: gpuscope and the injection library by default.
build() {
  [ -n "${DIAG_BIN:-}" ] && { echo "DIAG_BIN=$DIAG_BIN: no build"; return 0; }
  local targets=("$@") start
  ((${#targets[@]})) || targets=(gpuscope_cli gpuscope_inject)
  start=$(date +%s)
  local torch=OFF
  [[ " ${targets[*]} " == *" gpuscope_torch "* ]] && torch=ON
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DGPUSCOPE_BUILD_TESTS=OFF -DGPUSCOPE_BUILD_TORCH="$torch" -DCMAKE_PREFIX_PATH="$usr" \
    -DSQLite3_INCLUDE_DIR="$usr/include" -DSQLite3_LIBRARY="$usr/lib/x86_64-linux-gnu/libsqlite3.a" \
    -DGPUSCOPE_PLOTLY_JS="$root/.carry/plotly.min.js" >>"$out/diagnose_build.log" 2>&1 &&
    cmake --build "$build" --target "${targets[@]}" -j "$(nproc)" >>"$out/diagnose_build.log" 2>&1 ||
    { grep -E "error|Error" "$out/diagnose_build.log" | head -40; return 1; }
  echo "built ${targets[*]} in $(($(date +%s) - start)) s"
}

# last_json FILE: the last line of FILE that is a JSON object ("{}" if none).
last_json() {
  python3 - "$1" <<'PY'
import json, sys
try:
    lines = open(sys.argv[1], errors="replace").read().splitlines()
except OSError:
    lines = []
for line in reversed(lines):
    if line.startswith("{"):
        try:
            print(json.dumps(json.loads(line))); break
        except ValueError:
            pass
else:
    print("{}")
PY
}

# plain NAME VARIANT ARGS...: python3 $ex/NAME.py ARGS, its JSON line kept as $out/plain/NAME-VARIANT.json
plain() {
  local name="$1" variant="$2"
  shift 2
  mkdir -p "$out/plain"
  local start
  start=$(date +%s)
  timeout 120 python3 "$ex/$name.py" --max-seconds "$max_s" "$@" "${py_args[@]}" \
    >"$out/plain/$name-$variant.out" 2>"$out/plain/$name-$variant.err"
  local rc=$?
  last_json "$out/plain/$name-$variant.out" >"$out/plain/$name-$variant.json"
  echo "$name $variant: exit $rc in $(($(date +%s) - start)) s: $(cut -c1-160 "$out/plain/$name-$variant.json")"
  ((rc == 0)) || tail -5 "$out/plain/$name-$variant.err"
}

# ratio NAME FLAWED FIXED "COMMANDS": one line of diagnose_results.jsonl.
ratio() {
  python3 - "$out/plain" "$1" "$2" "$3" "$4" "$results" <<'PY'
import json, sys
plain, name, flawed, fixed, commands, results = sys.argv[1:]
a = json.load(open(f"{plain}/{name}-{flawed}.json"))
b = json.load(open(f"{plain}/{name}-{fixed}.json"))
row = {"example": name, "flawed": a, "fixed": b, "commands": commands}
if a and b:
    row["speedup_step_time"] = a["step_time_s_median"] / b["step_time_s_median"]
    row["speedup_samples_per_s"] = b["samples_per_s"] / a["samples_per_s"]
print("RATIO %-18s fixed/flawed: step time %.2fx, samples/s %.2fx" % (
    name + ("" if fixed == "fixed" else "/" + fixed), row.get("speedup_step_time", 0),
    row.get("speedup_samples_per_s", 0)))
with open(results, "a") as f:
    f.write(json.dumps(row) + "\n")
PY
}

# run_into SUBCOMMAND FOLDER SECONDS "TRACE OPTIONS" NAME ARGS...: `gpuscope SUBCOMMAND TRACE
# OPTIONS -o FOLDER -- python3 $ex/NAME.py ARGS` (at most SECONDS), the program's output
# (program.stdout), gpuscope's (SUBCOMMAND.stderr) and the command (command.txt) kept in FOLDER;
# returns gpuscope's exit code.
run_into() {
  local sub="$1" d="$2" limit="$3" topts="$4" name="$5"
  shift 5
  rm -rf "$d"
  mkdir -p "$(dirname "$d")"
  # shellcheck disable=SC2086 # topts is a list of options
  timeout "$limit" "$bin" "$sub" $topts -o "$d" -- python3 "$ex/$name.py" "$@" "${py_args[@]}" \
    >"$d.out" 2>"$d.err"
  local rc=$?
  mkdir -p "$d"
  mv "$d.out" "$d/program.stdout"
  mv "$d.err" "$d/$sub.stderr"
  echo "${GPUSCOPE_TRACE_GPU_WAIT_S:+GPUSCOPE_TRACE_GPU_WAIT_S=$GPUSCOPE_TRACE_GPU_WAIT_S }gpuscope $sub $topts -o $(basename "$d") -- python3 $ex/$name.py $* ${py_args[*]}" >"$d/command.txt"
  return $rc
}

# traced DIR NAME "TRACE OPTIONS" ARGS...: `gpuscope trace` on python3 $ex/NAME.py ARGS into
# $out/DIR/NAME (run_into); one check line.
traced() {
  local dir="$1" name="$2" topts="$3"
  shift 3
  local d="$out/$dir/$name" start rc
  start=$(date +%s)
  run_into trace "$d" 180 "$topts" "$name" "$@"
  rc=$?
  echo "trace $dir/$name: exit $rc in $(($(date +%s) - start)) s, $(du -sh "$d" | cut -f1)"
  ((rc == 0)) || tail -15 "$d/trace.stderr"
  step_check "$d" "$name" "$dir" | tee -a "$out/trace_step_check.jsonl"
}

# step_check FOLDER NAME GROUP: the trace's step medians beside the program's own (one JSON line).
step_check() {
  python3 - "$@" <<'PY'
import json, sys
d, name, group = sys.argv[1:]
own = {}
for line in reversed(open(f"{d}/program.stdout", errors="replace").read().splitlines()):
    if line.startswith("{"):
        try:
            own = json.loads(line); break
        except ValueError:
            pass
try:
    s = json.load(open(f"{d}/summary.json"))
except (OSError, ValueError) as e:
    print(json.dumps({"group": group, "example": name, "error": f"no summary.json: {e}"})); sys.exit()
st, g = s.get("steps", {}), s.get("gpu", {})
row = {"group": group, "example": name,
       "own_median_ms": own.get("step_time_s_median", 0) * 1e3,
       "trace_marked_median_ms": (st.get("marked_median_s") or 0) * 1e3,
       "trace_window_median_ms": (st.get("median_s") or 0) * 1e3,
       "steps_traced": st.get("traced"), "step_source": st.get("source"),
       "busy_share": g.get("busy_share"), "kernels_per_step": g.get("kernels_per_step"),
       "syncs_per_step": s.get("syncs", {}).get("per_step"),
       "data_wait_share": s.get("data_wait", {}).get("share"),
       "notes": s.get("notes", [])[:6]}
if row["own_median_ms"] and row["trace_marked_median_ms"]:
    row["marked_vs_own"] = row["trace_marked_median_ms"] / row["own_median_ms"] - 1
print("CHECK " + json.dumps(row))
PY
}

want() { [ -z "${DIAG_ONLY:-}" ] || [[ " $DIAG_ONLY " == *" $1 "* ]]; }

# pack GROUP NAME MAX_FILES: the folders under $out/GROUP into at most MAX_FILES archives
# NAME-1.tar.gz ... of at most 15 MB each (a file over 16 MiB does not come back from the
# device): trace.json is left out (`gpuscope trace --analyse DIR` makes it again from the
# records); a folder that alone would pass the limit keeps all but its record files (said in
# its DROPPED.txt). Removes $out/GROUP.
pack() {
  python3 - "$out" "$1" "$2" "$3" <<'PY'
import io, os, shutil, sys, tarfile
out, group, name, max_files = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
limit = 15 * 1000 * 1000
base = os.path.join(out, group)
def members(folder):
    for root, _, files in os.walk(folder):
        for f in sorted(files):
            if f != "trace.json":
                yield os.path.join(root, f)
def packed_size(paths):
    buf = io.BytesIO()
    with tarfile.open(fileobj=buf, mode="w:gz") as tar:
        for p in paths:
            tar.add(p, arcname=os.path.relpath(p, out))
    return buf.tell()
entries = []
for entry in sorted(os.listdir(base)):
    path = os.path.join(base, entry)
    paths = list(members(path)) if os.path.isdir(path) else [path]
    size = packed_size(paths)
    if size > limit:
        kept = [p for p in paths if not os.path.basename(p).startswith("gpuscope-trace-")]
        note = os.path.join(path, "DROPPED.txt")
        with open(note, "w") as f:
            f.write(f"record files left out: {size} bytes packed > {limit}\n")
        paths, size = kept + [note], packed_size(kept + [note])
    entries.append((entry, paths, size))
bins = []
for entry, paths, size in sorted(entries, key=lambda e: -e[2]):
    for b in bins:
        if b[0] + size <= limit:
            b[0] += size; b[1].extend(paths); b[2].append(entry); break
    else:
        bins.append([size, list(paths), [entry]])
if len(bins) > max_files:
    print(f"pack {group}: {len(bins)} archives needed, {max_files} allowed: the last left out")
    bins = bins[:max_files]
for i, (size, paths, names) in enumerate(bins, 1):
    target = os.path.join(out, f"{name}-{i}.tar.gz")
    with tarfile.open(target, "w:gz") as tar:
        for p in paths:
            tar.add(p, arcname=os.path.relpath(p, out))
    print(f"{os.path.basename(target)}: {os.path.getsize(target) / 1e6:.1f} MB: {' '.join(sorted(names))}")
shutil.rmtree(base)
PY
}

hog_start() {  # SECONDS: gpu_hog.py in the background (outside any trace), ready when it returns
  rm -f /tmp/diag-hog-ready
  python3 "$ex/gpu_hog.py" --seconds "$1" --ready-file /tmp/diag-hog-ready >"$out/plain/gpu_hog.out" 2>&1 &
  hog_pid=$!
  for _ in $(seq 300); do [ -f /tmp/diag-hog-ready ] && break; sleep 0.1; done
  echo "gpu_hog pid $hog_pid running: $(nvidia-smi --query-compute-apps=pid,used_memory --format=csv,noheader | tr '\n' ' ')"
}

hog_stop() {
  kill -TERM "$hog_pid" 2>/dev/null
  wait "$hog_pid"
  echo "gpu_hog: $(tail -1 "$out/plain/gpu_hog.out")"
}

# The trace window of each example: skip the warm-up (the shim counts its steps too) and two
# more, then record 8 steps (5 for the examples with thousands of kernels a step); the trace
# run has no time limit, so the window always closes on its steps.
trace_opts() {
  case "$1" in
    launch_bound) echo "--skip-steps 25 --steps 5 --max-events 200000" ;;
    unfused_optimizer) echo "--skip-steps 8 --steps 5 --max-events 200000" ;;
    input_bound) echo "--skip-steps 6 --steps 8 --max-events 200000" ;;
    small_batch | cudnn_defaults) echo "--skip-steps 13 --steps 8 --max-events 200000" ;;
    *) echo "--skip-steps 8 --steps 8 --max-events 200000" ;;
  esac
}
trace_steps() {  # enough timed steps after the window
  case "$1" in
    launch_bound) echo 30 ;;
    *) echo 20 ;;
  esac
}

# examples (flawed and fixed) in the order run; shared_gpu is handled apart (the hog).
EXAMPLES="input_bound pageable_copies sync_every_step launch_bound no_tensor_cores small_batch cudnn_defaults unfused_optimizer"

# `traces` mode: the gains were measured (run, 2026-11-25 17:15 UTC); only sync_every_step's
# are measured again (its fixed twin changed), then every trace.
plain_wanted() { [ -z "${traces_only:-}" ] || [ "$1" = sync_every_step ]; }

run_main() {
  gpu_facts
  build || exit 1
  : >"$results"
  : >"$out/trace_step_check.jsonl"
  local t0 name
  t0=$(date +%s)
  echo "== plain runs: flawed, then fixed (timed loop at most ${max_s} s each)"
  if want healthy && plain_wanted healthy; then
    plain healthy control
  fi
  for name in $EXAMPLES; do
    { want "$name" && plain_wanted "$name"; } || continue
    plain "$name" flawed
    plain "$name" fixed --fixed
    ratio "$name" flawed fixed "python3 $ex/$name.py ; python3 $ex/$name.py --fixed"
  done
  if want sync_every_step; then
    plain sync_every_step fixed-pinned --fixed --fixed-copy pinned
    ratio sync_every_step flawed fixed-pinned "python3 $ex/sync_every_step.py ; python3 $ex/sync_every_step.py --fixed --fixed-copy pinned"
  fi
  if want no_tensor_cores && plain_wanted no_tensor_cores; then
    plain no_tensor_cores fixed-tf32 --fixed --fix tf32
    ratio no_tensor_cores flawed fixed-tf32 "python3 $ex/no_tensor_cores.py ; python3 $ex/no_tensor_cores.py --fixed --fix tf32"
  fi
  if want shared_gpu; then
    hog_start 60
    plain_wanted shared_gpu && plain shared_gpu flawed
    traced traces shared_gpu "$(trace_opts shared_gpu)" --steps "$(trace_steps shared_gpu)" --max-seconds 0
    hog_stop
    if plain_wanted shared_gpu; then
      plain shared_gpu fixed --fixed
      ratio shared_gpu flawed fixed "python3 $ex/gpu_hog.py --seconds 60 & python3 $ex/shared_gpu.py ; (hog stopped) python3 $ex/shared_gpu.py --fixed"
    fi
  fi
  echo "plain runs done after $(($(date +%s) - t0)) s"
  echo "== traces of the flawed programs and the control"
  want healthy && traced traces healthy "$(trace_opts healthy)" --steps 20 --max-seconds 0
  for name in $EXAMPLES; do
    want "$name" || continue
    traced traces "$name" "$(trace_opts "$name")" --steps "$(trace_steps "$name")" --max-seconds 0
  done
  echo "traces done after $(($(date +%s) - t0)) s"
  mv "$out/plain" "$out/traces/plain"
  pack traces diagnose_traces 4
  ls -la "$out"
}

run_extra() {
  gpu_facts
  build gpuscope_cli gpuscope_inject gpuscope_torch || build || exit 1
  : >"$out/trace_step_check.jsonl"
  local t0 name
  t0=$(date +%s)
  echo "== traces of the fixed twins"
  want healthy && traced fixed healthy "$(trace_opts healthy)" --steps 20 --max-seconds 0
  for name in $EXAMPLES; do
    want "$name" || continue
    traced fixed "$name" "$(trace_opts "$name")" --fixed --steps "$(trace_steps "$name")" --max-seconds 0
  done
  want shared_gpu && traced fixed shared_gpu "$(trace_opts shared_gpu)" --fixed --steps 20 --max-seconds 0
  echo "fixed traces done after $(($(date +%s) - t0)) s"
  pack fixed diagnose_traces_fixed 2
  trace_cases
  echo "all done after $(($(date +%s) - t0)) s"
  ls -la "$out"
}

# case NAME "TRACE OPTIONS" CMD...: `gpuscope trace` on CMD into $out/cases/NAME; what came out.
case_run() {
  local name="$1" topts="$2"
  shift 2
  local d="$out/cases/$name" start
  start=$(date +%s)
  mkdir -p "$out/cases"
  rm -rf "$d"
  # shellcheck disable=SC2086
  timeout 180 "$bin" trace $topts -o "$d" -- "$@" >"$out/cases/$name.out" 2>"$out/cases/$name.err"
  local rc=$?
  mkdir -p "$d"
  mv "$out/cases/$name.out" "$d/program.stdout"
  mv "$out/cases/$name.err" "$d/trace.stderr"
  echo "gpuscope trace $topts -o $name -- $*" >"$d/command.txt"
  echo "case $name: exit $rc in $(($(date +%s) - start)) s, $(du -sh "$d" | cut -f1)"
  grep -vE "^step [0-9]+ loss" "$d/trace.stderr" | tail -30
  python3 - "$d" "$name" "$rc" "$topts $*" <<'PY' | tee -a "$out/trace_cases.jsonl"
import glob, json, os, sys
d, name, rc, cmd = sys.argv[1:]
row = {"case": name, "exit": int(rc), "command": cmd, "files": sorted(os.listdir(d))}
headers = []
for path in sorted(glob.glob(f"{d}/gpuscope-trace-*.jsonl")):
    info = {"file": os.path.basename(path), "lines": 0, "kinds": {}}
    with open(path, errors="replace") as f:
        for line in f:
            info["lines"] += 1
            try:
                rec = json.loads(line)
            except ValueError:
                info["bad_line"] = True
                continue
            t = rec.get("t")
            info["kinds"][t] = info["kinds"].get(t, 0) + 1
            if t == "header":
                info.update(pid=rec.get("pid"), ppid=rec.get("ppid"), started_by=rec.get("started_by"),
                            cmdline=" ".join(rec.get("cmdline", []))[:120])
            elif t == "cupti":
                info["cupti"] = rec.get("status"), rec.get("reason")
            elif t == "kernel" and rec.get("graph") is not None:
                info["graph_kernels"] = info.get("graph_kernels", 0) + 1
            elif t in ("end", "window_begin", "window_end"):
                info[t] = {k: v for k, v in rec.items() if k != "t"}
    headers.append(info)
row["processes"] = headers
try:
    s = json.load(open(f"{d}/summary.json"))
    st = s.get("steps", {})
    row["summary"] = {"steps": {k: st.get(k) for k in ("source", "traced", "median_s", "marked_median_s")},
                      "busy_share": s.get("gpu", {}).get("busy_share"),
                      "notes": s.get("notes"), "cupti": s.get("cupti"),
                      "processes": [{k: p.get(k) for k in ("pid", "ppid", "cupti", "role", "started_by", "kernels")}
                                    for p in s.get("processes", [])][:8]}
except (OSError, ValueError) as e:
    row["summary"] = f"none: {e}"
own = {}
for line in reversed(open(f"{d}/program.stdout", errors="replace").read().splitlines()):
    if line.startswith("{"):
        try:
            rec = json.loads(line)
        except ValueError:
            continue
        if rec.get("type") == "result":  # gpuscope-torch's protocol
            own = {"step_time_s_median": rec["step_seconds"]["median"],
                   "samples_per_s": rec["samples_per_second"], "steps": rec["step_seconds"]["count"]}
            break
        if "type" not in rec:
            own = rec
            break
row["own"] = {k: own.get(k) for k in ("step_time_s_median", "samples_per_s", "steps", "profiler",
                                      "spawned_child_exit")}
if own.get("step_time_s_median") and isinstance(row["summary"], dict):
    trace_median = row["summary"]["steps"].get("marked_median_s") or row["summary"]["steps"].get("median_s")
    if trace_median:
        row["trace_vs_own"] = trace_median / own["step_time_s_median"] - 1
print("CASE " + json.dumps(row))
PY
}

trace_cases() {
  : >"$out/trace_cases.jsonl"
  echo "== trace hard cases"
  case_run fork_after_cuda "--skip-steps 5 --steps 5" python3 "$cases/fork_workers.py" --fork after
  case_run fork_before_cuda "--skip-steps 5 --steps 5" python3 "$cases/fork_workers.py" --fork before
  case_run own_profiler "--skip-steps 3 --steps 10" python3 "$cases/own_profiler.py"
  case_run cuda_graphs "--skip-steps 25 --steps 5" python3 "$ex/launch_bound.py" --fixed --steps 40 --max-seconds 0
  local torch_bin="${DIAG_TORCH_BIN:-$build/workloads/torch/gpuscope-torch}"
  [ -z "${DIAG_TORCH_BIN:-}" ] && [ -n "${DIAG_BIN:-}" ] && torch_bin="$(dirname "$DIAG_BIN")/gpuscope-torch"
  if [ -x "$torch_bin" ]; then
    # gpuscope-torch marks each step's end (gpuscope.step) and names every step's range
    # "gpuscope-torch step": a step window, steps from the marks; once by the range.
    case_run gpuscope_torch_eager "--skip-steps 30 --steps 10" "$torch_bin" --model resnet50 \
      --task train --mode amp_bf16 --batch 128 --graphs off --warmup 20 --windows 4 --steps 20
    case_run gpuscope_torch_graphs "--skip-steps 30 --steps 10" "$torch_bin" --model resnet50 \
      --task train --mode amp_bf16 --batch 128 --graphs on --warmup 20 --windows 4 --steps 20
    "$bin" trace --analyse "$out/cases/gpuscope_torch_graphs" --json \
      --step-range "gpuscope-torch step" 2>&1 | python3 -c 'import json, sys
s = json.load(sys.stdin)
print("CASE gpuscope_torch_graphs by --step-range: " + json.dumps(s.get("steps")))' |
      tee -a "$out/trace_cases.jsonl"
  else
    echo "gpuscope-torch was not built: its cases skipped (see diagnose_build.log)"
  fi
  pack cases trace_cases 2
}

# diagnosed NAME "TRACE OPTIONS" ARGS...: `gpuscope diagnose -- python3 $ex/NAME.py ARGS` into
# $out/live/NAME (the program's stdout kept, the report on stderr), then its JSON; one LIVE line.
diagnosed() {
  local name="$1" topts="$2"
  shift 2
  local d="$out/live/$name" start rc
  start=$(date +%s)
  run_into diagnose "$d" 240 "$topts" "$name" "$@"
  rc=$?
  echo "diagnose $name: exit $rc in $(($(date +%s) - start)) s, $(du -sh "$d" | cut -f1)"
  grep -vE "^step [0-9]+ loss" "$d/diagnose.stderr" | head -40
  "$bin" diagnose "$d" --json >"$d/diagnose.json" 2>>"$d/diagnose.stderr"
  live_row "$d" "$name" "$rc" "diagnose" | tee -a "$out/diagnose_live.jsonl"
}

# traced_live NAME "TRACE OPTIONS" ARGS...: `gpuscope trace` into $out/live/NAME-trace (with
# the environment the caller exported); one LIVE line.
traced_live() {
  local name="$1" label="$2" topts="$3"
  shift 3
  local d="$out/live/$label" start rc
  start=$(date +%s)
  run_into trace "$d" 240 "$topts" "$name" "$@"
  rc=$?
  echo "trace $label: exit $rc in $(($(date +%s) - start)) s"
  live_row "$d" "$label" "$rc" "trace" | tee -a "$out/diagnose_live.jsonl"
}

# live_row FOLDER NAME EXIT HOW: what a live run gave, beside the plain run of the same program.
live_row() {
  python3 - "$@" "$out/plain" <<'PY'
import glob, json, os, sys
sys.path.insert(0, "bench/diagnose_examples")
from fixtures_from_run import own_json as last_json  # a program's last JSON line
d, name, rc, how, plain_dir = sys.argv[1:]
row = {"live": name, "how": how, "exit": int(rc)}
own = last_json(f"{d}/program.stdout")
row["own_median_ms"] = own.get("step_time_s_median", 0) * 1e3
base = name.split("-")[0]
plain = last_json(f"{plain_dir}/{base}-control.json") or last_json(f"{plain_dir}/{base}-flawed.json")
if plain.get("step_time_s_median"):
    row["plain_median_ms"] = plain["step_time_s_median"] * 1e3
    if row["own_median_ms"]:
        row["own_vs_plain"] = row["own_median_ms"] / row["plain_median_ms"] - 1
try:
    s = json.load(open(f"{d}/summary.json"))
    st, g = s.get("steps", {}), s.get("gpu", {})
    row["window_median_ms"] = (st.get("median_s") or 0) * 1e3
    if row["window_median_ms"] and row.get("plain_median_ms"):
        row["window_vs_plain"] = row["window_median_ms"] / row["plain_median_ms"] - 1
    row.update(steps_traced=st.get("traced"), step_source=st.get("source"),
               kernels=g.get("kernels"), busy_share=g.get("busy_share"),
               notes=s.get("notes", [])[:4])
except (OSError, ValueError) as e:
    row["summary"] = f"none: {e}"
records = {"kernel": 0}
for path in glob.glob(f"{d}/gpuscope-trace-*.jsonl"):
    for line in open(path, errors="replace"):
        if '"t":"kernel"' in line:
            records["kernel"] += 1
        elif '"t":"window_gpu_end"' in line or '"t":"window_end"' in line or '"t":"cupti_teardown"' in line:
            try:
                rec = json.loads(line)
            except ValueError:
                continue
            records.setdefault(rec.pop("t"), []).append(rec)
row["records"] = records
try:
    dj = json.load(open(f"{d}/diagnose.json"))
    fs = dj.get("findings", [])
    row["findings"] = [{k: f.get(k) for k in ("id", "severity", "expected_speedup", "confidence")}
                       for f in fs[:4]]
except (OSError, ValueError):
    pass
print("LIVE " + json.dumps(row))
PY
}

# The table of live-all: per example its first finding, expected and measured gains.
live_table() {
  python3 - "$results" "$out/diagnose_live.jsonl" <<'PY' | tee "$out/diagnose_table.txt"
import json, sys
ratios = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    if "speedup_samples_per_s" in r and r["example"] not in ratios:
        ratios[r["example"]] = r["speedup_samples_per_s"]
planted = {"healthy": "healthy", "shared_gpu": "shared_gpu"}
print(f'{"example":18} {"first finding":18} {"severity":9} {"expected":>13} {"measured":>9}  verdict')
for line in open(sys.argv[2]):
    row = json.loads(line[5:] if line.startswith("LIVE ") else line)
    name = row["live"]
    fs = row.get("findings") or [{}]
    first = fs[0]
    exp = first.get("expected_speedup") or {}
    lo, hi = exp.get("low"), exp.get("high")
    got = ratios.get(name)
    want = planted.get(name, name)
    named = first.get("id") == want
    if row.get("exit") != 0 or "findings" not in row:
        verdict = "DIAGNOSE FAILED (exit %s)" % row.get("exit")
    elif name == "healthy":
        major = [f["id"] for f in row["findings"] if f.get("severity") != "info"]
        verdict = "no major finding" if not major else "MAJOR FINDING ON THE CONTROL: " + ",".join(major)
    elif not named:
        verdict = "MISSED (first: %s)" % first.get("id")
    elif got and lo and hi:
        inside = lo <= got <= hi
        near = lo / 2 <= got <= hi * 2
        verdict = "in range" if inside else ("within 2x" if near else "GAIN OFF BY MORE THAN 2x")
    else:
        verdict = "named; no gain to compare"
    e = f"{lo:.2f}-{hi:.2f}x" if lo and hi else "-"
    g = f"{got:.2f}x" if got else "-"
    print(f'{name:18} {str(first.get("id")):18} {str(first.get("severity")):9} {e:>13} {g:>9}  {verdict}')
PY
}

run_live_all() {
  gpu_facts
  [ -x "$bin" ] || { echo "live-all needs DIAG_BIN: a built gpuscope"; exit 1; }
  : >"$out/diagnose_live.jsonl"
  : >"$results"
  local t0 name
  t0=$(date +%s)
  want healthy && {
    plain healthy control --steps 40 --max-seconds 0
    diagnosed healthy "--skip-steps 8 --steps 8" --steps 40 --max-seconds 0
  }
  for name in $EXAMPLES; do
    want "$name" || continue
    plain "$name" flawed
    plain "$name" fixed --fixed
    ratio "$name" flawed fixed "python3 $ex/$name.py ; python3 $ex/$name.py --fixed"
    diagnosed "$name" "$(trace_opts "$name")" --steps "$(trace_steps "$name")" --max-seconds 0
    echo "-- $name done after $(($(date +%s) - t0)) s"
  done
  if want shared_gpu; then
    hog_start 90
    plain shared_gpu flawed
    diagnosed shared_gpu "$(trace_opts shared_gpu)" --steps "$(trace_steps shared_gpu)" --max-seconds 0
    hog_stop
    plain shared_gpu fixed --fixed
    ratio shared_gpu flawed fixed "python3 $ex/gpu_hog.py --seconds 90 & python3 $ex/shared_gpu.py ; (hog stopped) python3 $ex/shared_gpu.py --fixed"
  fi
  echo "live-all done after $(($(date +%s) - t0)) s"
  live_table
  mv "$out/plain" "$out/live/plain"
  pack live diagnose_live 3
}

run_live() {
  gpu_facts
  # Without DIAG_BIN: built here first (gpuscope-torch too when LibTorch is found), ~2-3 min.
  [ -n "${DIAG_BIN:-}" ] || build gpuscope_cli gpuscope_inject gpuscope_torch || build || exit 1
  [ -x "$bin" ] || { echo "live needs DIAG_BIN: a built gpuscope ($bin is not there)"; exit 1; }
  echo "gpuscope: $bin ($("$bin" --version 2>&1 | head -1)); inject: $(ls "$(dirname "$bin")"/libgpuscope_inject.so 2>&1)"
  : >"$out/diagnose_live.jsonl"
  local t0
  t0=$(date +%s)
  echo "== the healthy control: plain, then under diagnose (the overhead)"
  plain healthy control --steps 40 --max-seconds 0
  diagnosed healthy "--skip-steps 8 --steps 8" --steps 40 --max-seconds 0
  echo "== diagnose -- CMD on flawed examples"
  plain no_tensor_cores flawed --steps 20 --max-seconds 0
  diagnosed no_tensor_cores "$(trace_opts no_tensor_cores)" --steps 20 --max-seconds 0
  plain input_bound flawed --steps 20 --max-seconds 0
  diagnosed input_bound "$(trace_opts input_bound)" --steps 20 --max-seconds 0
  echo "== no_tensor_cores: the window closes on the GPU's completion (and, before, did not)"
  traced_live no_tensor_cores no_tensor_cores-gpu_wait "$(trace_opts no_tensor_cores)" --steps 20 --max-seconds 0
  GPUSCOPE_TRACE_GPU_WAIT_S=0 traced_live no_tensor_cores no_tensor_cores-no_wait "$(trace_opts no_tensor_cores)" --steps 20 --max-seconds 0
  echo "live runs done after $(($(date +%s) - t0)) s"
  mv "$out/plain" "$out/live/plain"
  pack live diagnose_live 2
  trace_cases
  echo "all done after $(($(date +%s) - t0)) s"
  ls -la "$out"
}

case "${1:-run}" in
  prepare) prepare ;;
  live) run_live ;;
  live-all) run_live_all ;;
  run) run_main ;;
  traces) traces_only=1 run_main ;;
  extra) run_extra ;;
  cases)
    gpu_facts
    build gpuscope_cli gpuscope_inject gpuscope_torch || build || exit 1
    trace_cases
    ;;
  pack) pack "$2" "$3" "$4" ;;  # pack GROUP NAME MAX_FILES (as the other modes do at their end)
  *)
    echo "usage: $0 prepare|run|live|extra|cases|pack GROUP NAME MAX_FILES" >&2
    exit 2
    ;;
esac
