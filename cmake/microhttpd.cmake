# libmicrohttpd: the HTTP server behind `gpuscope monitor --listen` (src/telemetry/
# metrics_server.cc, the only file that includes microhttpd.h). Debian: libmicrohttpd-dev
# (0.9.75 in Debian 12). Provides the imported target gpuscope_microhttpd.
#
# Linked statically: the GPU machines have no -dev packages and no libmicrohttpd12, and must
# run binaries built here (and build there from .carry/usr, see bench/monitor_device.sh).
# Debian's libmicrohttpd.a is built with HTTPS support, so besides glibc it needs GnuTLS
# (`nm -u libmicrohttpd.a`: gnutls_global_init, gnutls_record_recv, ... all called only for
# HTTPS, which gpuscope never turns on). GnuTLS stays a shared library, libgnutls.so.30:
# every Debian and Ubuntu system has it, since apt itself depends on libgnutls30. On a machine
# with only that runtime (no libgnutls.so link from libgnutls28-dev, as on the GPU machines)
# the versioned file is linked directly; either way the binary's NEEDED entry is
# libgnutls.so.30.
find_package(Threads REQUIRED)
find_path(GPUSCOPE_MICROHTTPD_INCLUDE_DIR microhttpd.h)
find_library(GPUSCOPE_MICROHTTPD_LIBRARY NAMES libmicrohttpd.a)
find_library(GPUSCOPE_GNUTLS_LIBRARY NAMES gnutls libgnutls.so.30)
if(NOT GPUSCOPE_MICROHTTPD_INCLUDE_DIR OR NOT GPUSCOPE_MICROHTTPD_LIBRARY
   OR NOT GPUSCOPE_GNUTLS_LIBRARY)
  message(FATAL_ERROR "libmicrohttpd (static) or GnuTLS not found: install libmicrohttpd-dev "
                      "(scripts/setup-deps.sh). Found: header '${GPUSCOPE_MICROHTTPD_INCLUDE_DIR}', "
                      "library '${GPUSCOPE_MICROHTTPD_LIBRARY}', GnuTLS '${GPUSCOPE_GNUTLS_LIBRARY}'")
endif()
add_library(gpuscope_microhttpd STATIC IMPORTED)
set_target_properties(gpuscope_microhttpd PROPERTIES
  IMPORTED_LOCATION "${GPUSCOPE_MICROHTTPD_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${GPUSCOPE_MICROHTTPD_INCLUDE_DIR}"
  INTERFACE_LINK_LIBRARIES "${GPUSCOPE_GNUTLS_LIBRARY};Threads::Threads")
message(STATUS "libmicrohttpd for monitor --listen: ${GPUSCOPE_MICROHTTPD_LIBRARY} "
               "(with ${GPUSCOPE_GNUTLS_LIBRARY})")
