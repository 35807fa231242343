# LibTorch (C++ API of PyTorch) for gpuscope-torch, pinned to the torch version on our GPU
# machines. Where it is looked for, first match wins:
#   1. Torch_DIR or CMAKE_PREFIX_PATH given by the caller;
#   2. the `torch` wheel that scripts/setup-deps.sh unpacked under GPUSCOPE_DEPS_DIR/torch;
#   3. the torch of the `python3` on PATH (torch.utils.cmake_prefix_path), as on the GPU machines.
# Defines gpuscope_libtorch: an interface target carrying LibTorch's libraries, with its headers
# as SYSTEM includes (our warning set stays on our code), plus CUDA's header-only NVTX 3.
set(GPUSCOPE_TORCH_VERSION "2.11.0" CACHE STRING "The torch version gpuscope-torch is pinned to")

find_package(CUDAToolkit 13 REQUIRED)
# Caffe2's CMake config asks for CUDA::nvToolsExt, which CUDA 12.9+ no longer ships (NVTX 3 is
# header-only): give it an interface target over CUDA::nvtx3 first.
if(NOT TARGET CUDA::nvToolsExt AND TARGET CUDA::nvtx3)
  add_library(CUDA::nvToolsExt INTERFACE IMPORTED)
  target_link_libraries(CUDA::nvToolsExt INTERFACE CUDA::nvtx3)
endif()
# gpuscope-torch's few kernels of its own (gpuscope_torch_kernels) do not use Caffe2's CUDA
# flags: name the architectures so that its config does not probe for a GPU at configure time.
if(NOT DEFINED ENV{TORCH_CUDA_ARCH_LIST} AND NOT DEFINED TORCH_CUDA_ARCH_LIST)
  set(TORCH_CUDA_ARCH_LIST "8.0;8.6;8.9;9.0")
endif()

if(NOT Torch_DIR)
  set(_gpuscope_torch_hints "")
  if(GPUSCOPE_DEPS_DIR AND EXISTS "${GPUSCOPE_DEPS_DIR}/torch/torch/share/cmake/Torch")
    list(APPEND _gpuscope_torch_hints "${GPUSCOPE_DEPS_DIR}/torch/torch/share/cmake/Torch")
  endif()
  find_program(GPUSCOPE_PYTHON3 python3)
  if(GPUSCOPE_PYTHON3)
    execute_process(
      COMMAND "${GPUSCOPE_PYTHON3}" -c "import torch.utils; print(torch.utils.cmake_prefix_path)"
      OUTPUT_VARIABLE _gpuscope_torch_prefix OUTPUT_STRIP_TRAILING_WHITESPACE
      ERROR_QUIET RESULT_VARIABLE _gpuscope_torch_rc)
    if(_gpuscope_torch_rc EQUAL 0 AND _gpuscope_torch_prefix)
      list(APPEND _gpuscope_torch_hints "${_gpuscope_torch_prefix}/Torch")
    endif()
  endif()
endif()
# GLOBAL: tests/torch (a sibling folder in the top-level build) links the same imported targets.
find_package(Torch REQUIRED GLOBAL HINTS ${_gpuscope_torch_hints})
if(NOT Torch_VERSION VERSION_EQUAL GPUSCOPE_TORCH_VERSION)
  message(WARNING "gpuscope-torch is pinned to torch ${GPUSCOPE_TORCH_VERSION}; found "
                  "${Torch_VERSION} at ${Torch_DIR}")
endif()
message(STATUS "gpuscope-torch: LibTorch ${Torch_VERSION} from ${Torch_DIR}")

option(GPUSCOPE_TORCH_DEBUG_INFO
  "Debug info for gpuscope-torch (LibTorch's headers make it triple the compile time)" OFF)

add_library(gpuscope_libtorch INTERFACE)
if(NOT GPUSCOPE_TORCH_DEBUG_INFO)
  # On every consumer alike, so that they can share one precompiled header.
  target_compile_options(gpuscope_libtorch INTERFACE $<$<COMPILE_LANGUAGE:CXX>:-g0>)
endif()
target_link_libraries(gpuscope_libtorch INTERFACE
  ${TORCH_LIBRARIES} CUDA::nvtx3 CUDA::cudart CUDA::cublasLt)
target_include_directories(gpuscope_libtorch SYSTEM INTERFACE ${TORCH_INCLUDE_DIRS})
if(TORCH_CXX_FLAGS)
  separate_arguments(_gpuscope_torch_flags UNIX_COMMAND "${TORCH_CXX_FLAGS}")
  target_compile_options(gpuscope_libtorch INTERFACE ${_gpuscope_torch_flags})
endif()
