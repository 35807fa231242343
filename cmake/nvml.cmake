# NVML's header only: the library itself is dlopen'd at run time (src/nvml). The header comes
# from the `nvidia-nvml-dev` wheel that scripts/setup-deps.sh installs under GPUSCOPE_DEPS_DIR.
find_path(GPUSCOPE_NVML_INCLUDE_DIR nvml.h
  HINTS "${GPUSCOPE_DEPS_DIR}/python/nvidia/cu13/include" "${PROJECT_SOURCE_DIR}/.carry/nvml"
        ${CUDAToolkit_INCLUDE_DIRS}
  DOC "Directory holding nvml.h")
if(NOT GPUSCOPE_NVML_INCLUDE_DIR)
  message(FATAL_ERROR "nvml.h not found: run scripts/setup-deps.sh (installs the nvidia-nvml-dev wheel)")
endif()
add_library(gpuscope_nvml_headers INTERFACE)
target_include_directories(gpuscope_nvml_headers SYSTEM INTERFACE "${GPUSCOPE_NVML_INCLUDE_DIR}")
# Callers name every versioned symbol explicitly (nvmlInit_v2, ...): the loader decides.
target_compile_definitions(gpuscope_nvml_headers INTERFACE NVML_NO_UNVERSIONED_FUNC_DEFS)
