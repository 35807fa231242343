#!/usr/bin/env bash
# Data parallel on a machine with several GPUs (the device tool's nvidia-h100-x2), in two calls:
#
#   bash bench/multi_device.sh prepare        # here: .carry/usr (headers and static libraries
#       # of gpuscope's Debian dependencies, as bench/monitor_device.sh prepares them)
#   bash bench/multi_device.sh build          # there (carry .carry): builds gpuscope,
#       # gpuscope-burn-worker and gpuscope-torch (against the machine's torch; nccl.h from the
#       # nvidia-nccl wheel), a 2-GPU smoke run (our launcher and torchrun --no-python, watched
#       # by `gpuscope monitor`), all-reduce bus bandwidth through torch.distributed and through
#       # gpuscope-burn-worker --interconnect (NCCL from the same wheel) -> $OUT/bin.tar.gz, logs
#   bash bench/multi_device.sh scaling BIN_TGZ  # there: the scaling tables of ViT-B/16,
#       # ResNet-50 and GPT-2 (AMP bf16), ours (1 GPU with and without CUDA graphs, N GPUs) and
#       # torchrun + DDP (timm / torchvision / plain PyTorch GPT-2, AdamW fused), 1 and N GPUs
#   bash bench/multi_device.sh all            # both in one call (if the build is quick)
#   bash bench/multi_device.sh build-only     # there: only the build -> $OUT/bin.tar.gz
#   bash bench/multi_device.sh pair BIN_TGZ   # there: one GPU alone, every GPU at once with no
#       # communication (one process each), and data parallel, twice (what sharing the host costs)
#   bash bench/multi_device.sh clocks BIN_TGZ # there: one GPU alone and data parallel under
#       # gpuscope monitor: SM clock, power, power-cap throttle while busy, twice
#   bash bench/multi_device.sh ab [BIN_TGZ]   # there, no carry: issue 18's A/B of the
#       # data-parallel step, gpuscope-torch only (built standalone from the work tree, or the
#       # one in BIN_TGZ): per model 1 GPU eager and with graphs, then N GPUs with the averages copied back (--bucket-views off, the
#       # step before), with gradients as bucket views (the default) and with those plus CUDA
#       # graphs (--graphs on) -> multi_ab_*.jsonl, multi_ab.out (the table)
#   bash bench/multi_device.sh table [BIN_TGZ] # there, no carry: the scaling table at each GPU
#       # count of MULTI_GPU_COUNTS (default all visible), ours (CUDA graphs) and torchrun + DDP,
#       # fp32 all-reduces, 1-GPU baselines the median of MULTI_TABLE_ONE_GPU_RUNS (default 3)
#       # runs -> multi_table*_*.jsonl, multi_table.out
#   bash bench/multi_device.sh ceiling       # there (carry .carry): gpuscope, its injection
#       # library and gpuscope-torch in one tree, then `gpuscope bench --gpus 1,N
#       # --no-sync-ceiling` per model of MULTI_MODELS (default "vit_b16:160 gpt2:16"): the scaling
#       # table with its no-sync twins -> multi_ceiling_*.json, multi_ceiling.out; then
#       # bench/trace_live_device.sh's sets MULTI_LIVE (e.g. "ddp") with the same gpuscope
#   bash bench/multi_device.sh checks        # there (carry .carry): the same tree, then what
#       # earlier sessions left unrun (see checks() below)
#   bash bench/multi_device.sh ce [BIN_TGZ]  # there, no carry: the copy-engine all-reduce
#       # against NCCL's: the same guard losses, then ab's rows (see ce() below)
#   bash bench/multi_device.sh fault [BIN_TGZ] # there, no carry: a rank that dies under NCCL
#       # (GPUSCOPE_TORCH_FAULT kills rank 1 at step 15; eager, with CUDA graphs, and with the
#       # copy-engine all-reduce), one that hangs (stopped at step 15; copy engines and NCCL,
#       # --dist-timeout 20) and more
#       # ranks than GPUs: how long the job takes to end and what it reports -> multi_fault.out
#   bash bench/multi_device.sh comm [BIN_TGZ] # there, no carry: gradient all-reduces in fp32
#       # and in bf16, like for like (gpuscope-torch built as for ab, or from BIN_TGZ): per model
#       # ours on 1 GPU, on N GPUs with --grad-comm fp32 and bf16; torchrun + DDP on 1 GPU, on N
#       # with its default all-reduce and with bf16_compress_hook (--comm-hook bf16); CUDA graphs
#       # as by default -> multi_comm_*.jsonl, multi_comm.out (multi_table.py, a row per dtype)
#
# MULTI_MODELS="vit_b16:160 gpt2:16" picks the scaling table's models and per-GPU batches (ab:
# default "vit_b16:160 gpt2:16"). MULTI_AB_CTAS="N M" adds to ab a default N-GPU run per value
# with NCCL_MAX_CTAS set to it (NCCL's kernels on at most N SMs, leaving the rest to the
# backward); MULTI_AB_EXTRA="ARGS;ARGS" one run per ;-separated list of gpuscope-torch arguments
# (e.g. "--bucket-cap-mb 50;TORCH_NCCL_HIGH_PRIORITY=1 --grad-comm bf16": VAR=VALUE words first
# set the run's environment; "--grad-sync off" is tabled as its ceiling, N x the slowest rank's
# samples/s); MULTI_AB_GRAPHS_ONLY=1 leaves out the eager
# N-GPU rows. The table labels each such row. comm: MULTI_MODELS (default "vit_b16:160");
# MULTI_COMM_EAGER=1 adds ours eager (--graphs off) on 1 GPU and on N in both dtypes: the
# all-reduces' device time and exposed part, which a captured step does not measure.
#
# Every process runs with
# NCCL_NVLS_ENABLE=0 (NVLink multicast stays off on the lent machines). MULTI_GPUS (default: all
# visible) is the N of the N-GPU rows. Writes under $OUT: multi_gpu.txt (GPUs, topology,
# versions), multi_build.log, multi_*.jsonl (every JSON line), multi_*.out (consoles).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
export NCCL_NVLS_ENABLE=0 PYTHONUNBUFFERED=1
build="$root/build/multi-device"
bin="$root/bin/gpuscope-torch"
usr="$root/.carry/usr"
# The torch wheel's NCCL, for gpuscope-burn-worker's dlopen.
nccl_lib="$(python3 -c 'import importlib.util as u; s = u.find_spec("nvidia"); print(list(s.submodule_search_locations)[0] + "/nccl/lib/libnccl.so.2")' 2>/dev/null)"
[ -f "$nccl_lib" ] && export GPUSCOPE_NCCL_LIBRARY="$nccl_lib"
gpus="${MULTI_GPUS:-$(nvidia-smi -L | wc -l)}"

