#!/usr/bin/env bash
# `gpuscope bench --share` on the GPU machine (through the device tool): N = 1, 2, 4, 8 copies
# time-sliced and under a private MPS daemon for ResNet-50 batch 16 and ViT-B/16 batch 8 training
# and one inference row; the same processes started by hand in the same call for comparison; and
# that no MPS daemon, folder or copy is left after the runs, nor after a SIGKILL of gpuscope.
#
#   bash bench/share_device.sh prepare          # here: .carry/usr (headers, static libs)
#   bash bench/share_device.sh build            # there (carry .carry): gpuscope + gpuscope-torch
#                                               # -> $OUT/bin.tar.gz (about 3 minutes)
#   bash bench/share_device.sh run BIN_TGZ      # there (carry .carry with BIN_TGZ inside): the
#                                               # runs -> $OUT/share.tar.gz (about 6 minutes)
#   bash bench/share_device.sh all              # there: build then run, one call (~9 minutes)
#
# SHARE_PARTS picks parts of `run` (default "rows hand kill"). Reads the GPU's settings; never
# changes power limits, clocks, MIG or compute mode; the MPS daemons are private ones (pipe and
# log folders under a run folder in /tmp), started and stopped by gpuscope or by this script.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
use_carried_libraries
res="$out/share"
mkdir -p "$res"
export GPUSCOPE_STATE_DIR="$res/state"

build() {
  build_cli_and_torch share
}

# name: the gpuscope-torch arguments of a row (windows sized so one alone takes ~0.3 s each).
row_args() {
  case "$1" in
    resnet50_train) echo "--model resnet50 --task train --mode amp_bf16 --batch 16 --windows 4 --steps 50" ;;
    vit_b16_train) echo "--model vit_b16 --task train --mode amp_bf16 --batch 8 --windows 4 --steps 30" ;;
    resnet50_infer) echo "--model resnet50 --task infer --mode amp_bf16 --batch 16 --windows 4 --steps 150" ;;
  esac
}

leftovers() {  # what must not be there: MPS processes, run folders, journals, copies
  echo "-- leftovers after $1:"
  pgrep -a -f "nvidia-cuda-mps" || echo "no nvidia-cuda-mps process"
  pgrep -a -f "bin/gpuscope-torch" || echo "no gpuscope-torch process"
  ls -d /tmp/gpuscope-share-* 2>/dev/null || echo "no /tmp/gpuscope-share-* folder"
  ls "$GPUSCOPE_STATE_DIR"/mps-* 2>/dev/null || echo "no MPS journal"
}

part_rows() {
  local name
  for name in resnet50_train vit_b16_train resnet50_infer; do
    local start=$(date +%s)
    # shellcheck disable=SC2046
    "$G" bench $(row_args "$name") --share "${SHARE_COUNTS:-1,2,4,8}" \
      --share-mode timeslice,mps --json "$res/$name.json" --store "$res/share.sqlite" \
      >"$res/$name.out" 2>"$res/$name.err"
    echo "== $name: exit $? after $(($(date +%s) - start)) s"
    cat "$res/$name.out"
    grep -E "warning|error" "$res/$name.err" | head -5
  done
  leftovers "the bench runs"
}

