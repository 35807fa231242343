find_package(nlohmann_json 3.11 REQUIRED)  # Debian: nlohmann-json3-dev
