#!/usr/bin/env bash
# Issue 18: where gpuscope-torch's data-parallel step spends its time beyond the one-GPU step, by
# kernel, in one device call on a machine with two GPUs or more (carry .carry):
#   bash bench/dp_gap_device.sh [MORE...]
# builds gpuscope + its injection library (bench/device_common.sh) and gpuscope-torch
# (standalone, as bench/multi_device.sh ab) side by side, then traces ViT-B/16 (AMP bf16, batch
# DP_GAP_BATCH per GPU, default 160) under `gpuscope trace`: one GPU, two GPUs data parallel and
# two GPUs without gradient sync (--grad-sync off), eager and with CUDA graphs, and tables each
# kernel's time per step on GPU 0 (bench/kernel_diff.py) -> $OUT/dp_gap.txt. MORE: sets of
# bench/trace_live_device.sh to run after (e.g. "ddp unseen"), with the same gpuscope.
# Reads the GPUs only: never changes a power limit, clocks, MIG, persistence or compute mode.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
export NCCL_NVLS_ENABLE=0
build="$root/build/device-cli"
cli="$build/tools/gpuscope/gpuscope"
torch_build="$root/build/torch-ab"
torch="$torch_build/gpuscope-torch"
model="${DP_GAP_MODEL:-vit_b16}"
batch="${DP_GAP_BATCH:-160}"

start=$(date +%s)
build_cli_and_inject "$build" "$out/cli_build.log" &
cli_pid=$!
build_torch_standalone "$torch_build" "$out/torch_build.log" || exit 1
wait "$cli_pid" || exit 1
echo "built in $(($(date +%s) - start)) s" | tee "$out/dp_gap.txt"

args=(--model "$model" --mode amp_bf16 --batch "$batch" --warmup 10 --windows 3 --steps 10 --quiet)
dp=(--world-size 2 --dist-timeout 120)
# The traces stay on the machine (a few hundred MB); their summaries come back in dp_gap.tgz.
work=/tmp/dp_gap
# LABEL ARGS...: one traced run into $work/runs/LABEL.
traced() {
  local label="$1" t
  shift
  t=$(date +%s)
  timeout -k 10 120 "$cli" trace --skip-steps 15 --steps 20 -o "$work/runs/$label" -- "$torch" \
    "${args[@]}" "$@" >"$work/$label.out" 2>"$work/$label.err"
  echo "trace $label ($*) -> exit $? in $(($(date +%s) - t)) s" | tee -a "$out/dp_gap.txt"
  tail -3 "$work/$label.err" | tee -a "$out/dp_gap.txt"
  grep -h '"samples_per_second"' "$work/$label.out" | tail -1 |
    python3 -c 'import json, sys; r = json.loads(sys.stdin.read() or "{}"); print("  samples/s", r.get("samples_per_second"))' |
    tee -a "$out/dp_gap.txt"
}
mkdir -p "$work/runs"
traced one-eager --graphs off
traced dp-eager --graphs off "${dp[@]}"
traced nosync-eager --graphs off "${dp[@]}" --grad-sync off
traced one-graphs
traced dp-graphs "${dp[@]}"
for set in eager graphs; do
  python3 bench/kernel_diff.py "one=$work/runs/one-$set" "dp=$work/runs/dp-$set" \
    $([ "$set" = eager ] && echo "nosync=$work/runs/nosync-eager") 2>&1 | tee -a "$out/dp_gap.txt"
done
(cd "$work" && tar czf "$out/dp_gap.tgz" ./*.out ./*.err runs/*/summary.json)
# The live sets write into their own folder; their console and JSON answers come back.
for set in "$@"; do
  OUT="$work/live" LIVE_CASES="$set" bash bench/trace_live_device.sh cases
done
if [ -d "$work/live" ]; then
  cp "$work/live/trace_live.txt" "$out/" 2>/dev/null
  (cd "$work/live" && tar czf "$out/live.tgz" --exclude runs .)
fi
