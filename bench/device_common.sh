# What the bench/*_device.sh scripts start with; each sources it right after
# `set -uo pipefail`:
#   source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
#
#   root   the repository, the working folder from here on
#   out    where results go: $OUT on the device machine (what comes back), ./out here
#   usr    .carry/usr: the Debian packages `prepare` carries (headers, static libraries)
#   use_carried_libraries                puts usr's libraries on LD_LIBRARY_PATH, if carried
#   configure_release DIR LOG [ARGS...]  cmake: Release for the H100 (sm_90), gpuscope-torch
#                                        on, no tests, against usr (SQLite from there); ARGS
#                                        come last and may override these
#   build_targets DIR LOG TARGETS...     cmake --build those targets
#   pack_bin FILES...                    the programs into ./bin, stripped, as $out/bin.tar.gz
#   build_cli_and_torch NAME             gpuscope and gpuscope-torch (Release) into
#                                        build/device-NAME, packed by pack_bin
#   build_cli_and_inject DIR LOG         gpuscope and libgpuscope_inject.so (RelWithDebInfo, no
#                                        gpuscope-torch) into DIR
#   build_torch_standalone DIR LOG       gpuscope-torch alone (workloads/torch, the machine's
#                                        torch) into DIR
# The build helpers print the log's errors (or its tail) and return 1 on failure.
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root" || exit 1
out="${OUT:-$root/out}"
mkdir -p "$out"
usr="$root/.carry/usr"

use_carried_libraries() {
  if [ -d "$usr" ]; then
    export LD_LIBRARY_PATH="$usr/lib/x86_64-linux-gnu:$usr/lib:${LD_LIBRARY_PATH:-}"
  fi
}

configure_release() {
  local build="$1" log="$2"
  shift 2
  cmake -S . -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_ARCHITECTURES=90 \
    -DGPUSCOPE_BUILD_TESTS=OFF -DGPUSCOPE_BUILD_TORCH=ON -DCMAKE_PREFIX_PATH="$usr" \
    -DSQLite3_INCLUDE_DIR="$usr/include" -DSQLite3_LIBRARY="$usr/lib/x86_64-linux-gnu/libsqlite3.a" \
    "$@" >"$log" 2>&1 || {
    tail -30 "$log"
    return 1
  }
}

build_targets() {
  local build="$1" log="$2"
  shift 2
  cmake --build "$build" --target "$@" -j "$(nproc)" >>"$log" 2>&1 || {
    grep -E "error" "$log" | head -30
    return 1
  }
}

pack_bin() {
  local t
  mkdir -p "$root/bin"
  for t in "$@"; do
    if [ -f "$t" ]; then cp "$t" "$root/bin/" && strip "$root/bin/$(basename "$t")"; fi
  done
  tar -czf "$out/bin.tar.gz" -C "$root" bin
}

build_cli_and_torch() {
  local build="$root/build/device-$1" log="$out/$1_build.log" start
  start=$(date +%s)
  configure_release "$build" "$log" || return 1
  build_targets "$build" "$log" gpuscope_cli gpuscope_torch || return 1
  pack_bin "$build/tools/gpuscope/gpuscope" "$build/workloads/torch/gpuscope-torch"
  echo "built in $(($(date +%s) - start)) s: $(du -sh "$out/bin.tar.gz" | cut -f1)"
}

# build_torch_standalone DIR LOG: gpuscope-torch alone from workloads/torch (the machine's torch
# and CUDA toolkit only; no carried libraries) into DIR/gpuscope-torch.
build_torch_standalone() {
  cmake -S workloads/torch -B "$1" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_CUDA_ARCHITECTURES=90 -DGPUSCOPE_BUILD_TESTS=OFF >"$2" 2>&1 || {
    tail -40 "$2"
    return 1
  }
  build_targets "$1" "$2" gpuscope_torch
}

build_cli_and_inject() {
  configure_release "$1" "$2" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DGPUSCOPE_BUILD_TORCH=OFF \
    -DGPUSCOPE_PLOTLY_JS="$root/.carry/plotly.min.js" &&
    build_targets "$1" "$2" gpuscope_cli gpuscope_inject
}
