#!/usr/bin/env bash
# The README's main command: installs what is missing, builds gpuscope (and gpuscope-torch where
# LibTorch is available), and runs the main job: `gpuscope study -o study-<host>-<date>`, the
# whole picture of this machine's GPUs in one report (report.html in that directory).
# Any arguments are passed to gpuscope instead (e.g. `scripts/run.sh info --json`).
#
# On a machine without an NVIDIA GPU the study ends with exit code 3 and a message pointing at
# `gpuscope study --sample`, the report of a real H100 study that ships with gpuscope.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/setup-deps.sh

# gpuscope-torch (the bench's LibTorch workloads) is built when LibTorch is there: the torch
# wheel setup-deps.sh unpacked, or the torch of this python3.
deps="${GPUSCOPE_DEPS_DIR:-$root/.deps}"
torch=OFF
if [ -d "$deps/torch/torch/share/cmake/Torch" ] ||
  python3 -c "import torch.utils" >/dev/null 2>&1; then
  torch=ON
fi
cmake --preset release -DGPUSCOPE_BUILD_TORCH="$torch" >/dev/null
# Only the programs the commands run (the CLI, the burn worker, the injection library,
# gpuscope-torch), not the tests: scripts/test.sh builds and runs those.
cmake --build --preset release --target gpuscope_programs
gpuscope=build/release/tools/gpuscope/gpuscope
if (($#)); then exec "$gpuscope" "$@"; fi
if [ "$torch" = OFF ]; then
  echo "run.sh: LibTorch not found: gpuscope-torch is not built, so the study skips the bench" >&2
fi

dir="study-$(hostname -s 2>/dev/null || hostname)-$(date -u +%Y-%m-%d)"
args=(study -o "$dir")
# A study of today that was interrupted goes on where it stopped.
if [ -f "$dir/study.json" ]; then args=(study --resume "$dir"); fi
set +e
"$gpuscope" "${args[@]}"
rc=$?
set -e
case "$rc" in
  0) echo "run.sh: done. Open $dir/report.html (results store: $dir/gpuscope.db)." >&2 ;;
  1) echo "run.sh: the study finished, but some steps failed (listed above, logs in" \
    "$dir/steps/). Open $dir/report.html for everything that was measured." >&2 ;;
  3)
    echo "run.sh: no NVIDIA GPU here, so nothing was measured (exit code 3 is expected on" \
      "such a machine). See what a study gives with:" >&2
    echo "  $gpuscope study --sample -o gpuscope-sample-study" >&2
    ;;
  130) echo "run.sh: interrupted. Run scripts/run.sh again to resume $dir." >&2 ;;
  *) echo "run.sh: gpuscope study failed with exit code $rc (see the message above)." >&2 ;;
esac
exit "$rc"
