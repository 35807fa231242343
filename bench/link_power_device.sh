#!/usr/bin/env bash
# Issue 18: is ViT-B/16's data-parallel loss at the 700 W cap the NVLink being awake, whatever
# crosses it? One device call on a machine with two GPUs (carry .carry for nvml.h):
#   bash bench/link_power_device.sh [BIN_TGZ]
# gpuscope-torch (built standalone, or bin/gpuscope-torch from BIN_TGZ) trains ViT-B/16 (AMP
# bf16, batch 160, CUDA graphs) on one GPU, on two without gradient sync (the ceiling), on two
# without sync while bench/link_keepalive.cu, a process of its own, copies between or within
# the GPUs, and data parallel (the default, and with one bucket: all the communication in one
# burst after the backward). Every run has nvidia-smi beside it (SM clock, power, power cap) and
# link_keepalive sampling NVML's NVLink power state. Two rounds, the second in reverse order.
# Reads the GPUs only: never changes a power limit, clocks or link setting.
# -> $OUT/link_power.out (the table), link_power.jsonl (every line), link_build.log, and
# bin.tar.gz (the gpuscope-torch built, for multi_device.sh's BIN_TGZ)
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
export NCCL_NVLS_ENABLE=0
bin="$root/bin/gpuscope-torch"
keepalive="$root/bin/link_keepalive"
log="$out/link_build.log"
jsonl="$out/link_power.jsonl"
start=$(date +%s)
if [ -n "${1:-}" ]; then
  tar -xzf "$1" -C "$root" || exit 1
else
  build_torch_standalone "$root/build/torch-link" "$log" || exit 1
  mkdir -p "$root/bin"
  cp "$root/build/torch-link/gpuscope-torch" "$bin"
  tar -czf "$out/bin.tar.gz" -C "$root" bin/gpuscope-torch
fi
nvcc -std=c++17 -O2 -I"$root/.carry/nvml" -o "$keepalive" bench/link_keepalive.cu -ldl >>"$log" 2>&1 ||
  {
    tail -20 "$log"
    exit 1
  }
echo "built in $(($(date +%s) - start)) s"
nvidia-smi --query-gpu=index,name,driver_version,power.limit,clocks.max.sm --format=csv | tee -a "$out/link_power.out"
nvidia-smi topo -m | head -4 | tee -a "$out/link_power.out"
cap=clocks_event_reasons.sw_power_cap
nvidia-smi --query-gpu=$cap --format=csv >/dev/null 2>&1 || cap=clocks_throttle_reasons.sw_power_cap

args=(--model vit_b16 --mode amp_bf16 --batch 160 --warmup 10 --windows 8 --steps 10 --quiet)
nosync=(--world-size 2 --grad-sync off --dist-timeout 120)
dp=(--world-size 2 --dist-timeout 120)

# run NAME KEEPALIVE_ARGS -- GPUSCOPE_TORCH_ARGS: one training beside nvidia-smi and
# link_keepalive; its result line, the keepalive's line and the smi samples, each tagged NAME.
run() {
  local name=$1 smi ka
  shift
  local k=()
  while [ "$1" != -- ]; do
    k+=("$1")
    shift
  done
  shift
  nvidia-smi --query-gpu=index,clocks.sm,power.draw,$cap,utilization.gpu \
    --format=csv,noheader,nounits -lms 200 >"/tmp/smi_$name.csv" &
  smi=$!
  "$keepalive" "${k[@]}" >"/tmp/ka_$name.json" 2>>"$out/link_power.err" &
  ka=$!
  sleep 1
  timeout -k 10 200 "$bin" "${args[@]}" "$@" 2>>"$out/link_power.err" |
    python3 bench/rank0_results.py run "$name" >>"$jsonl"
  kill -TERM "$ka"
  wait "$ka"
  kill "$smi"
  wait "$smi" 2>/dev/null
  sed "s/^{/{\"run\":\"$name\",/" "/tmp/ka_$name.json" >>"$jsonl"
  python3 - "$name" "/tmp/smi_$name.csv" >>"$jsonl" <<'PY'
import csv, json, statistics as st, sys
gpus = {}
for row in csv.reader(open(sys.argv[2])):
    try:
        index, clock, power, cap, util = [x.strip() for x in row]
        if float(util) >= 90:
            gpus.setdefault(int(index), []).append((float(clock), float(power), cap.lower() in ("active", "1")))
    except ValueError:
        pass
print(json.dumps({"run": sys.argv[1], "type": "smi", "gpus": {
    g: {"n": len(s), "sm_mhz": st.mean(x[0] for x in s), "power_w": st.mean(x[1] for x in s),
        "cap_share": sum(x[2] for x in s) / len(s)} for g, s in sorted(gpus.items())}}))
PY
  echo "$name: done at $(($(date +%s) - start)) s"
}