facts() {
  {
    date -u +"%Y-%m-%dT%H:%M:%SZ"
    nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm,memory.total --format=csv
    nvidia-smi topo -m
    python3 -c 'import torch, timm, torchvision; print("torch", torch.__version__, "cuda", torch.version.cuda, "nccl", torch.cuda.nccl.version(), "timm", timm.__version__, "torchvision", torchvision.__version__)'
    python3 -c 'import importlib.util as u; s = u.find_spec("nvidia"); print("nvidia wheels:", list(s.submodule_search_locations))'
    nproc
  } 2>&1 | tee "$out/multi_gpu.txt"
}

do_build() {
  local start
  start=$(date +%s)
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DGPUSCOPE_BUILD_TESTS=OFF -DGPUSCOPE_BUILD_TORCH=ON -DCMAKE_PREFIX_PATH="$usr" \
    -DSQLite3_INCLUDE_DIR="$usr/include" -DSQLite3_LIBRARY="$usr/lib/x86_64-linux-gnu/libsqlite3.a" \
    >"$out/multi_build.log" 2>&1 || { tail -40 "$out/multi_build.log"; return 1; }
  grep -E "data parallel" "$out/multi_build.log"
  cmake --build "$build" --target gpuscope_torch gpuscope_burn_worker gpuscope_cli gpuscope_inject -j "$(nproc)" \
    >>"$out/multi_build.log" 2>&1 || {
    grep -E "error|Error" "$out/multi_build.log" | head -40
    return 1
  }
  mkdir -p "$root/bin"
  for t in "$build/workloads/torch/gpuscope-torch" "$build/tools/gpuscope/gpuscope" \
    "$build/tools/gpuscope-burn-worker/gpuscope-burn-worker"; do
    cp "$t" "$root/bin/" && strip "$root/bin/$(basename "$t")"
  done
  # trace looks for the injection library next to gpuscope (the share and diagnose scripts reuse
  # this archive).
  cp "$build/src/inject/libgpuscope_inject.so" "$root/bin/"
  tar -czf "$out/bin.tar.gz" -C "$root" bin
  echo "built in $(($(date +%s) - start)) s: $(du -sh "$out/bin.tar.gz" | cut -f1)"
}

interconnect() {
  echo "NCCL for the worker: ${GPUSCOPE_NCCL_LIBRARY:-libnccl.so.2 on the loader path}"
  timeout -k 10 200 "$root/bin/gpuscope-burn-worker" --interconnect \
    >"$out/multi_interconnect.jsonl" 2>"$out/multi_interconnect.err"
  echo "gpuscope-burn-worker --interconnect -> exit $?"
  cat "$out/multi_interconnect.err"
}

compare_allreduce() {
  python3 - "$out/multi_allreduce.jsonl" "$out/multi_interconnect.jsonl" <<'PY' | tee "$out/multi_allreduce.out"
import json, sys
ref = {r["bytes"]: r for r in map(json.loads, open(sys.argv[1])) if r.get("type") == "allreduce"}
ours = {r["bytes"]: r for r in map(json.loads, open(sys.argv[2])) if r.get("type") == "all_reduce"}
print(f'{"MiB":>6} {"torch busbw GB/s":>17} {"gpuscope busbw GB/s":>20} {"ratio":>6}')
for b in sorted(set(ref) | set(ours)):
    t = ref.get(b, {}).get("busbw"); g = ours.get(b, {}).get("bus_bandwidth")
    f = lambda v: f"{v / 1e9:.1f}" if v else "-"
    print(f'{b / 2**20:6.0f} {f(t):>17} {f(g):>20} {g / t if t and g else float("nan"):6.3f}')
PY
}

