# AddressSanitizer + UndefinedBehaviorSanitizer (the asan preset), and libFuzzer's coverage
# instrumentation (the fuzz preset, clang only). Target-scoped: nothing is added to
# CMAKE_CXX_FLAGS; gpuscope_sanitize_targets() puts the flags on every target this project
# defines, after they all exist. docs/testing.md says how the presets are run.
#
# What is instrumented: the C++ code of the library, the CLI, the burn worker, the fakes and the
# tests. Not instrumented: .cu files (nvcc compiles device code, which the sanitizers cannot
# see; their host stubs stay plain, which ASan tolerates), and the Debian-built libraries
# (SQLite, fmt, GoogleTest, ncurses), which LSan still watches (tests/sanitizers/lsan.supp).
#
# UBSan does not recover: the first finding aborts the process, so a test that meets undefined
# behaviour fails instead of printing a line nobody reads.

option(GPUSCOPE_SANITIZE "Build with AddressSanitizer + UndefinedBehaviorSanitizer (asan preset)"
       OFF)
option(GPUSCOPE_FUZZ
       "Build the libFuzzer targets of tests/fuzz (fuzz preset; clang; implies GPUSCOPE_SANITIZE)"
       OFF)
if(GPUSCOPE_FUZZ)
  if(NOT CMAKE_CXX_COMPILER_ID STREQUAL "Clang")
    message(FATAL_ERROR "GPUSCOPE_FUZZ needs clang (libFuzzer): use the fuzz preset")
  endif()
  set(GPUSCOPE_SANITIZE ON CACHE BOOL "" FORCE)
endif()

set(gpuscope_sanitizer_flags -fsanitize=address,undefined -fno-sanitize-recover=all
    -fno-omit-frame-pointer)
if(GPUSCOPE_FUZZ)
  # Coverage for libFuzzer everywhere; the fuzz targets alone link libFuzzer's main
  # (gpuscope_add_fuzz_target in tests/fuzz/CMakeLists.txt adds -fsanitize=fuzzer).
  # -O1: at -O0 with ASan a target ran 1-6 inputs a second on the shared 2-core machine.
  list(APPEND gpuscope_sanitizer_flags -fsanitize=fuzzer-no-link -O1)
endif()

# gpuscope_target_sanitizers(TARGET): the sanitizer flags on one target's C++ compile and link.
function(gpuscope_target_sanitizers target)
  if(NOT GPUSCOPE_SANITIZE)
    return()
  endif()
  get_target_property(type ${target} TYPE)
  if(type STREQUAL "INTERFACE_LIBRARY" OR type STREQUAL "UTILITY")
    return()
  endif()
  # Code injected into other programs (libgpuscope_inject.so) stays plain: those programs have
  # no ASan runtime to load first.
  get_target_property(opt_out ${target} GPUSCOPE_NO_SANITIZE)
  if(opt_out)
    return()
  endif()
  target_compile_options(${target} PRIVATE
    $<$<COMPILE_LANGUAGE:CXX>:${gpuscope_sanitizer_flags}>)
  if(NOT type STREQUAL "STATIC_LIBRARY" AND NOT type STREQUAL "OBJECT_LIBRARY")
    target_link_options(${target} PRIVATE -fsanitize=address,undefined)
  endif()
endfunction()

# gpuscope_sanitize_targets(): gpuscope_target_sanitizers on every target defined in this
# directory and below. Call once, at the end of the top-level CMakeLists.txt.
function(gpuscope_sanitize_targets)
  if(NOT GPUSCOPE_SANITIZE)
    return()
  endif()
  set(dirs "${CMAKE_CURRENT_SOURCE_DIR}")
  while(dirs)
    list(POP_FRONT dirs dir)
    get_property(targets DIRECTORY "${dir}" PROPERTY BUILDSYSTEM_TARGETS)
    foreach(target IN LISTS targets)
      gpuscope_target_sanitizers(${target})
    endforeach()
    get_property(subdirs DIRECTORY "${dir}" PROPERTY SUBDIRECTORIES)
    list(APPEND dirs ${subdirs})
  endwhile()
endfunction()
