#!/usr/bin/env bash
# `gpuscope sweep --dry-run` on the GPU machine (through the device tool). ONLY dry runs: the
# GPU's settings must never change there. A dry run prints the plan, the prior limits and the
# privilege check, and measures each workload at the current limit only; it calls no NVML setter.
# This script checks that too: the GPU's power limit, application clocks, persistence, compute
# and MIG mode are read before and after and must be the same.
#
#   bash bench/sweep_device.sh prepare        # here: .carry/usr (headers, static libraries)
#   bash bench/sweep_device.sh build          # there (carry .carry): gpuscope + gpuscope-torch
#                                             # -> $OUT/bin.tar.gz (about 3 minutes)
#   bash bench/sweep_device.sh run            # there: the dry runs (about 4-5 minutes)
#   bash bench/sweep_device.sh all            # there: build, then run (about 7-8 minutes)
#
# SWEEP_BIN_DIR=DIR: `run` takes gpuscope and gpuscope-torch from DIR (a prebuilt bin/ that has
# `gpuscope sweep --model` and `gpuscope-torch --windows 0`, i.e. built from this branch) instead
# of ./bin from `build`.
# Writes under $OUT: sweep_device.txt (GPU, settings before/after, summary), sweep_build.log,
# sweep_row.{out,json} (ViT-B/16 amp_bf16 training, batch 64), sweep_clocks.{out,json} (the same
# row with --knob clocks: the lockable SM clocks and the plan in MHz; nothing is locked) and
# sweep_seeds.{out,json} (--preset seeds: ViT-B/16 train and infer in every precision mode, the
# sweep's own warm-up off; about 2-3 minutes).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
use_carried_libraries
# A fresh journal folder: the start of every gpuscope command restores the journals it finds
# there, and there must be none to act on.
export GPUSCOPE_STATE_DIR="$(mktemp -d /tmp/gpuscope-sweep-state.XXXXXX)"
facts="$out/sweep_device.txt"

build() {
  build_cli_and_torch sweep
}

settings() {
  nvidia-smi --query-gpu=index,name,power.limit,power.default_limit,power.min_limit,power.max_limit,clocks.applications.graphics,clocks.applications.memory,persistence_mode,compute_mode,mig.mode.current --format=csv,noheader
  nvidia-smi -q -d CLOCK | grep -iA3 "locked\|Applications Clocks" || true
}

# dry NAME ARGS...: one dry run, its console and JSON kept.
dry() {
  local name="$1" start rc
  shift
  start=$(date +%s)
  timeout -k 10 480 "$bin/gpuscope" sweep --dry-run --gpu 0 --torch-bin "$bin/gpuscope-torch" "$@" \
    --json "$out/sweep_$name.json" >"$out/sweep_$name.out" 2>&1
  rc=$?
  echo "gpuscope sweep --dry-run $* -> exit $rc in $(($(date +%s) - start)) s" | tee -a "$facts"
  grep -E "GPU 0|plan|privilege|journal|lock|skipped|stopped|samples/s|  [0-9]+ (W|MHz) " "$out/sweep_$name.out" |
    head -60 | tee -a "$facts"
}

run() {
  bin="${SWEEP_BIN_DIR:-$root/bin}"
  for p in gpuscope gpuscope-torch; do
    [ -x "$bin/$p" ] || { echo "no $bin/$p: run 'build' first or set SWEEP_BIN_DIR" >&2; return 1; }
  done
  {
    date -u +"%Y-%m-%dT%H:%M:%SZ"
    nvidia-smi -L
    echo "-- settings before:"
  } >"$facts"
  settings >"$out/settings_before.txt" 2>&1
  cat "$out/settings_before.txt" >>"$facts"
  local parts=" ${SWEEP_PARTS:-row clocks seeds} "  # SWEEP_PARTS: which dry runs
  [[ "$parts" == *" row "* ]] &&
    dry row --model vit_b16 --task train --mode amp_bf16 --batch 64 --window 2 --warmup 3 --windows 2
  [[ "$parts" == *" clocks "* ]] &&
    dry clocks --knob clocks --model vit_b16 --task train --mode amp_bf16 --batch 64 --window 2 \
      --warmup 3 --windows 2
  [[ "$parts" == *" seeds "* ]] && dry seeds --preset seeds --window 1 --warmup 0 --windows 2
  settings >"$out/settings_after.txt" 2>&1
  {
    echo "-- settings after:"
    cat "$out/settings_after.txt"
    if diff "$out/settings_before.txt" "$out/settings_after.txt" >/dev/null; then
      echo "SETTINGS UNCHANGED"
    else
      echo "SETTINGS CHANGED:"
      diff "$out/settings_before.txt" "$out/settings_after.txt"
    fi
    echo "journal folder $GPUSCOPE_STATE_DIR: $(ls -A "$GPUSCOPE_STATE_DIR" | wc -l) files"
    pgrep -a -f "gpuscope-torch" || echo "no gpuscope-torch process left"
  } | tee -a "$facts"
  rm -f "$out/settings_before.txt" "$out/settings_after.txt"
}

case "${1:-}" in
  prepare) bash bench/monitor_device.sh prepare ;;
  build) build ;;
  run) run ;;
  all) build && run ;;
  *)
    echo "usage: $0 prepare | build | run | all" >&2
    exit 2
    ;;
esac
