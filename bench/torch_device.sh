#!/usr/bin/env bash
# gpuscope-torch on the GPU machine (through the device tool). Builds workloads/torch on its own
# against the machine's torch (python3's torch.utils.cmake_prefix_path: nothing is installed or
# carried), then runs bench/torch_vs_timm.py, which times our workloads and the Python reference
# models (timm, torchvision, a plain PyTorch GPT-2) in the same call with the same batch sizes
# and prints the ratios.
#
#   bash bench/torch_device.sh PLAN [torch_vs_timm.py options]
#     TORCH_BIN=PATH: use this gpuscope-torch instead of building one
#     TORCH_GPU_TESTS=ON: also build tests/torch's model tests and run their GPU cases
#     PLAN: smoke | key | vit_train | vit_infer | vit | others | pending | kernels | fp8 |
#           patch_memory | batch_auto | gaps | all (see
#           torch_vs_timm.py; pending: what changed since the last H100 calls), or
#           profile: bench/vit_infer_profile.py alone (timm ViT-B/16 bf16 inference by kernel kind)
#
# Writes under $OUT: torch_gpu.txt (GPU, driver, versions, date), torch_build.log,
# torch_vs_timm.log (every gpuscope-torch command and its JSON lines), torch_vs_timm.json,
# torch_vs_timm.out (the console). Reads the GPU's settings, never changes them.
set -uo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/device_common.sh"
plan="${1:-key}"
shift || true
build="$root/build/torch-device"

{
  date -u +"%Y-%m-%dT%H:%M:%SZ"
  nvidia-smi --query-gpu=name,driver_version,power.limit,clocks.max.sm,clocks.max.mem,memory.total,persistence_mode,mig.mode.current --format=csv
  python3 -c 'import torch, timm, torchvision; print("torch", torch.__version__, "cuda", torch.version.cuda, "cudnn", torch.backends.cudnn.version(), "timm", timm.__version__, "torchvision", torchvision.__version__)'
  nproc
} 2>&1 | tee "$out/torch_gpu.txt"

if [ "$plan" = profile ]; then
  # Where timm's ViT-B/16 bf16 inference spends its time (no gpuscope-torch build needed).
  PYTHONUNBUFFERED=1 python3 bench/vit_infer_profile.py --out "$out" "$@" 2>&1 | tee "$out/vit_infer_profile.out"
  exit "${PIPESTATUS[0]}"
fi

start=$(date +%s)
if [ -n "${TORCH_BIN:-}" ]; then
  # A gpuscope-torch built earlier (bench/study_device.sh's bin.tar.gz): no build here.
  bin="$TORCH_BIN"
  echo "using $bin (no build)"
else
  bin="$build/gpuscope-torch"
  if [ ! -f "$build/build.ninja" ]; then
    cmake -S workloads/torch -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
      -DGPUSCOPE_BUILD_TESTS="${TORCH_GPU_TESTS:-OFF}" >"$out/torch_build.log" 2>&1 || {
      tail -40 "$out/torch_build.log"
      exit 1
    }
  fi
  cmake --build "$build" >>"$out/torch_build.log" 2>&1 || {
    grep -E "error|Error" "$out/torch_build.log" | head -40
    exit 1
  }
  echo "built gpuscope-torch in $(($(date +%s) - start)) s"
  if [ "${TORCH_GPU_TESTS:-OFF}" = ON ]; then
    # The tests with GPU cases (own kernels against ATen), which skip those cases on CPU-only CI.
    cmake --build "$build" --target torch_model_test torch_math_test >>"$out/torch_build.log" 2>&1 &&
      for t in torch_model_test torch_math_test; do
        "$build/tests_torch/$t" --gtest_filter='LayerNorm*:PatchGemm*:Fp8*:CrossEntropy*'
      done 2>&1 | tee "$out/torch_gpu_tests.out" |
      grep -E "^\[ +(OK|FAILED|SKIPPED|PASSED) +\]|Failure|error" | head -40
  fi
fi

PYTHONUNBUFFERED=1 python3 bench/torch_vs_timm.py --bin "$bin" --plan "$plan" \
  --out "$out" "$@" 2>&1 | tee "$out/torch_vs_timm.out"