# ours NAME ARGS...: gpuscope-torch ARGS, its lines into multi_NAME.jsonl, a summary line.
ours() {
  local name="$1"
  shift
  local start=$(date +%s)
  timeout -k 10 240 "$bin" "$@" >>"$out/multi_$name.jsonl" 2>>"$out/multi_$name.err"
  local rc=$?
  echo "ours $* -> exit $rc in $(($(date +%s) - start)) s"
  tail -2 "$out/multi_$name.err"
}

# reference NAME NPROC ARGS...: bench/multi_reference.py under torchrun.
reference() {
  local name="$1" nproc="$2"
  shift 2
  local start=$(date +%s)
  timeout -k 10 240 torchrun --standalone --nproc-per-node "$nproc" bench/multi_reference.py "$@" \
    >>"$out/multi_$name.jsonl" 2>>"$out/multi_$name.err"
  local rc=$?
  echo "reference x$nproc $* -> exit $rc in $(($(date +%s) - start)) s"
  [ $rc -eq 0 ] || tail -5 "$out/multi_$name.err"
}

smoke() {
  # Our launcher, watched by gpuscope monitor (every rank's GPU should show up).
  timeout -k 10 200 "$root/bin/gpuscope" monitor --interval 200 --jsonl "$out/multi_monitor.jsonl" -- \
    "$bin" --model gpt2 --mode amp_bf16 --batch 8 --warmup 3 --windows 2 --steps 5 \
    --world-size "$gpus" --dist-timeout 120 >>"$out/multi_smoke.jsonl" 2>"$out/multi_monitor.err"
  echo "gpuscope monitor -- gpuscope-torch --world-size $gpus -> exit $?"
  tail -25 "$out/multi_monitor.err"
  # torchrun starting our binary: the launch variables.
  local start=$(date +%s)
  timeout -k 10 200 torchrun --standalone --no-python --nproc-per-node "$gpus" "$bin" \
    --model gpt2 --mode amp_bf16 --batch 8 --warmup 3 --windows 2 --steps 5 --quiet \
    >>"$out/multi_smoke_torchrun.jsonl" 2>>"$out/multi_smoke.err"
  echo "torchrun --no-python gpuscope-torch -> exit $? in $(($(date +%s) - start)) s"
  grep '"type":"result"' "$out/multi_smoke.jsonl" "$out/multi_smoke_torchrun.jsonl" | cut -c1-600
  grep '"type":"error"' "$out/multi_smoke.jsonl" "$out/multi_smoke_torchrun.jsonl" | head -5
}

allreduce_reference() {
  reference allreduce "$gpus" allreduce
  python3 - "$out/multi_allreduce.jsonl" <<'PY'
import json, sys
for l in open(sys.argv[1]):
    r = json.loads(l)
    print(f'torch.distributed all_reduce {r["bytes"] / 2**20:8.0f} MiB: busbw {r["busbw"] / 1e9:7.1f} GB/s')
PY
}

scaling() {
  local model batch extra
  for spec in ${MULTI_MODELS:-vit_b16:160 resnet50:256 gpt2:16}; do
    IFS=: read -r model batch <<<"$spec"
    extra=(--model "$model" --mode amp_bf16 --batch "$batch" --warmup 10 --windows 5 --steps 10 --quiet)
    ours "scaling_$model" "${extra[@]}"
    ours "scaling_$model" "${extra[@]}" --graphs off
    ours "scaling_$model" "${extra[@]}" --world-size "$gpus" --dist-timeout 120
    ours "scaling_$model" "${extra[@]}" --world-size "$gpus" --dist-timeout 120 --graphs off
    reference "scaling_$model" 1 train --model "$model" --batch "$batch"
    reference "scaling_$model" "$gpus" train --model "$model" --batch "$batch"
  done
  python3 bench/multi_table.py "$out"/multi_scaling_*.jsonl | tee "$out/multi_scaling.out"
}

# The A/B's build: gpuscope-torch alone, standalone (torch and the CUDA toolkit only).
build_torch() {
  local start
  start=$(date +%s)
  build_torch_standalone "$root/build/torch-ab" "$out/multi_build.log" || return 1
  grep -E "data parallel" "$out/multi_build.log"
  mkdir -p "$root/bin"
  cp "$root/build/torch-ab/gpuscope-torch" "$bin"
  echo "gpuscope-torch built in $(($(date +%s) - start)) s"
}

# label NAME TEXT: the next rows of multi_NAME.jsonl ran with TEXT (an environment variable the
# rows' own options do not show); the table prints it.
label() {
  echo "{\"type\":\"label\",\"text\":\"$2\"}" >>"$out/multi_$1.jsonl"
}

