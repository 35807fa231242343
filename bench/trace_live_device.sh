#!/usr/bin/env bash
# Session 12's live checks of `gpuscope trace`/`diagnose` on the GPU machine, in one device call:
#   cases  the light trace's pieces that had run only on recordings (diagnose --light taking a
#          small copy to the host every step as the wait; the --light hint for a launch-bound
#          program slowed by tracing; a light summary's per-step waits null), and programs not
#          seen before: a torch.compile'd loop (Triton kernels through the driver API, forked
#          compile workers) in default mode and in reduce-overhead mode (CUDA graphs), each alone
#          and under `gpuscope trace`, its own step time against the trace's; and the example
#          programs' step times under trace against their own (steps); the window's rules on a
#          slow start and on slow steps (window); `gpuscope diagnose` on programs written apart
#          from its rules (unseen: bench/diagnose_unseen); torchrun data-parallel programs with a
#          straggler rank planted (ddp: bench/diagnose_unseen/ddp_*.py, two GPUs or more).
#   bash bench/trace_live_device.sh build   # there (carry .carry): gpuscope + the injection
#                                           # library -> $OUT/trace-bin.tar.gz
#   bash bench/trace_live_device.sh cases [TGZ]  # there: the checks -> $OUT/trace_live.txt
#                                           # (LIVE_CASES="light steps compiled window unseen ddp": the
#                                           # sets; default the first three)
# Reads the GPU only: never changes a power limit, clocks, MIG, persistence or compute mode.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
build="$root/build/device-cli"
# GPUSCOPE_BIN: a gpuscope built elsewhere (its injection library in the same build tree).
bin="${GPUSCOPE_BIN:-$build/tools/gpuscope/gpuscope}"
export NCCL_NVLS_ENABLE=0

# diagnose --json's top finding, its confidence and the notes, in one line.
summarize_diagnosis() {
  python3 -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    print("  no diagnosis:", e); sys.exit()
f = (d.get("findings") or [{}])[0]
print("  top finding:", f.get("id"), "| confidence:", f.get("confidence"), "| expected:",
      f.get("expected_speedup"))
print("  title:", f.get("title"))
for n in d.get("notes") or []:
    print("  note:", n[:300])' "$1"
}

# RUN OWN_OUT [WARMUP]: trace's summary.json (steps, per-step waits), its step time against the
# program's own (whole run, and the traced steps alone; WARMUP: the program's --warmup, 10).
summarize_trace() {
  python3 - "$1" "$2" "${3:-10}" <<'PY'
import json, statistics, sys
run, own_out, warmup = sys.argv[1], sys.argv[2], int(sys.argv[3])
try:
    s = json.load(open(f"{run}/summary.json"))
except (OSError, ValueError) as e:
    print("  no summary:", e); sys.exit()
own = None
for line in reversed(open(own_out).read().splitlines()):
    if line.startswith("{"):
        own = json.loads(line); break
steps = s.get("steps") or {}
per = steps.get("per_step") or []
print("  steps traced:", steps.get("traced"), "| source:", steps.get("source"),
      "| marked:", steps.get("marked"))
print("  syncs:", json.dumps(s.get("syncs")))
print("  per-step syncs/sync_s (first 3):", [(p.get("syncs"), p.get("sync_s")) for p in per[:3]])
if steps.get("median_s") and own:
    t, o = steps["median_s"], own["step_time_s_median"]
    print(f"  trace's median step {t*1e3:.2f} ms, program's own (whole run) {o*1e3:.2f} ms, "
          f"ratio {t/o:.3f}; untraced steps' median {1e3*(steps.get('untraced_median_s') or 0):.2f} ms "
          f"(before the window {1e3*(steps.get('untraced_before_median_s') or 0):.2f}, "
          f"after {1e3*(steps.get('untraced_after_median_s') or 0):.2f})")
    # The program's own CUDA-event step times over the traced steps: iteration warmup + k is
    # timed step k; the trace's step n is the run's iteration n.
    first, n = steps.get("first_traced", 0), steps.get("traced", 0)
    inside = [x for k, x in enumerate(own["step_times_s"]) if first <= warmup + k < first + n]
    if inside:
        o = statistics.median(inside)
        print(f"  the same steps by the program's own events: {o*1e3:.2f} ms ({len(inside)} steps), "
              f"trace / own {t/o:.3f}")
walls = [round(p.get("wall_s", 0) * 1e3, 2) for p in per]
if walls:
    print("  step walls ms: first", walls[:3], "last", walls[-3:], "max", max(walls),
          "| window_s", round(1e3 * ((s.get("window") or {}).get("seconds") or 0), 2))
g = s.get("gpu") or {}
print("  gpu:", {k: g.get(k) for k in ("busy_share", "kernels", "graph_kernels", "kernels_per_step",
                                        "mean_kernel_s", "devices")})
print("  top kernels:", [k.get("name", "")[:60] for k in (g.get("top_kernels") or [])[:3]])
for n in s.get("notes") or []:
    print("  note:", n[:300])
PY
}

