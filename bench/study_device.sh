#!/usr/bin/env bash
# `gpuscope study` on the GPU machine (through the device tool), in two calls of at most 10
# minutes: the first builds gpuscope, its burn worker and gpuscope-torch and runs a quick study
# that is interrupted (SIGINT) in the middle and resumed; the second runs the default study with
# the binaries the first one sent back, so that it has the whole call for itself.
#
#   bash bench/study_device.sh prepare        # here: .carry/usr (headers, static libs)
#   bash bench/study_device.sh build-quick    # there (carry .carry): build, $OUT/bin.tar.gz,
#                                             # quick study + resume -> $OUT/study-quick.tar.gz
#   bash bench/study_device.sh default BIN_TGZ  # there (carry .carry with BIN_TGZ inside):
#                                             # the default study -> $OUT/study-default.tar.gz
#   bash bench/study_device.sh resume BIN_TGZ STUDY_TGZ  # there: the default study cut by the
#                                             # call's limit, resumed -> $OUT/study-default.tar.gz
#   bash bench/study_device.sh build-default  # there: build, then the default study for the rest
#                                             # of the call (SIGINT before its limit) -> bin.tar.gz
#                                             # and study-default.tar.gz, for `resume`
#   bash bench/study_device.sh fields BIN_TGZ # there: info and a monitored 8 s fp16 burn, to check
#                                             # NVML's field values (throttle time, memory temp.)
#
# Files come back few at a time, so each study folder is sent as one archive. Reads the GPU's
# settings; never changes power limits, clocks, MIG, persistence or compute mode (the study's
# sweep step is skipped without --allow-power-changes, which is never passed here).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
use_carried_libraries

gpu_facts() {
  {
    date -u +"%Y-%m-%dT%H:%M:%SZ"
    nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,memory.total,persistence_mode,mig.mode.current --format=csv
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  } 2>&1 | tee "$out/study_gpu.txt"
}

