#!/usr/bin/env bash
# Fails when a tracked C++/CUDA file differs from what .clang-format makes of it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
mapfile -t files < <(git ls-files '*.h' '*.cc' '*.cu' '*.cuh' 2>/dev/null || true)
((${#files[@]})) || exit 0
clang-format --dry-run --Werror "${files[@]}"