ab() {
  local model batch dp ctas
  for spec in ${MULTI_MODELS:-vit_b16:160 gpt2:16}; do
    IFS=: read -r model batch <<<"$spec"
    extra=(--model "$model" --mode amp_bf16 --batch "$batch" --warmup 10 --windows 5 --steps 10 --quiet)
    dp=(--world-size "$gpus" --dist-timeout 120)
    ours "ab_$model" "${extra[@]}" --graphs off
    ours "ab_$model" "${extra[@]}" --graphs on
    # CUDA graphs are the default at N GPUs too: the eager rows ask for --graphs off.
    # MULTI_AB_GRAPHS_ONLY=1 leaves them out (the like-for-like rows only).
    if [ -z "${MULTI_AB_GRAPHS_ONLY:-}" ]; then
      ours "ab_$model" "${extra[@]}" "${dp[@]}" --graphs off --bucket-views off
      ours "ab_$model" "${extra[@]}" "${dp[@]}" --graphs off
    fi
    ours "ab_$model" "${extra[@]}" "${dp[@]}"
    # MULTI_AB_CTAS="4 8": one run per value with NCCL_MAX_CTAS set to it.
    for ctas in ${MULTI_AB_CTAS:-}; do
      label "ab_$model" "NCCL_MAX_CTAS=$ctas"
      NCCL_MAX_CTAS="$ctas" ours "ab_$model" "${extra[@]}" "${dp[@]}"
    done
    # MULTI_AB_EXTRA="ARGS;ARGS": one run per ;-separated list of gpuscope-torch arguments, each
    # led by any environment settings for that run (VAR=VALUE words).
    local IFS_SAVE="$IFS" args
    IFS=';'
    for args in ${MULTI_AB_EXTRA:-}; do
      IFS="$IFS_SAVE"
      label "ab_$model" "$args"
      # shellcheck disable=SC2086 # several words
      (
        set -- $args
        while [[ "${1:-}" == [A-Z_]*=* ]]; do
          export "$1"
          shift
        done
        ours "ab_$model" "${extra[@]}" "${dp[@]}" "$@"
      )
      IFS=';'
    done
    IFS="$IFS_SAVE"
    # MULTI_AB_ONE_GPU_RUNS=K: K one-GPU runs with graphs in all (the later ones after the N-GPU
    # rows), whose median is the baseline: one run alone varied by +-0.6 % (session 17).
    for ((k = 1; k < ${MULTI_AB_ONE_GPU_RUNS:-1}; k++)); do
      ours "ab_$model" "${extra[@]}" --graphs on
    done
  done
  python3 - "$out"/multi_ab_*.jsonl <<'PY' | tee "$out/multi_ab.out"
import json, statistics, sys
# Each run's rank-0 start (its switches) then result. eff.: against the 1-GPU eager run (the
# scaling table's baseline); same: against the 1-GPU run with the same CUDA graphs switch. With
# several 1-GPU runs of a switch in a file, their median is its baseline.
print(f'{"model":8} {"GPUs":>4} {"views":>5} {"bstep":>5} {"graphs":>6} {"cap MiB":>7} {"samples/s":>10}'
      f' {"eff.":>6} {"same":>6} {"comm ms":>8} {"exposed ms":>10} {"GiB/GPU":>8} {"all-reduce":>11}')
def rows(path):
    """(label, options, result) of each rank-0 result in the file."""
    opts, label = {}, ""
    for line in open(path):
        try:
            r = json.loads(line)
        except ValueError:
            continue
        if r.get("rank", 0) != 0:
            continue
        if r.get("type") == "label":
            label = r["text"]
        elif r.get("type") == "start":
            opts = r.get("options", {})
        elif r.get("type") == "result":
            yield label, opts, r
            label = ""

for path in sys.argv[1:]:
    singles = {}  # (model, graphs) -> the 1-GPU runs' samples/s
    for _, opts, r in rows(path):
        if (r.get("data_parallel") or {}).get("world_size", 1) == 1:
            key = (r["model"], bool(opts.get("cuda_graphs")))
            singles.setdefault(key, []).append(r["samples_per_second"])
    one = {key: statistics.median(v) for key, v in singles.items()}
    for (model, graphs), v in sorted(singles.items()):
        if len(v) > 1:
            print(f'{model} 1-GPU baseline, graphs {graphs}: median of {len(v)} runs'
                  f' {one[model, graphs]:.1f} ({min(v):.1f}-{max(v):.1f})')
    for label, opts, r in rows(path):
        dp = r.get("data_parallel") or {}
        n = dp.get("world_size", 1)
        sps = r["samples_per_second"]
        ranks = [x for x in dp.get("ranks") or [] if x.get("samples_per_second")]
        if dp.get("grad_sync") is False and ranks:
            # --grad-sync off: every GPU trains alone at once; a synchronous step would go
            # at the slowest one's pace.
            sps = n * min(x["samples_per_second"] for x in ranks)
            label = (label + " " if label else "") + "no-sync ceiling: N x the slowest rank"
        graphs = bool(opts.get("cuda_graphs"))
        pct = lambda base: f'{100 * sps / (n * base):5.1f}%' if base and n > 1 else "-"
        eff, same = pct(one.get((r["model"], False))), pct(one.get((r["model"], graphs)))
        ms = lambda v: f"{v * 1e3:.2f}" if v is not None else "-"
        mem = max((x.get("peak_reserved_bytes") or 0) for x in dp.get("ranks") or [r])
        cap = dp.get("bucket_cap_bytes")
        print(f'{r["model"]:8} {n:>4} {str(dp.get("bucket_views", "-")):>5}'
              f' {str(dp.get("bucket_step", "-")):>5}'
              f' {str(opts.get("cuda_graphs")):>6} {cap // 2**20 if cap else "-":>7}'
              f' {sps:10.1f} {eff:>6} {same:>6}'
              f' {ms(dp.get("collective_seconds_per_step")):>8}'
              f' {ms(dp.get("exposed_seconds_per_step")):>10} {mem / 2**30:8.1f}'
              f' {(dp.get("all_reduce") or "-") + (",shard" if dp.get("optimizer_sharded") else ""):>11}'
              f' {label}')
PY
  grep -h '"type":"error"' "$out"/multi_ab_*.jsonl | cut -c1-400 | head -10
}