# build [TARGETS...]: the three programs by default; `build gpuscope_cli` rebuilds only gpuscope
# (a minute) over binaries unpacked from an earlier call.
build() {
  local build="$root/build/device-study" start targets=("$@")
  ((${#targets[@]})) || targets=(gpuscope_cli gpuscope_burn_worker gpuscope_torch)
  start=$(date +%s)
  local plotly=()
  # The machine has no PyPI: the report's plotly.js comes from .carry (put there by `prepare`).
  [ -f "$root/.carry/plotly.min.js" ] && plotly=(-DGPUSCOPE_PLOTLY_JS="$root/.carry/plotly.min.js")
  configure_release "$build" "$out/study_build.log" "${plotly[@]}" || return 1
  build_targets "$build" "$out/study_build.log" "${targets[@]}" || return 1
  pack_bin "$build/tools/gpuscope/gpuscope" "$(find "$build" -name gpuscope-burn-worker -type f | head -1)" \
    "$build/workloads/torch/gpuscope-torch"
  echo "built ${targets[*]} in $(($(date +%s) - start)) s: $(du -sh "$out/bin.tar.gz" | cut -f1)"
}

use_bin() {
  export GPUSCOPE_BURN_WORKER="$root/bin/gpuscope-burn-worker" GPUSCOPE_TORCH_BIN="$root/bin/gpuscope-torch"
  G="$root/bin/gpuscope"
}

# timed_study NAME ARGS...: gpuscope ARGS into $out/study-h100 under the call's limit (SIGINT at
# STUDY_TIMEOUT, so the study saves its state), its console kept in the folder, sent as one archive.
timed_study() {
  local name="$1" start
  shift
  start=$(date +%s)
  timeout -s INT -k 40 "${STUDY_TIMEOUT:-570}" "$G" "$@" >"$out/study_$name.out" 2>"$out/study_$name.err"
  echo "$name study: exit $? after $(($(date +%s) - start)) s"
  tail -40 "$out/study_$name.out"
  grep -vE "^\s*$" "$out/study_$name.err" | tail -15
  mv "$out/study_$name.out" "$out/study_$name.err" "$out/study-h100/" 2>/dev/null
  tar -czf "$out/study-default.tar.gz" -C "$out" study-h100 && rm -rf "$out/study-h100"
}

case "${1:-}" in
  prepare)
    bash bench/monitor_device.sh prepare && bash bench/torch_jpeg_carry.sh &&
      cp .deps/python/plotly/package_data/plotly.min.js .carry/
    ;;
  build-quick)
    gpu_facts
    build || exit 1
    use_bin
    # Interrupt the quick study in its bench step, then resume: finished steps are not redone.
    start=$(date +%s)
    "$G" study --quick -o "$out/q" 2>"$out/study_quick_1.err" &
    pid=$!
    sleep "${STUDY_INTERRUPT_AFTER:-60}"
    kill -INT "$pid"
    wait "$pid"
    echo "first part: exit $? after $(($(date +%s) - start)) s (130 expected)"
    tail -4 "$out/study_quick_1.err"
    start=$(date +%s)
    "$G" study --resume "$out/q" >"$out/study_quick_2.out" 2>"$out/study_quick_2.err"
    echo "resume: exit $? after $(($(date +%s) - start)) s"
    grep -E "^study|skip|resum|done|\[" "$out/study_quick_2.err" | head -20
    cat "$out/study_quick_2.out"
    mv "$out"/study_quick_*.{err,out} "$out/q/" 2>/dev/null
    tar -czf "$out/study-quick.tar.gz" -C "$out" q && rm -rf "$out/q"
    ;;
  default)
    gpu_facts
    tar -xzf "${2:?the bin.tar.gz from build-quick}" -C "$root" || exit 1
    [ -n "${STUDY_REBUILD_CLI:-}" ] && { build gpuscope_cli || exit 1; }
    use_bin
    # shellcheck disable=SC2086 # STUDY_LEVEL is empty or one flag
    timed_study default study ${STUDY_LEVEL:-} -o "$out/study-h100"
    ;;
  resume)
    # The default study cut by the call's limit (SIGINT at STUDY_TIMEOUT): go on from the folder
    # the `default` call sent back. Its bench step keeps the rows it finished (bench --resume).
    gpu_facts
    tar -xzf "${2:?the bin.tar.gz from build-quick}" -C "$root" || exit 1
    tar -xzf "${3:?the study-default.tar.gz from default}" -C "$out" || exit 1
    use_bin
    timed_study resume study --resume "$out/study-h100"
    ;;
  build-default)
    # One call: build (2-3 minutes), then the default study until STUDY_CALL_LIMIT (585 s) minus
    # the 40 s the study may take to save its state after SIGINT.
    call_start=$(date +%s)
    gpu_facts
    build || exit 1
    use_bin
    STUDY_TIMEOUT=$((${STUDY_CALL_LIMIT:-585} - 45 - ($(date +%s) - call_start)))
    timed_study default study -o "$out/study-h100"
    ;;
  fields)
    tar -xzf "${2:?the bin.tar.gz from build-quick}" -C "$root" || exit 1
    use_bin
    "$G" info --json >"$out/fields_info.json" 2>"$out/fields_info.err"
    echo "info: exit $?"
    "$G" monitor --interval 100 --jsonl "$out/fields_monitor.jsonl" --json -- \
      "$G" burn --precision fp16 --duration 8 --no-memory --no-host-link \
      >"$out/fields_monitor.json" 2>"$out/fields_monitor.err"
    echo "monitored burn: exit $?"
    tail -3 "$out/fields_monitor.err"
    ;;
  *)
    echo "usage: $0 prepare | build-quick | build-default | default BIN_TGZ | resume BIN_TGZ STUDY_TGZ | fields BIN_TGZ" >&2
    exit 2
    ;;
esac
