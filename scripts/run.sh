#!/usr/bin/env bash
# The README's main command: installs what is missing, builds, and runs gpuscope.
# With no arguments it runs the main job; any arguments are passed to gpuscope instead.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/setup-deps.sh
cmake --preset release >/dev/null
cmake --build --preset release
if (($#)); then exec build/release/tools/gpuscope/gpuscope "$@"; fi
exec build/release/tools/gpuscope/gpuscope info
