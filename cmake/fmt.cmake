find_package(fmt 9 REQUIRED)  # Debian: libfmt-dev
