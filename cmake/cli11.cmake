find_package(CLI11 2 REQUIRED)  # Debian: libcli11-dev
