#!/usr/bin/env bash
# The README's test command: installs what is missing, builds with warnings as errors, checks
# formatting, and runs every test through CTest (which prints its summary).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
scripts/setup-deps.sh
cmake --preset ci >/dev/null
cmake --build --preset ci
scripts/check-format.sh
ctest --preset ci -j "$(nproc)" "$@"