light_cases() {
  local py=bench/trace_examples
  echo "== diagnose --light on sync_every_step.py (the wait taken from a small copy back)"
  "$bin" diagnose --light --json --skip-steps 10 --steps 20 -o "$out/runs/light-sync" -- \
    python3 "$py/sync_every_step.py" --steps 40 >"$out/light-sync.json" 2>"$out/light-sync.err"
  echo "  exit $?"; summarize_diagnosis "$out/light-sync.json"
  echo "== diagnose (default kinds) on launch_bound.py (the --light hint)"
  "$bin" diagnose --json --skip-steps 50 --steps 30 -o "$out/runs/launch-default" -- \
    python3 "$py/launch_bound.py" --steps 150 >"$out/launch-default.json" 2>"$out/launch-default.err"
  echo "  exit $?"; summarize_diagnosis "$out/launch-default.json"
  echo "== trace --light on sync_every_step.py (syncs not recorded, per-step waits null)"
  "$bin" trace --light --skip-steps 10 --steps 20 -o "$out/runs/light-trace" -- \
    python3 "$py/sync_every_step.py" --steps 40 >"$out/light-trace.out" 2>"$out/light-trace.err"
  echo "  exit $?"; summarize_trace "$out/runs/light-trace" "$out/light-trace.out"
}

# The example programs of bench/trace_examples under `gpuscope trace`: the trace's step time
# against the program's own over the same steps.
steps_cases() {
  local py=bench/trace_examples name args
  for spec in "healthy_train:--steps 80" "sync_every_step:--steps 80" \
    "data_starved:--steps 30 --warmup 3" "launch_bound:--steps 150 --warmup 20"; do
    name="${spec%%:*}" args="${spec#*:}"
    echo "== trace -- $name.py $args"
    # shellcheck disable=SC2086 # several arguments
    "$bin" trace --skip-steps 20 --steps 30 -o "$out/runs/steps-$name" -- python3 "$py/$name.py" \
      $args >"$out/steps-$name.out" 2>"$out/steps-$name.err"
    echo "  exit $?"
    local warmup=10
    [[ "$args" == *--warmup* ]] && warmup="${args##*--warmup }"
    summarize_trace "$out/runs/steps-$name" "$out/steps-$name.out" "$warmup"
  done
}

# The window's rules of session 12 (8433b96): a torch.compile'd loop whose first step comes after
# the time warm-up is waited for (the shim's steps-expected mark), and data_starved's slow steps
# are traced as many as asked, not cut by --duration.
window_cases() {
  local py=bench/trace_examples
  echo "== trace (default window) -- compiled_train.py: the window waits for the steps"
  "$bin" trace -o "$out/runs/window-compiled" -- python3 "$py/compiled_train.py" --steps 100 \
    >"$out/window-compiled.out" 2>"$out/window-compiled.err"
  echo "  exit $?"
  summarize_window "$out/runs/window-compiled"
  summarize_trace "$out/runs/window-compiled" "$out/window-compiled.out"
  echo "== trace --skip-steps 5 --steps 30 -- data_starved.py --steps 40: 30 slow steps traced"
  "$bin" trace --skip-steps 5 --steps 30 -o "$out/runs/window-starved" -- python3 \
    "$py/data_starved.py" --steps 40 --warmup 3 >"$out/window-starved.out" 2>"$out/window-starved.err"
  echo "  exit $?"
  summarize_window "$out/runs/window-starved"
  summarize_trace "$out/runs/window-starved" "$out/window-starved.out" 3
}

# Programs written apart from diagnose's rules and examples (bench/diagnose_unseen: other models,
# other libraries, other ways to plant a flaw): `gpuscope diagnose` on each, its first finding.
unseen_cases() {
  local py=bench/diagnose_unseen name
  for name in ${UNSEEN_PROGRAMS:-vit_healthy bert_collate vit_accum_item transformer_fp32 per_sample_loss python_metrics empty_cache_loop}; do
    echo "== diagnose -- $name.py"
    "$bin" diagnose --json -o "$out/runs/unseen-$name" -- python3 "$py/$name.py" \
      >"$out/unseen-$name.json" 2>"$out/unseen-$name.err"
    echo "  exit $?"
    summarize_diagnosis "$out/unseen-$name.json"
    python3 -c '
import json, sys
s = json.load(open(sys.argv[1] + "/summary.json"))
st, g = s.get("steps") or {}, s.get("gpu") or {}
print("  steps traced:", st.get("traced"), "median ms:", round(1e3 * (st.get("median_s") or 0), 2),
      "| untraced median ms:", round(1e3 * (st.get("untraced_median_s") or 0), 2),
      "(before", round(1e3 * (st.get("untraced_before_median_s") or 0), 2), "after",
      round(1e3 * (st.get("untraced_after_median_s") or 0), 2), ")",
      "| gpu busy:", g.get("busy_share"), "| kernels/step:", g.get("kernels_per_step"))' \
      "$out/runs/unseen-$name" 2>&1 | tail -1
  done
}