# build_all TREE LOG: gpuscope, its injection library and gpuscope-torch in one tree (carry
# .carry); gpuscope-torch also as $bin, for the functions that run that.
build_all() {
  local start
  start=$(date +%s)
  configure_release "$1" "$2" -DGPUSCOPE_PLOTLY_JS="$root/.carry/plotly.min.js" &&
    build_targets "$1" "$2" gpuscope_cli gpuscope_inject gpuscope_torch || return 1
  mkdir -p "$root/bin"
  cp "$1/workloads/torch/gpuscope-torch" "$bin"
  echo "built in $(($(date +%s) - start)) s"
}

# ceiling: gpuscope bench's own scaling table with the no-sync twins (issue 18), built here.
ceiling() {
  local tree="$root/build/device-all" log="$out/multi_ceiling_build.log" start model batch
  build_all "$tree" "$log" || return 1
  for spec in ${MULTI_MODELS:-vit_b16:160 gpt2:16}; do
    IFS=: read -r model batch <<<"$spec"
    start=$(date +%s)
    timeout -k 10 400 "$tree/tools/gpuscope/gpuscope" bench --model "$model" --task train \
      --mode amp_bf16 --batch "$batch" --gpus "1,$gpus" --no-sync-ceiling --guard off \
      --warmup 10 --windows 5 --steps 10 --json "$out/multi_ceiling_$model.json" \
      --torch-bin "$tree/workloads/torch/gpuscope-torch" >>"$out/multi_ceiling.out" 2>&1
    echo "gpuscope bench --gpus 1,$gpus --no-sync-ceiling ($model) -> exit $? in $(($(date +%s) - start)) s"
  done
  cat "$out/multi_ceiling.out"
  # The live sets' traces stay on the machine: their console and diagnoses come back.
  for set in ${MULTI_LIVE:-}; do
    OUT=/tmp/multi_live GPUSCOPE_BIN="$tree/tools/gpuscope/gpuscope" LIVE_CASES="$set" \
      bash bench/trace_live_device.sh cases
  done
  [ -d /tmp/multi_live ] && cp /tmp/multi_live/trace_live.txt /tmp/multi_live/*.json "$out/"
}

# checks: what earlier sessions left unrun on GPUs, with the tree ceiling builds: `gpuscope bench
# --gpus 1,N` per model of MULTI_MODELS (default "vit_b16:160"; its scaling table's all-reduce
# cell), --shard-optimizer on where it cannot run, more ranks than GPUs, and a copy-engine
# data-parallel run (MULTI_TRACE_ARGS, default "--model gpt2 --batch 8"; eager and with CUDA
# graphs) under `gpuscope trace` and `gpuscope diagnose` -> multi_checks.out,
# multi_checks_*.json, multi_checks_traces.tar.gz (the traces' records and summaries; trace.json
# left out); bin.tar.gz (bin/gpuscope-torch) for later calls.
checks() {
  local tree="$root/build/device-all" start model batch rc
  build_all "$tree" "$out/multi_checks_build.log" || return 1
  local cli="$tree/tools/gpuscope/gpuscope"
  local small=(--model gpt2 --mode amp_bf16 --batch 8 --warmup 2 --windows 1 --steps 2)
  run_check() {
    local label="$1"
    shift
    start=$(date +%s)
    timeout -k 10 300 "$@" >"/tmp/checks_$label.out" 2>"/tmp/checks_$label.err"
    rc=$?
    echo "$label: exit $rc in $(($(date +%s) - start)) s"
    grep -h '"type":"error"\|"type":"skipped"\|"type":"done"' "/tmp/checks_$label.out" | cut -c1-400
    tail -3 "/tmp/checks_$label.err"
  }
  {
    # MULTI_CHECKS="bench refusals trace live": which parts (default: all but live; live runs
    # bench/trace_live_device.sh's ddp set, DDP_PROGRAMS, with this tree's gpuscope).
    want() { [[ " ${MULTI_CHECKS:-bench refusals trace} " == *" $1 "* ]]; }
    want bench && for spec in ${MULTI_MODELS:-vit_b16:160}; do
      IFS=: read -r model batch <<<"$spec"
      start=$(date +%s)
      timeout -k 10 400 "$cli" bench --model "$model" --task train --mode amp_bf16 --batch "$batch" \
        --gpus "1,$gpus" --guard off --warmup 10 --windows 5 --steps 10 \
        --json "$out/multi_checks_$model.json" --torch-bin "$bin"
      echo "gpuscope bench --gpus 1,$gpus ($model) -> exit $? in $(($(date +%s) - start)) s"
    done
    # Asked for and impossible: fp16's loss scaling; NCCL (usage errors, exit 2).
    if want refusals; then
      run_check shard-on-fp16 "$bin" "${small[@]}" --mode amp_fp16 --world-size 2 --shard-optimizer on
      run_check shard-on-nccl "$bin" "${small[@]}" --world-size 2 --shard-optimizer on --all-reduce nccl
      run_check more-ranks-than-gpus "$bin" "${small[@]}" --world-size $((gpus + 1))
    fi
    # The copy engines' communication under trace and diagnose.
    local mode
    want trace && for mode in off on; do
      rm -rf "/tmp/checks_traces/graphs_$mode"
      mkdir -p /tmp/checks_traces
      run_check "trace-graphs-$mode" "$cli" trace --skip-steps 15 --steps 6 \
        -o "/tmp/checks_traces/graphs_$mode" -- "$bin" ${MULTI_TRACE_ARGS:---model gpt2 --batch 8} \
        --mode amp_bf16 --warmup 10 --windows 2 --steps 10 --world-size 2 --graphs "$mode"
      cat "/tmp/checks_trace-graphs-$mode.out"
      timeout 120 "$cli" diagnose "/tmp/checks_traces/graphs_$mode"
      timeout 120 "$cli" diagnose --json "/tmp/checks_traces/graphs_$mode" \
        >"/tmp/checks_traces/graphs_$mode.diagnose.json"
      echo "diagnose (graphs $mode) -> exit $?"
      rm -f "/tmp/checks_traces/graphs_$mode/trace.json"
    done
    if want live; then
      OUT=/tmp/checks_live GPUSCOPE_BIN="$cli" LIVE_CASES=ddp bash bench/trace_live_device.sh cases
    fi
  } 2>&1 | tee "$out/multi_checks.out"
  [ -d /tmp/checks_traces ] && tar -czf "$out/multi_checks_traces.tar.gz" -C /tmp checks_traces
  tar -czf "$out/bin.tar.gz" -C "$root" bin/gpuscope-torch
  cp "$out/bin.tar.gz" /tmp/bin.tar.gz
}

# fault: the launcher's answer to a rank that ends early, on NCCL (gpuscope-torch built as for ab).
fault() {
  local args=(--model gpt2 --mode amp_bf16 --batch 8 --warmup 5 --windows 2 --steps 10) start
  run_fault() {
    local label="$1"
    shift
    # MULTI_FAULT_CASES="copy-engine-stopped nccl-stopped": only those cases.
    [[ -z "${MULTI_FAULT_CASES:-}" || " $MULTI_FAULT_CASES " == *" $label "* ]] || return 0
    start=$(date +%s)
    timeout -k 10 400 "$@" >"$out/multi_fault_$label.jsonl" 2>"$out/multi_fault_$label.err"
    echo "$label: exit $? in $(($(date +%s) - start)) s"
    grep -h '"type":"error"\|"type":"done"' "$out/multi_fault_$label.jsonl" | cut -c1-300
  }
  {
    run_fault eager env GPUSCOPE_TORCH_FAULT=1:15 "$bin" "${args[@]}" --world-size "$gpus" --graphs off
    run_fault graphs env GPUSCOPE_TORCH_FAULT=1:15 "$bin" "${args[@]}" --world-size "$gpus"
    # A dead rank under the copy engines: the launcher's grace ends the others.
    run_fault copy-engine env GPUSCOPE_TORCH_FAULT=1:15 "$bin" "${args[@]}" --world-size "$gpus" \
      --all-reduce copy-engine
    # A rank that hangs (SIGSTOP, not dead): the stall watchdog ends the others after
    # --dist-timeout (neither the copy engines nor NCCL's captured collectives time out otherwise).
    run_fault copy-engine-stopped env GPUSCOPE_TORCH_FAULT=1:15:stop "$bin" "${args[@]}" \
      --world-size "$gpus" --all-reduce copy-engine --dist-timeout 20
    run_fault nccl-stopped env GPUSCOPE_TORCH_FAULT=1:15:stop "$bin" "${args[@]}" \
      --world-size "$gpus" --all-reduce nccl --dist-timeout 20
    run_fault more-ranks-than-gpus "$bin" "${args[@]}" --world-size $((gpus + 2))
  } 2>&1 | tee "$out/multi_fault.out"
}

# ce: the copy-engine all-reduce (--all-reduce copy-engine) against NCCL's. First that it
# averages: ViT-B/16's guard (the same 30 steps, every loss kept) through NCCL eager, through
# the copy engines eager, with CUDA graphs, with bf16 communication, and without any sync (the
# distance a wrong average would show) -> multi_ce_guard.out; then ab's rows for MULTI_MODELS
# with MULTI_AB_EXTRA set to the copy-engine rows (with graphs, eager, and NCCL eager for the
# eager comparison). Leaves bin.tar.gz (bin/gpuscope-torch) in $OUT for later calls.
# MULTI_CE_RUNS="ARGS;ARGS" replaces the guard's runs (each led by the --all-reduce value; the
# first "nccl --graphs off" is the reference), MULTI_AB_EXTRA the ab rows. The guard table also
# names the runs whose losses are the same to the bit.
ce() {
  local g=(--model vit_b16 --mode amp_bf16 --batch 32 --task guard --guard-steps 30
    --world-size "$gpus" --dist-timeout 120 --quiet) run runs
  IFS=';' read -r -a runs <<<"${MULTI_CE_RUNS:-nccl --graphs off;copy-engine --graphs off;copy-engine --graphs on;copy-engine --graphs on --grad-comm bf16;nccl --graphs off --grad-sync off}"
  for run in "${runs[@]}"; do
    # shellcheck disable=SC2086 # several words
    ours "ce_guard_${run// /_}" "${g[@]}" --all-reduce $run
  done
  python3 - "$out"/multi_ce_guard_*.jsonl <<'PY' | tee "$out/multi_ce_guard.out"
import json, os, sys
runs = {}
for path in sys.argv[1:]:
    for line in open(path):
        r = json.loads(line)
        if r.get("type") == "result" and r.get("rank", 0) == 0:
            runs[os.path.basename(path)[15:-6]] = r["loss"]["values"]
ref = runs.get("nccl_--graphs_off")
for name, losses in sorted(runs.items()):
    worst = max(abs(a - b) / abs(b) for a, b in zip(losses, ref)) if ref else float("nan")
    same = [n for n, l in sorted(runs.items()) if n != name and l == losses]
    print(f"{name:60} steps {len(losses):3}  first {losses[0]:.5f}  last {losses[-1]:.5f}"
          f"  max |rel. diff| vs NCCL eager {worst:.2e}  same to the bit: {', '.join(same) or '-'}")
PY
  MULTI_AB_GRAPHS_ONLY=1 \
    MULTI_AB_EXTRA="${MULTI_AB_EXTRA:---all-reduce copy-engine;--all-reduce copy-engine --graphs off;--graphs off}" ab
  tar -czf "$out/bin.tar.gz" -C "$root" bin/gpuscope-torch
}

# table: the scaling table at each count of MULTI_GPU_COUNTS (default: all visible GPUs), ours
# with CUDA graphs (the default) and torchrun + DDP: per model one 1-GPU run of each, the N-GPU
# runs, then MULTI_TABLE_ONE_GPU_RUNS-1 (default 2) more 1-GPU runs of each, whose median is the
# baseline (multi_table.py); one multi_tableN_MODEL.jsonl per count (the 1-GPU lines copied in).
table() {
  local model batch extra n k
  for spec in ${MULTI_MODELS:-vit_b16:160 gpt2:16 resnet50:256}; do
    IFS=: read -r model batch <<<"$spec"
    extra=(--model "$model" --mode amp_bf16 --batch "$batch" --warmup 10 --windows 5 --steps 10 --quiet)
    ours "table1_$model" "${extra[@]}"
    reference "table1_$model" 1 train --model "$model" --batch "$batch"
    for n in ${MULTI_GPU_COUNTS:-$gpus}; do
      ours "tableN${n}_$model" "${extra[@]}" --world-size "$n" --dist-timeout 120
      reference "tableN${n}_$model" "$n" train --model "$model" --batch "$batch"
    done
    for ((k = 1; k < ${MULTI_TABLE_ONE_GPU_RUNS:-3}; k++)); do
      ours "table1_$model" "${extra[@]}"
      reference "table1_$model" 1 train --model "$model" --batch "$batch"
    done
    for n in ${MULTI_GPU_COUNTS:-$gpus}; do
      cat "$out/multi_table1_$model.jsonl" "$out/multi_tableN${n}_$model.jsonl" \
        >"$out/multi_table${n}_$model.jsonl"
      python3 bench/multi_table.py "$out/multi_table${n}_$model.jsonl" | grep -v '^{' |
        tee -a "$out/multi_table.out"
    done
  done
}

# comm: issue 18's bf16 gradient communication against DDP's bf16_compress_hook, like for like.
comm() {
  local model batch extra dp
  for spec in ${MULTI_MODELS:-vit_b16:160}; do
    IFS=: read -r model batch <<<"$spec"
    extra=(--model "$model" --mode amp_bf16 --batch "$batch" --warmup 10 --windows 5 --steps 10 --quiet)
    dp=(--world-size "$gpus" --dist-timeout 120)
    ours "comm_$model" "${extra[@]}"
    ours "comm_$model" "${extra[@]}" "${dp[@]}" --grad-comm fp32
    ours "comm_$model" "${extra[@]}" "${dp[@]}" --grad-comm bf16
    if [ -n "${MULTI_COMM_EAGER:-}" ]; then
      ours "comm_$model" "${extra[@]}" --graphs off
      ours "comm_$model" "${extra[@]}" "${dp[@]}" --grad-comm fp32 --graphs off
      ours "comm_$model" "${extra[@]}" "${dp[@]}" --grad-comm bf16 --graphs off
    fi
    reference "comm_$model" 1 train --model "$model" --batch "$batch"
    reference "comm_$model" "$gpus" train --model "$model" --batch "$batch"
    reference "comm_$model" "$gpus" train --model "$model" --batch "$batch" --comm-hook bf16
  done
  python3 bench/multi_table.py "$out"/multi_comm_*.jsonl | tee "$out/multi_comm.out"
  grep -h '"type":"error"' "$out"/multi_comm_*.jsonl | cut -c1-400 | head -10
}

# pair: what running both GPUs at once costs without any communication: per model, one GPU
# alone, then one process per GPU at the same time (each its own CUDA_VISIBLE_DEVICES), then the
# N-GPU data-parallel run, twice -> multi_pair_*.jsonl, multi_pair.out
pair() {
  local model batch extra g round
  for spec in ${MULTI_MODELS:-vit_b16:160}; do
    IFS=: read -r model batch <<<"$spec"
    extra=(--model "$model" --mode amp_bf16 --batch "$batch" --warmup 10 --windows 5 --steps 10 --quiet)
    for round in 1 2; do
      CUDA_VISIBLE_DEVICES=0 ours "pair_${model}_alone" "${extra[@]}"
      for ((g = 0; g < gpus; g++)); do
        CUDA_VISIBLE_DEVICES=$g ours "pair_${model}_together_$g" "${extra[@]}" &
      done
      wait
      ours "pair_${model}_dp" "${extra[@]}" --world-size "$gpus" --dist-timeout 120
    done
  done
  python3 - "$out"/multi_pair_*.jsonl <<'PY' | tee "$out/multi_pair.out"
import json, os, sys
for path in sys.argv[1:]:
    rates = [json.loads(l)["samples_per_second"] for l in open(path)
             if l.startswith("{") and '"type":"result"' in l and '"rank":1' not in l]
    print(f'{os.path.basename(path):40} ' + " ".join(f"{r:9.1f}" for r in rates))
PY
}

# clocks: one GPU alone and data parallel on all, each under `gpuscope monitor` (100 ms), twice:
# the SM clock, power and the power-cap throttle while busy -> multi_clk_*.jsonl, multi_clk.out
clocks() {
  local model batch extra round
  for spec in ${MULTI_MODELS:-vit_b16:160}; do
    IFS=: read -r model batch <<<"$spec"
    extra=(--model "$model" --mode amp_bf16 --batch "$batch" --warmup 10 --windows 10 --steps 10 --quiet)
    for round in 1 2; do
      for run in alone dp; do
        local args=("${extra[@]}")
        [ "$run" = dp ] && args+=(--world-size "$gpus" --dist-timeout 120)
        timeout -k 10 200 "$root/bin/gpuscope" monitor --interval 100 \
          --jsonl "$out/multi_clk_${model}_${run}_$round.jsonl" -- "$bin" "${args[@]}" \
          >"$out/multi_clk_${model}_${run}_$round.out" 2>>"$out/multi_clk.err"
        echo "$model $run round $round -> exit $?"
      done
    done
  done
  python3 - "$out"/multi_clk_*.jsonl <<'PY' | tee "$out/multi_clk.out"
import json, os, statistics, sys
print(f'{"run":34} {"gpu":>3} {"samples":>7} {"SM MHz":>7} {"power W":>7} {"cap s/s":>7} {"SM act.":>7}  samples/s')
for path in sys.argv[1:]:
    samples, rate = {}, None
    for line in open(path):
        r = json.loads(line)
        if r.get("type") == "sample" and (r.get("sm_activity") or 0) > 0.5:
            samples.setdefault(r["gpu"], []).append(r)
    try:
        res = [json.loads(l) for l in open(path[:-6] + ".out") if '"type":"result"' in l]
        rate = res[0]["samples_per_second"] if res else None
    except OSError:
        pass
    for gpu, xs in sorted(samples.items()):
        m = lambda k: statistics.mean(x.get(k) or 0 for x in xs)
        print(f'{os.path.basename(path)[10:-6]:34} {gpu:>3} {len(xs):>7} {m("sm_clock_hz") / 1e6:7.0f}'
              f' {m("power_w"):7.1f} {m("throttle_sw_power_cap_s") * 10:7.2f} {m("sm_activity"):7.2f}  {rate or "-"}')
PY
}

case "${1:-}" in
  clocks)
    facts
    tar -xzf "${2:?a bin.tar.gz with gpuscope and gpuscope-torch}" -C "$root" || exit 1
    clocks
    ;;
  pair)
    facts
    tar -xzf "${2:?a bin.tar.gz with gpuscope-torch}" -C "$root" || exit 1
    pair
    ;;
  prepare)
    bash bench/monitor_device.sh prepare
    ;;
  build)
    facts
    do_build || exit 1
    smoke
    allreduce_reference
    interconnect
    compare_allreduce
    ;;
  build-only)
    facts
    do_build
    ;;
  scaling)
    facts
    tar -xzf "${2:?the bin.tar.gz from build}" -C "$root" || exit 1
    scaling
    ;;
  ab)
    facts
    # With a bin.tar.gz (from build-only or another script), its gpuscope-torch; else built here.
    if [ -n "${2:-}" ]; then tar -xzf "$2" -C "$root" || exit 1; else build_torch || exit 1; fi
    ab
    ;;
  table)
    facts
    if [ -n "${2:-}" ]; then tar -xzf "$2" -C "$root" || exit 1; else build_torch || exit 1; fi
    table
    ;;
  ceiling)
    facts
    ceiling
    ;;
  checks)
    facts
    checks
    ;;
  fault)
    facts
    if [ -n "${2:-}" ]; then tar -xzf "$2" -C "$root" || exit 1; else build_torch || exit 1; fi
    fault
    ;;
  ce)
    facts
    if [ -n "${2:-}" ]; then tar -xzf "$2" -C "$root" || exit 1; else build_torch || exit 1; fi
    ce
    ;;
  comm)
    facts
    if [ -n "${2:-}" ]; then tar -xzf "$2" -C "$root" || exit 1; else build_torch || exit 1; fi
    comm
    ;;
  all)
    facts
    do_build || exit 1
    smoke
    allreduce_reference
    interconnect
    compare_allreduce
    scaling
    ;;
  *)
    echo "usage: $0 prepare | build | build-only | scaling BIN_TGZ | all | ab | comm | table | ceiling | checks | fault | ce" >&2
    exit 2
    ;;
esac
