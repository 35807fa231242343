#!/usr/bin/env bash
# Labelled trace recordings for `gpuscope diagnose`, in one device call:
#   1. builds gpuscope and libgpuscope_inject.so (Release; headers and static libs from .carry);
#   2. bench/diagnose_fixtures/flaws.py alone, once per flaw and for the healthy twin (the
#      program's own median step time: the measured gain of each fix): flaws_alone.txt;
#   3. every trace example and every flaw traced over a short window (6 steps after 10), kept
#      as record files + telemetry.jsonl + summary.json (no trace.json) in diagnose_runs.tar.gz;
#      when this gpuscope has `diagnose`, its JSON for each beside them.
#
#   bash bench/diagnose_fixtures_device.sh prepare   # here: .carry (as trace_cli_device.sh prepare)
#   bash bench/diagnose_fixtures_device.sh run       # there (carry .carry)
# Reads the GPU only: never changes a power limit, clocks, MIG, persistence or compute mode.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
build="$root/build/device-diagnose"
bin="$build/tools/gpuscope/gpuscope"
export NCCL_NVLS_ENABLE=0

build() {
  build_cli_and_inject "$build" "$out/build.log"
}

# NAME PROGRAM ARGS...: traced over a short window into runs/NAME.
record() {
  local name="$1"; shift
  local dir="$out/runs/$name"
  "$bin" trace --skip-steps 10 --steps 6 -o "$dir" -- python3 "$@" >"$dir.out" 2>"$dir.err"
  echo "$name: trace exit $? $(du -sh "$dir" | cut -f1)"
  rm -f "$dir/trace.json"
  if "$bin" diagnose --help >/dev/null 2>&1; then
    "$bin" diagnose --json "$dir" >"$dir.diagnose.json" 2>"$dir.diagnose.err"
    echo "$name: diagnose exit $?"
  fi
}

case "${1:-run}" in
  prepare) bash bench/trace_cli_device.sh prepare ;;
  run)
    nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm --format=csv | tee "$out/gpu.txt"
    build || exit 1
    mkdir -p "$out/runs"
    : >"$out/flaws_alone.txt"
    flaws="none fp32 cudnn_defaults unfused_optimizer pageable_copies small_batch"
    for f in $flaws; do
      b=128; [ "$f" = small_batch ] && b=8
      python3 bench/diagnose_fixtures/flaws.py --flaw "$f" --warmup 10 --steps 30 --batch "$b" \
        2>>"$out/flaws_alone.err" | tail -1 | tee -a "$out/flaws_alone.txt"
    done
    python3 bench/diagnose_fixtures/flaws.py --flaw none --warmup 10 --steps 30 --batch 8 \
      2>>"$out/flaws_alone.err" | tail -1 | sed 's/flaws_none/flaws_none_batch8/' | tee -a "$out/flaws_alone.txt"
    record healthy_train bench/trace_examples/healthy_train.py --warmup 5 --steps 20 --batch 128
    record data_starved bench/trace_examples/data_starved.py --warmup 3 --steps 16 --batch 128
    record sync_every_step bench/trace_examples/sync_every_step.py --warmup 5 --steps 20 --batch 128
    record launch_bound bench/trace_examples/launch_bound.py --warmup 20 --steps 40 --batch 32
    for f in $flaws; do
      b=128; [ "$f" = small_batch ] && b=8
      record "flaws_$f" bench/diagnose_fixtures/flaws.py --flaw "$f" --warmup 5 --steps 20 --batch "$b"
    done
    (cd "$out" && tar czf diagnose_runs.tar.gz runs && rm -rf runs)
    ls -la "$out"
    ;;
esac