# Data-parallel programs from bench/diagnose_unseen (ddp_*.py under torchrun, dp_*.py alone with
# nn.DataParallel), on every visible GPU
# (at least two; skipped otherwise): `gpuscope diagnose` on the whole job, every finding's id and
# subjects (rank_imbalance and exposed_communication are job-wide: the first finding alone would
# not show both).
ddp_cases() {
  local py=bench/diagnose_unseen name gpus
  gpus=$(nvidia-smi -L | wc -l)
  if [ "$gpus" -lt 2 ]; then
    echo "== ddp: $gpus GPU(s) visible, skipped (needs two or more)"
    return
  fi
  for name in ${DDP_PROGRAMS:-ddp_rank0_logging ddp_uneven_lengths dp_module}; do
    # dp_*: one process on every GPU (nn.DataParallel); ddp_*: torchrun, a process per GPU.
    local launch=(torchrun --standalone --nproc-per-node "$gpus")
    [[ "$name" == dp_* ]] && launch=(python3)
    echo "== diagnose -- ${launch[*]} $name.py"
    "$bin" diagnose --json -o "$out/runs/ddp-$name" -- "${launch[@]}" "$py/$name.py" \
      >"$out/ddp-$name.json" 2>"$out/ddp-$name.err"
    echo "  exit $?"
    python3 -c '
import json, sys
try:
    d = json.load(open(sys.argv[1]))
except (OSError, ValueError) as e:
    print("  no diagnosis:", e); sys.exit()
for f in d.get("findings") or []:
    print("  finding:", f.get("id"), "|", f.get("severity"), "| expected:", f.get("expected_speedup"),
          "| subjects:", f.get("subjects"))
    for e in f.get("evidence") or []:
        print("     ", e.get("what"), round(e.get("value") or 0, 3), e.get("unit"))
for p in d.get("processes") or []:
    print("  rank:", p.get("subject"), "step ms", round(1e3 * (p.get("step_s") or 0), 2),
          "busy", round(p.get("gpu_busy_share") or 0, 3))' "$out/ddp-$name.json"
  done
}

# RUN: how the window opened and closed (summary.json's window).
summarize_window() {
  python3 -c 'import json, sys; print("  window:", json.dumps(json.load(open(sys.argv[1] + "/summary.json")).get("window")))' "$1" 2>&1
}

compiled_cases() {
  local py=bench/trace_examples mode
  for mode in default reduce-overhead; do
    echo "== compiled_train.py --compile-mode $mode: alone, then traced"
    python3 "$py/compiled_train.py" --compile-mode "$mode" --steps 100 \
      >"$out/compiled-$mode-alone.out" 2>"$out/compiled-$mode-alone.err"
    echo "  alone exit $?: $(tail -1 "$out/compiled-$mode-alone.out" | cut -c1-160)"
    tail -3 "$out/compiled-$mode-alone.err"
    "$bin" trace --skip-steps 30 --steps 30 -o "$out/runs/compiled-$mode" -- \
      python3 "$py/compiled_train.py" --compile-mode "$mode" --steps 100 \
      >"$out/compiled-$mode.out" 2>"$out/compiled-$mode.err"
    echo "  traced exit $?"; tail -4 "$out/compiled-$mode.err"
    summarize_trace "$out/runs/compiled-$mode" "$out/compiled-$mode.out"
    "$bin" diagnose --json -o "$out/runs/compiled-$mode-diag" --skip-steps 30 --steps 30 -- \
      python3 "$py/compiled_train.py" --compile-mode "$mode" --steps 100 \
      >"$out/compiled-$mode-diag.json" 2>"$out/compiled-$mode-diag.err"
    echo "  diagnose exit $?"; summarize_diagnosis "$out/compiled-$mode-diag.json"
  done
}

case "${1:-}" in
  build)
    build_cli_and_inject "$build" "$out/cli_build.log" || exit 1
    tar czf "$out/trace-bin.tar.gz" -C "$root" build/device-cli/tools/gpuscope/gpuscope \
      build/device-cli/src/inject/libgpuscope_inject.so python
    ;;
  cases)
    [ -n "${2:-}" ] && { tar xzf "$2" -C "$root" || exit 1; }
    [ -x "$bin" ] || { build_cli_and_inject "$build" "$out/cli_build.log" || exit 1; }
    # LIVE_CASES="light steps compiled": which sets (default all three)
    for set in ${LIVE_CASES:-light steps compiled}; do
      "${set}_cases" 2>&1 | tee -a "$out/trace_live.txt"
    done
    ;;
  *) echo "usage: $0 build | cases [TGZ]" >&2; exit 2 ;;
esac