round() {
  local names=("$@") name
  for name in "${names[@]}"; do
    case $name in
      one) run "$name" watch 0 0 -- ;;
      nosync) run "$name" watch 0 0 -- "${nosync[@]}" ;;
      nosync_peer_4k_100us) run "$name" peer 4096 100 -- "${nosync[@]}" ;;
      nosync_peer_4k_2ms) run "$name" peer 4096 2000 -- "${nosync[@]}" ;;
      nosync_local_4k_100us) run "$name" local 4096 100 -- "${nosync[@]}" ;;
      nosync_peer_8m_1200us) run "$name" peer 8388608 1200 -- "${nosync[@]}" ;;
      dp) run "$name" watch 0 0 -- "${dp[@]}" ;;
      dp_one_bucket) run "$name" watch 0 0 -- "${dp[@]}" --bucket-cap-mb 1000 ;;
    esac
  done
}
# LINK_RUNS picks the runs. nosync_local_4k_100us is left out by default: a second process's
# copies within a GPU ran on its SMs (the trainer's clock rose by 150 MHz while it waited for
# them, session 19's call 1), so it does not separate the link from the copies.
read -r -a order <<<"${LINK_RUNS:-one nosync nosync_peer_4k_2ms nosync_peer_8m_1200us dp dp_one_bucket}"
round "${order[@]}"
reversed=()
for ((i = ${#order[@]} - 1; i >= 0; i--)); do reversed+=("${order[i]}"); done
round "${reversed[@]}"

python3 - "$jsonl" <<'PY' | tee -a "$out/link_power.out"
import json, sys
runs = {}
for line in open(sys.argv[1]):
    r = json.loads(line)
    runs.setdefault(r["run"], {}).setdefault(r["type"], []).append(r)
print(f'{"run":24} {"samples/s (2 GPUs: N x slowest rank)":>38} {"SM MHz GPU0/1":>15} {"power W":>13}'
      f' {"links high-speed GPU0/1":>24} {"copied each way":>16}')
for name, kinds in runs.items():
    rates = []
    for r in kinds.get("result", []):
        ranks = [x["samples_per_second"] for x in (r.get("data_parallel") or {}).get("ranks") or []
                 if x.get("samples_per_second")]
        nosync = (r.get("data_parallel") or {}).get("grad_sync") is False
        rates.append(len(ranks) * min(ranks) if nosync and ranks else r["samples_per_second"])
    for i, smi in enumerate(kinds.get("smi", [])):
        ka = kinds["link_keepalive"][i] if i < len(kinds.get("link_keepalive", [])) else {}
        g = smi["gpus"]
        mhz = "/".join(f'{g[k]["sm_mhz"]:.0f}' for k in sorted(g))
        w = "/".join(f'{g[k]["power_w"]:.0f}' for k in sorted(g))
        hs = "/".join("-" if x["high_speed_share"] is None else f'{100 * x["high_speed_share"]:.0f}%'
                      for x in ka.get("gpus", []))
        rate = f"{rates[i]:.1f}" if i < len(rates) else "-"
        bw = f'{ka.get("bytes_per_second_each_way", 0) / 1e9:.2f} GB/s' if ka.get("copies") else "-"
        print(f"{name:24} {rate:>38} {mhz:>15} {w:>13} {hs:>24} {bw:>16}")
thr = next((r for r in open(sys.argv[1]) if '"link_keepalive"' in r), None)
if thr:
    print("NVLink low-power threshold (NVML):", [
        {k: g[k] for k in ("gpu", "low_power_threshold", "threshold_units", "threshold_supported")}
        for g in json.loads(thr)["gpus"]])
PY
