#!/usr/bin/env bash
# A last look at a tree on the GPU machine, with programs already in ./bin (from
# bench/core_compare_device.sh or bench/multi_device.sh build-only): each command once, its exit
# code and the lines that say it worked. For the end of a session, after a merge.
#
#   bash bench/smoke_device.sh [BIN_TGZ]   # there; BIN_TGZ unpacked first if given
#
# Results: $OUT/smoke.txt (what was printed) and $OUT/smoke.tar.gz (the outputs). Reads the GPU
# only: never changes a power limit, clocks, MIG, persistence or compute mode.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
use_carried_libraries
export NCCL_NVLS_ENABLE=0
[ -n "${1:-}" ] && { tar -xzf "$1" -C "$root" || exit 1; }
G="$root/bin/gpuscope"
T="$root/bin/gpuscope-torch"
export GPUSCOPE_BURN_WORKER="$root/bin/gpuscope-burn-worker" GPUSCOPE_TORCH_BIN="$T"
s="$out/smoke"
mkdir -p "$s"

# check NAME COMMAND...: runs it (at most 180 s), its stdout/stderr into $s/NAME.{out,err}.
check() {
  local name="$1" start rc
  shift
  start=$(date +%s)
  timeout -k 10 180 "$@" >"$s/$name.out" 2>"$s/$name.err"
  rc=$?
  echo "== $name: exit $rc in $(($(date +%s) - start)) s"
  return $rc
}

{
  nvidia-smi --query-gpu=index,name,driver_version,power.limit --format=csv,noheader
  check info "$G" info --json &&
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print([g.get("name") for g in d.get("gpus", [])])' "$s/info.out"
  check burn "$G" burn --gpu 0 --duration 5 --precision bf16 --no-memory --no-host-link --json &&
    python3 - "$s/burn.out" <<'PY'
import json, sys
d = json.load(open(sys.argv[1]))
for t in d["targets"]:
    for g in t["gemm"]:
        print(g["precision"], g["status"], round(g["flop_per_s"]["median"] / 1e12, 1), "TFLOP/s",
              round(g.get("power_average_w") or 0), "W", "verified" if g.get("verified") else "")
PY
  check monitor "$G" monitor --interval 200 --jsonl "$s/monitor.jsonl" -- "$T" --model resnet50 \
    --mode bf16 --batch 128 --warmup 3 --windows 2 --steps 5 --quiet
  echo "monitor samples: $(grep -c '"type":"sample"' "$s/monitor.jsonl")"
  grep '"type":"result"' "$s/monitor.out" | cut -c1-200
  check trace "$G" trace --skip-steps 20 --steps 20 -o "$s/trace" -- \
    python3 bench/trace_examples/healthy_train.py --warmup 10 --steps 60 --batch 64
  tail -12 "$s/trace.err"
  check diagnose "$G" diagnose --skip-steps 5 --steps 20 -o "$s/diagnose" -- \
    python3 bench/diagnose_examples/sync_every_step.py --steps 40
  grep -vE "^step [0-9]+ loss" "$s/diagnose.err" | head -14
  check bench "$G" bench --gpu 0 --model vit_b16 --task infer --mode bf16 --warmup 3 --windows 2 \
    --steps 5 --json -
  python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); [print(r["model"], r["task"], r["mode"], r["status"], round(r.get("samples_per_second") or 0, 1)) for r in d["rows"]]' "$s/bench.out"
} 2>&1 | tee "$out/smoke.txt"
rm -rf "$s/trace/records" "$s/diagnose/records" "$s"/*/trace.json
tar -czf "$out/smoke.tar.gz" -C "$out" smoke && rm -rf "$s"
