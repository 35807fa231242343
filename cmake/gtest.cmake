find_package(GTest 1.12 REQUIRED)  # Debian: libgtest-dev, libgmock-dev
include(GoogleTest)
