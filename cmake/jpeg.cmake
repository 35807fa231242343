# libjpeg-turbo for gpuscope-torch's JPEG input path (--input jpeg, --make-images), through its
# libjpeg API. Optional: without it the program still builds and --input jpeg is a `skipped` row.
#   - here and in CI: Debian libjpeg62-turbo-dev (scripts/setup-deps.sh);
#   - on the GPU machines, which have no Debian -dev packages: bench/torch_jpeg_carry.sh copies
#     jpeglib.h, jconfig.h, jmorecfg.h, jerror.h and the static libjpeg.a into .carry/usr, found
#     through CMAKE_PREFIX_PATH.
# Sets GPUSCOPE_HAVE_JPEG, GPUSCOPE_JPEG_INCLUDE_DIR and GPUSCOPE_JPEG_LIBRARY. Variables rather
# than a target with usage requirements: only the one adapter file (input/jpeg_codec.cc) may see
# libjpeg's headers, and the other files' flags must not change (they share a precompiled header).
option(GPUSCOPE_WITH_JPEG "JPEG input for gpuscope-torch (libjpeg-turbo), when found" ON)

set(GPUSCOPE_HAVE_JPEG OFF)
if(GPUSCOPE_WITH_JPEG)
  find_path(GPUSCOPE_JPEG_INCLUDE_DIR jpeglib.h)
  # The static library first: the GPU machines have no libjpeg.so to load.
  find_library(GPUSCOPE_JPEG_LIBRARY NAMES libjpeg.a jpeg)
  if(GPUSCOPE_JPEG_INCLUDE_DIR AND GPUSCOPE_JPEG_LIBRARY)
    set(GPUSCOPE_HAVE_JPEG ON)
  endif()
endif()
if(GPUSCOPE_HAVE_JPEG)
  message(STATUS "gpuscope-torch: JPEG input with ${GPUSCOPE_JPEG_LIBRARY}")
else()
  message(STATUS "gpuscope-torch: no libjpeg-turbo (libjpeg62-turbo-dev): --input jpeg is skipped")
endif()
