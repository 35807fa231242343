#!/usr/bin/env bash
# The input paths on the GPU machine: ResNet-50 AMP bf16 training fed from synthetic GPU
# batches, from host batches (loader workers 0 -> 8, pageable -> pinned, blocking ->
# non_blocking, one change per row) and from JPEG files decoded by 8 workers, as one
# `gpuscope bench` matrix (guard off: the guard does not depend on the input path).
#
#   bash bench/bench_inputs_device.sh BIN_TGZ   # there, carrying .carry with the bin.tar.gz that
#                                             # bench/study_device.sh build-quick sent back
# Writes under $OUT: inputs.json (the bench document), inputs.txt (console), inputs.err.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
use_carried_libraries
tar -xzf "${1:?bin.tar.gz}" -C "$root" || exit 1
G="$root/bin/gpuscope"
T="$root/bin/gpuscope-torch"
images=/tmp/gpuscope-images
"$T" --make-images "$images" --image-count "${IMAGES:-4096}" --image-classes 10 >/dev/null ||
  echo "could not generate JPEGs (built without libjpeg?)"
"$G" bench --torch-bin "$T" --model resnet50 --task train --mode amp_bf16 --guard off \
  --warmup 5 --windows 3 --steps 20 \
  --input synthetic \
  --input host:workers=0,pinned=off,non_blocking=off \
  --input host:workers=8,pinned=off,non_blocking=off \
  --input host:workers=8,pinned=on,non_blocking=off \
  --input host:workers=8,pinned=on,non_blocking=on \
  --input "jpeg:data=$images,workers=8,pinned=on,non_blocking=on" \
  --input "jpeg:data=$images,workers=14,pinned=on,non_blocking=on" \
  --json "$out/inputs.json" >"$out/inputs.txt" 2>"$out/inputs.err"
echo "bench exit code $?"
cat "$out/inputs.txt"
tail -3 "$out/inputs.err"
