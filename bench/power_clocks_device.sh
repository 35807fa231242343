#!/usr/bin/env bash
# Issue 18: whether a data-parallel step loses clock to the power cap (one device call on a
# machine with two GPUs or more; carry the bin.tar.gz of `bench/multi_device.sh ce`):
#   bash bench/power_clocks_device.sh BIN_TGZ
# ViT-B/16 (AMP bf16, batch 160, CUDA graphs, 20 windows of 10 steps) on one GPU, on two without
# gradient sync, with NCCL's all-reduce, with the copy engines' (fp32 and bf16), each under
# nvidia-smi every 200 ms: per GPU the mean SM clock, power and share of samples with the
# software power cap active, over the busy samples (utilization >= 90 %). Prints samples/s per
# run, then the table. Reads the GPUs only: never changes a power limit or clocks.
set -u
tar xzf "${1:?a bin.tar.gz with bin/gpuscope-torch}"
bin=bin/gpuscope-torch
export NCCL_NVLS_ENABLE=0
cap=clocks_event_reasons.sw_power_cap
nvidia-smi --query-gpu=$cap --format=csv >/dev/null 2>&1 || cap=clocks_throttle_reasons.sw_power_cap
# NAME COMMAND...: the run's samples/s, its GPUs sampled into /tmp/NAME.csv meanwhile.
sampled() {
  local name=$1 pid
  shift
  nvidia-smi --query-gpu=index,clocks.sm,power.draw,$cap,utilization.gpu \
    --format=csv,noheader,nounits -lms 200 >"/tmp/$name.csv" &
  pid=$!
  "$@" 2>/dev/null | grep '"type":"result"' |
    python3 -c 'import json, sys; r = json.loads(sys.stdin.read()); print(sys.argv[1], round(r["samples_per_second"], 1))' "$name"
  kill "$pid"
  wait "$pid" 2>/dev/null
}
args=(--model vit_b16 --mode amp_bf16 --batch 160 --warmup 10 --windows 20 --steps 10 --quiet)
sampled one "$bin" "${args[@]}"
sampled nosync "$bin" "${args[@]}" --world-size 2 --grad-sync off
sampled nccl "$bin" "${args[@]}" --world-size 2 --all-reduce nccl
sampled ce "$bin" "${args[@]}" --world-size 2 --all-reduce copy-engine
sampled ce_bf16 "$bin" "${args[@]}" --world-size 2 --all-reduce copy-engine --grad-comm bf16
python3 - <<'PY'
import csv, statistics as st
for name in ["one", "nosync", "nccl", "ce", "ce_bf16"]:
    gpus = {}
    for row in csv.reader(open(f"/tmp/{name}.csv")):
        try:
            index, clock, power, cap, util = [x.strip() for x in row]
            gpus.setdefault(int(index), []).append(
                (float(clock), float(power), cap.lower() in ("active", "1"), float(util)))
        except ValueError:
            pass
    for index, samples in sorted(gpus.items()):
        busy = [s for s in samples if s[3] >= 90]
        if not busy:
            continue
        print(f"{name:8} GPU{index} n={len(busy):3} sm {st.mean(s[0] for s in busy):6.0f} MHz"
              f"  power {st.mean(s[1] for s in busy):6.1f} W"
              f"  power-cap active {100 * sum(s[2] for s in busy) / len(busy):5.1f}%")
PY
