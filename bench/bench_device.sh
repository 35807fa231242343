#!/usr/bin/env bash
# `gpuscope bench --preset seeds` on the GPU machine (through the device tool): builds the
# gpuscope CLI and gpuscope-torch there, runs the seeds matrix under the sampler (JSON, store,
# console), then one row with gpuscope-torch alone, to check that the two agree within noise
# (the sampler costs nothing visible).
#
#   bash bench/bench_device.sh prepare   # here, before the device calls: fills .carry/ (the
#                                        # -dev headers gpuscope builds with; see monitor_device.sh)
#   bash bench/bench_device.sh build     # there (carry .carry): both builds, ~5 min the first time
#   bash bench/bench_device.sh run       # there: the seeds matrix (~6 min) and the alone-check
#   bash bench/bench_device.sh all       # build then run (only when the builds are already warm)
#
# Environment: BENCH_PRESET (seeds), BENCH_ARGS (extra `gpuscope bench` options, e.g.
# "--windows 2"). Writes under $OUT: bench_gpu.txt, bench_build.log, bench_seeds.json,
# bench.db, bench_seeds.txt (console), bench_seeds.err (progress), bench_alone.jsonl,
# bench_agreement.txt. Reads the GPU's settings; never changes power limits, clocks, MIG,
# persistence or compute mode.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
what="${1:-all}"
cli_build="$root/build/device"
torch_build="$root/build/torch-device"
cli="$cli_build/tools/gpuscope/gpuscope"
torch="$torch_build/gpuscope-torch"

build() {
  local start usr="$root/.carry/usr" extra=()
  start=$(date +%s)
  if [ -d "$usr" ]; then
    extra=(-DCMAKE_PREFIX_PATH="$usr" -DSQLite3_INCLUDE_DIR="$usr/include"
      -DSQLite3_LIBRARY="$usr/lib/x86_64-linux-gnu/libsqlite3.a")
    export LD_LIBRARY_PATH="$usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
  fi
  if [ ! -f "$cli_build/build.ninja" ]; then
    cmake -S . -B "$cli_build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo \
      -DCMAKE_CUDA_ARCHITECTURES=90 -DGPUSCOPE_BUILD_TESTS=OFF "${extra[@]}" \
      >"$out/bench_configure.log" 2>&1 || { tail -30 "$out/bench_configure.log"; return 1; }
  fi
  cmake --build "$cli_build" --target gpuscope_cli -j "$(nproc)" >"$out/bench_build.log" 2>&1 ||
    { grep -E "error" "$out/bench_build.log" | head -30; return 1; }
  echo "built gpuscope in $(($(date +%s) - start)) s"
  # gpuscope-torch as its own project against the machine's torch (as bench/torch_device.sh).
  if [ ! -f "$torch_build/build.ninja" ]; then
    cmake -S workloads/torch -B "$torch_build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DGPUSCOPE_BUILD_TESTS=OFF -DCMAKE_PREFIX_PATH="$usr" >>"$out/bench_build.log" 2>&1 ||
      { tail -30 "$out/bench_build.log"; return 1; }
  fi
  cmake --build "$torch_build" >>"$out/bench_build.log" 2>&1 ||
    { grep -E "error|Error" "$out/bench_build.log" | head -30; return 1; }
  echo "built gpuscope and gpuscope-torch in $(($(date +%s) - start)) s"
}

run() {
  [ -x "$cli" ] && [ -x "$torch" ] || { echo "build first: bash bench/bench_device.sh build"; return 1; }
  [ -d "$root/.carry/usr" ] && export LD_LIBRARY_PATH="$root/.carry/usr/lib/x86_64-linux-gnu:${LD_LIBRARY_PATH:-}"
  {
    date -u +"%Y-%m-%dT%H:%M:%SZ"
    nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,memory.total,persistence_mode,mig.mode.current --format=csv
    python3 -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda)'
  } 2>&1 | tee "$out/bench_gpu.txt"
  local preset="${BENCH_PRESET:-seeds}" start
  echo "== gpuscope bench --preset $preset ${BENCH_ARGS:-}"
  "$cli" bench --preset "$preset" --list | tail -1
  start=$(date +%s)
  rm -f "$out/bench.db"
  # BENCH_TIMEOUT: Ctrl-C (SIGINT) after that many seconds; bench keeps the finished rows.
  local limit=()
  [ -n "${BENCH_TIMEOUT:-}" ] && limit=(timeout -s INT -k 60 "$BENCH_TIMEOUT")
  # shellcheck disable=SC2086
  "${limit[@]}" "$cli" bench --preset "$preset" --torch-bin "$torch" --json "$out/bench_seeds.json" \
    --store "$out/bench.db" ${BENCH_ARGS:-} >"$out/bench_seeds.txt" 2>"$out/bench_seeds.err"
  echo "bench exit code $? after $(($(date +%s) - start)) s"
  cat "$out/bench_seeds.txt"
  tail -5 "$out/bench_seeds.err"

  # The same row as the bench's, gpuscope-torch alone (no sampler, no parent), right after.
  echo "== gpuscope-torch alone: vit_b16 train amp_bf16 (the seeds row's settings)"
  for i in 1 2; do
    "$torch" --model vit_b16 --task train --mode amp_bf16 --warmup 5 --windows 3 --steps 10 \
      --quiet >"$out/bench_alone_$i.jsonl"
  done
  python3 - "$out" <<'PY' | tee "$out/bench_agreement.txt"
import json, sys
out = sys.argv[1]
doc = json.load(open(f"{out}/bench_seeds.json"))
row = next(r for r in doc["rows"] if r["model"] == "vit_b16" and r["task"] == "train"
           and r["mode"] == "amp_bf16" and r["variant"] == "")
alone = []
for i in (1, 2):
    for line in open(f"{out}/bench_alone_{i}.jsonl"):
        j = json.loads(line)
        if j.get("type") == "result":
            alone.append(j["samples_per_second"])
b = row["samples_per_second"]
print(f"bench row: {b:.1f} samples/s (spread {row['step_relative_spread']:.3f}); "
      f"alone: {', '.join(f'{a:.1f}' for a in alone)}")
for a in alone:
    print(f"  bench / alone = {b / a:.4f}")
print(f"  J/sample {row['joules_per_sample']}, power {row['power_avg_w']} W, "
      f"SM {row['sm_activity']}, tensor {row['tensor_activity']}, guard {row['guard']}")
PY
}

case "$what" in
  prepare) bash bench/monitor_device.sh prepare && bash bench/torch_jpeg_carry.sh ;;
  build) build ;;
  run) run ;;
  all) build && run ;;
  *) echo "usage: $0 prepare|build|run|all"; exit 2 ;;
esac
