#!/usr/bin/env bash
# Two gpuscope-torch builds side by side on a machine with several GPUs, in one device call
# (carry OLD_TGZ, a bin.tar.gz with bin/gpuscope-torch from an earlier call):
#   bash bench/builds_ab_device.sh OLD_TGZ
# "new" is built here from the work tree (standalone, ~60 s). Then, on all visible GPUs:
#   1. ViT-B/16's guard (batch 32 a GPU, 30 steps, every loss) through each build, for each
#      ;-separated argument list of BUILDS_AB_GUARD (default: copy engines eager and with CUDA
#      graphs, fp32 and bf16 communication; set and empty: none): whether the builds' losses
#      are the same to the bit;
#   2. BUILDS_AB_ROUNDS (default 2) rounds of one 1-GPU run (new) and an N-GPU run of each build
#      (old first in even rounds, new first in odd ones), for each model:batch of
#      BUILDS_AB_MODELS (default vit_b16:160): samples/s, efficiency against the median of the
#      1-GPU runs.
# -> $OUT/builds_ab.out (both tables), builds_ab.jsonl (rank 0's results), builds_ab_build.log
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
export NCCL_NVLS_ENABLE=0
tar -xzf "${1:?OLD_TGZ: a bin.tar.gz with bin/gpuscope-torch}" -C /tmp || exit 1
old=/tmp/bin/gpuscope-torch
start=$(date +%s)
build_torch_standalone "$root/build/torch-builds-ab" "$out/builds_ab_build.log" || exit 1
new="$root/build/torch-builds-ab/gpuscope-torch"
echo "new built in $(($(date +%s) - start)) s"
gpus=$(nvidia-smi -L | wc -l)
jsonl="$out/builds_ab.jsonl"

# one TAG BINARY ARGS...: the run's rank-0 result, tagged, into builds_ab.jsonl.
one() {
  local tag=$1 binary=$2
  shift 2
  timeout -k 10 240 "$binary" "$@" 2>>"$out/builds_ab.err" |
    python3 bench/rank0_results.py tag "$tag" >>"$jsonl"
  echo "$tag -> done at $(($(date +%s) - start)) s"
}

guard=(--model vit_b16 --mode amp_bf16 --batch 32 --task guard --guard-steps 30
  --world-size "$gpus" --dist-timeout 120 --quiet)
IFS=';' read -r -a cases <<<"${BUILDS_AB_GUARD---all-reduce copy-engine --graphs off;--all-reduce copy-engine --graphs on;--all-reduce copy-engine --grad-comm bf16}"
for c in "${cases[@]}"; do
  # shellcheck disable=SC2086 # several words
  one "guard old $c" "$old" "${guard[@]}" $c
  # shellcheck disable=SC2086
  one "guard new $c" "$new" "${guard[@]}" $c
done
for spec in ${BUILDS_AB_MODELS:-vit_b16:160}; do
  IFS=: read -r model batch <<<"$spec"
  args=(--model "$model" --mode amp_bf16 --batch "$batch" --warmup 10 --windows 5 --steps 10 --quiet)
  for ((r = 0; r < ${BUILDS_AB_ROUNDS:-2}; r++)); do
    one "$model 1 GPU" "$new" "${args[@]}"
    # Which build goes first alternates: the second of a pair runs on warmer GPUs.
    order=(old new)
    ((r % 2)) && order=(new old)
    for b in "${order[@]}"; do
      binary=$old
      [ "$b" = new ] && binary=$new
      one "$model $b" "$binary" "${args[@]}" --world-size "$gpus" --dist-timeout 120
    done
  done
  one "$model 1 GPU" "$new" "${args[@]}"
done

python3 - "$jsonl" "$gpus" <<'PY' | tee "$out/builds_ab.out"
import json, statistics, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
n = int(sys.argv[2])
guards = {r["tag"]: r["loss"]["values"] for r in rows if r["tag"].startswith("guard ")}
for tag, losses in guards.items():
    if not tag.startswith("guard old "):
        continue
    case = tag[len("guard old "):]
    new = guards.get("guard new " + case)
    if new is None:
        print(f"guard {case}: no new run")
        continue
    worst = max(abs(a - b) / abs(b) for a, b in zip(new, losses))
    print(f"guard {case:55} steps {len(losses)}  last old {losses[-1]:.6f} new {new[-1]:.6f}"
          f"  same to the bit: {new == losses}  max |rel. diff| {worst:.2e}")
models = sorted({r["tag"].split()[0] for r in rows if not r["tag"].startswith("guard ")})
for model in models:
    ones = [r["samples_per_second"] for r in rows if r["tag"] == f"{model} 1 GPU"]
    base = statistics.median(ones) if ones else None
    print(f"{model}: 1 GPU median of {len(ones)}: {base:.1f} ({min(ones):.1f}-{max(ones):.1f})"
          if base else f"{model}: no 1-GPU run")
    for build in ("old", "new"):
        rates = [r["samples_per_second"] for r in rows if r["tag"] == f"{model} {build}"]
        effs = ", ".join(f"{100 * x / (n * base):.1f} %" for x in rates) if base else "-"
        print(f"  {build} at {n} GPUs: " + ", ".join(f"{x:.1f}" for x in rates) + f"  ({effs})")
PY
