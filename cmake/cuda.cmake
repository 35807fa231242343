# The CUDA toolkit (runtime, cuBLASLt) and nvcc for the few .cu files. The CLI links only the
# runtime's static library, so it starts on a machine that has no NVIDIA driver; cuBLASLt is
# linked only into the burn worker.
if(NOT DEFINED CMAKE_CUDA_ARCHITECTURES)
  # Ampere (A100, RTX 30xx, A10), Ada (RTX 40xx, L4, L40S), Hopper (H100, H200).
  set(CMAKE_CUDA_ARCHITECTURES 80 86 89 90)
endif()
enable_language(CUDA)
find_package(CUDAToolkit 13 REQUIRED)