# hand N MPS(0|1): the resnet50 row N times, started by this script with the same barrier
# (GPUSCOPE_SHARE_GO_FILE created once every copy has printed its start line); under MPS with a
# daemon this script starts and stops. Prints the sum of the copies' samples/s.
hand() {
  local n="$1" mps="$2" dir i pids=() start
  dir=$(mktemp -d /tmp/hand-XXXXXX)
  if [ "$mps" = 1 ]; then
    export CUDA_MPS_PIPE_DIRECTORY="$dir/pipe" CUDA_MPS_LOG_DIRECTORY="$dir/log"
    mkdir -p "$CUDA_MPS_PIPE_DIRECTORY" "$CUDA_MPS_LOG_DIRECTORY"
    nvidia-cuda-mps-control -d
  fi
  start=$(date +%s.%N)
  for ((i = 0; i < n; i++)); do
    # shellcheck disable=SC2046
    GPUSCOPE_SHARE_GO_FILE="$dir/go" GPUSCOPE_SHARE_COPY=$i GPUSCOPE_SHARE_COPIES=$n \
      CUDA_DEVICE_ORDER=PCI_BUS_ID "$root/bin/gpuscope-torch" \
      $(row_args resnet50_train) >"$dir/copy$i.jsonl" 2>"$dir/copy$i.err" &
    pids+=($!)
  done
  for ((i = 0; i < 600; i++)); do
    [ "$(grep -l '"type":"start"' "$dir"/copy*.jsonl 2>/dev/null | wc -l)" -ge "$n" ] && break
    sleep 0.1
  done
  touch "$dir/go"
  wait "${pids[@]}"
  if [ "$mps" = 1 ]; then
    echo quit | nvidia-cuda-mps-control
    sleep 1
    unset CUDA_MPS_PIPE_DIRECTORY CUDA_MPS_LOG_DIRECTORY
  fi
  python3 - "$dir" "$n" "$mps" "$start" <<'EOF'
import json, sys, glob
d, n, mps, start = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
rates = []
for f in sorted(glob.glob(d + "/copy*.jsonl")):
    for line in open(f):
        try:
            j = json.loads(line)
        except ValueError:
            continue
        if j.get("type") == "result" and j.get("samples_per_second"):
            rates.append(j["samples_per_second"])
print(f"by hand: resnet50 train x{n} {'mps' if mps == '1' else 'timeslice'}: "
      f"{len(rates)} copies, total {sum(rates):.1f} samples/s (medians: "
      f"{', '.join(f'{r:.0f}' for r in rates)})")
EOF
  cp -r "$dir" "$res/hand-$n-$mps"
  rm -rf "$dir"
}

part_hand() {
  hand 1 0
  hand 4 0
  hand 4 1
  echo "gpuscope's totals for the same rows (resnet50_train.json):"
  python3 - "$res/resnet50_train.json" <<'EOF'
import json, sys
for s in json.load(open(sys.argv[1]))["shares"]:
    for t in s["trials"]:
        if t["copies"] in (1, 4):
            print(f"  {t['mode']} x{t['copies']}: total {t['total_samples_per_second']:.1f} "
                  f"(sum of the copies' medians {sum(r['samples_per_second'] or 0 for r in t['runs']):.1f})")
EOF
  leftovers "the runs by hand"
}

part_kill() {
  # gpuscope killed (SIGKILL) in the middle of an MPS trial: its guardian must end the copies,
  # stop the daemon and remove its folders; the next bench --share finds nothing left.
  # shellcheck disable=SC2046
  "$G" bench $(row_args resnet50_train | sed 's/--windows 4/--windows 40/') --share 4 \
    --share-mode mps >"$res/kill.out" 2>"$res/kill.err" &
  local pid=$! i
  for ((i = 0; i < 300; i++)); do
    grep -q "share mps x4" "$res/kill.err" 2>/dev/null && break
    sleep 0.1
  done
  sleep 12
  echo "== before the kill:"
  pgrep -a -f "nvidia-cuda-mps" | head -3
  pgrep -f "bin/gpuscope-torch" | wc -l
  kill -9 "$pid"
  wait "$pid" 2>/dev/null
  echo "gpuscope killed (exit $?)"
  sleep 20
  cat "$res/kill.err" | tail -5
  leftovers "a SIGKILL of gpuscope"
}

use_bin() {
  export GPUSCOPE_TORCH_BIN="$root/bin/gpuscope-torch"
  G="$root/bin/gpuscope"
}

run() {
  {
    date -u +"%Y-%m-%dT%H:%M:%SZ"
    nvidia-smi --query-gpu=name,driver_version,power.limit,compute_mode,mig.mode.current --format=csv
    command -v nvidia-cuda-mps-control || echo "no nvidia-cuda-mps-control"
  } 2>&1 | tee "$res/gpu.txt"
  leftovers "nothing yet (the machine as found)"
  use_bin
  for part in ${SHARE_PARTS:-rows hand kill}; do
    local start=$(date +%s)
    "part_$part" 2>&1 | tee "$res/part_$part.txt"
    echo "part $part: $(($(date +%s) - start)) s"
  done
  tar -czf "$out/share.tar.gz" -C "$out" share
}

case "${1:-}" in
  prepare) bash bench/monitor_device.sh prepare ;;
  build) build ;;
  run)
    tar -xzf "${2:?the bin.tar.gz from build}" -C "$root" || exit 1
    run
    ;;
  all) build && run ;;
  *)
    echo "usage: $0 prepare | build | run BIN_TGZ | all" >&2
    exit 2
    ;;
esac
