#!/usr/bin/env bash
# Issue #19's check that the observation core changed no answer: `gpuscope study --quick` with the
# programs of the tree before the core (commit dd4b4f7, 2026-11-25, the last before the analysis
# Finding and src/observe) and with this tree's, on the same GPU in one call.
#
#   bash bench/core_compare_device.sh prepare       # here: .carry/old-src.tar.gz (git archive)
#   bash bench/core_compare_device.sh build         # there (carry .carry): both builds ->
#       # $OUT/bin.tar.gz with bin/ (this tree: gpuscope, its burn worker, gpuscope-torch, the
#       # injection library) and $OUT/bin-old.tar.gz with bin-old/ (the old tree's programs)
#   bash bench/core_compare_device.sh build-study   # there: both of these in one call (~8 min)
#   bash bench/core_compare_device.sh build-new-study OLD_TGZ  # there: this tree built, then study
#   bash bench/core_compare_device.sh study BIN_TGZ OLD_TGZ # there (carry .carry with both):
#       # the quick study with the new programs, then the old, then the new again (a drift in the
#       # GPU's temperature shows as a difference between the two new runs) ->
#       # $OUT/core-compare.tar.gz (the three study folders), core_compare.out (the table)
#
# CORE_OLD_COMMIT picks another old commit for `prepare`; CORE_OLD_FIRST=1 runs the old study
# first; CORE_ONE_NEW=1 leaves out the second new study. Reads the GPU's settings only; the
# study's sweep step is skipped (no --allow-power-changes).
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
use_carried_libraries

# build_tree SRC BUILD_DIR BIN_DIR: gpuscope, the burn worker and gpuscope-torch of SRC (and the
# injection library where the tree has one) into BIN_DIR.
build_tree() {
  local src="$1" build="$2" bin="$3" plotly=() targets=(gpuscope_cli gpuscope_burn_worker gpuscope_torch)
  [ -f "$root/.carry/plotly.min.js" ] && plotly=(-DGPUSCOPE_PLOTLY_JS="$root/.carry/plotly.min.js")
  [ -d "$src/src/inject" ] && targets+=(gpuscope_inject)
  (cd "$src" && configure_release "$build" "$out/$(basename "$bin")_build.log" "${plotly[@]}" &&
    build_targets "$build" "$out/$(basename "$bin")_build.log" "${targets[@]}") || return 1
  mkdir -p "$bin"
  local f
  for f in "$build/tools/gpuscope/gpuscope" "$(find "$build" -name gpuscope-burn-worker -type f | head -1)" \
    "$build/workloads/torch/gpuscope-torch" "$build/src/inject/libgpuscope_inject.so"; do
    if [ -f "$f" ]; then cp "$f" "$bin/" && strip "$bin/$(basename "$f")"; fi
  done
}

# study NAME BIN_DIR: gpuscope study --quick with the programs of BIN_DIR into $out/cmp/NAME.
study() {
  local name="$1" bin="$2" start temp
  temp=$(nvidia-smi --query-gpu=temperature.gpu --format=csv,noheader -i 0)
  start=$(date +%s)
  GPUSCOPE_BURN_WORKER="$bin/gpuscope-burn-worker" GPUSCOPE_TORCH_BIN="$bin/gpuscope-torch" \
    timeout -s INT -k 30 "${CORE_STUDY_TIMEOUT:-240}" "$bin/gpuscope" study --quick -o "$out/cmp/$name" \
    >"$out/cmp/$name.out" 2>"$out/cmp/$name.err"
  echo "$name: exit $? after $(($(date +%s) - start)) s (the GPU at $temp °C when it started)"
}

case "${1:-}" in
  prepare)
    git archive "${CORE_OLD_COMMIT:-dd4b4f7}" | gzip >.carry/old-src.tar.gz && ls -la .carry/old-src.tar.gz
    ;;
  build)
    start=$(date +%s)
    mkdir -p "$root/build/old-src" && tar -xzf .carry/old-src.tar.gz -C "$root/build/old-src" || exit 1
    build_tree "$root" "$root/build/cmp-new" "$root/bin" &
    new=$!
    build_tree "$root/build/old-src" "$root/build/cmp-old" "$root/build/bin-old"
    old=$?
    wait "$new"
    echo "builds: new exit $?, old exit $old, $(($(date +%s) - start)) s"
    # Each archive under the 16 MiB a file that comes back may have.
    tar -czf "$out/bin.tar.gz" -C "$root" bin && tar -czf "$out/bin-old.tar.gz" -C "$root/build" bin-old &&
      ls -la "$out"/bin*.tar.gz
    ;;
  study | build-study | build-new-study)
    if [ "$1" = build-study ]; then  # both in one call: the archives just built
      bash "$0" build || exit 1
      set -- study "$out/bin.tar.gz" "$out/bin-old.tar.gz"
    elif [ "$1" = build-new-study ]; then  # this tree built, the old programs from an archive
      old_tgz="${2:?the bin-old.tar.gz of an earlier build}"
      build_tree "$root" "$root/build/cmp-new" "$root/bin" || exit 1
      tar -czf "$out/bin.tar.gz" -C "$root" bin
      set -- study "$out/bin.tar.gz" "$old_tgz"
    fi
    tar -xzf "${2:?the bin.tar.gz from build}" -C "$root" || exit 1
    mkdir -p "$root/build" && tar -xzf "${3:?the bin-old.tar.gz from build}" -C "$root/build" || exit 1
    nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,temperature.gpu --format=csv |
      tee "$out/core_gpu.txt"
    mkdir -p "$out/cmp"
    if [ -n "${CORE_OLD_FIRST:-}" ]; then  # the other order: what running first costs
      study old "$root/build/bin-old"
      study new-1 "$root/bin"
    else
      study new-1 "$root/bin"
      study old "$root/build/bin-old"
    fi
    [ -n "${CORE_ONE_NEW:-}" ] || study new-2 "$root/bin"
    python3 bench/core_compare.py "$out/cmp" | tee "$out/core_compare.out"
    tar -czf "$out/core-compare.tar.gz" -C "$out" cmp && rm -rf "$out/cmp"
    ;;
  *)
    echo "usage: $0 prepare | build | build-study | study BIN_TGZ OLD_TGZ" >&2
    exit 2
    ;;
esac
