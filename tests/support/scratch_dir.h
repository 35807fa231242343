// A test's own folder, made fresh (mkdtemp) and removed with everything in it at the end of its
// scope.
#pragma once

#include <stdlib.h>

#include <filesystem>
#include <stdexcept>
#include <string>
#include <system_error>

namespace gpuscope::testing {

class ScratchDir {
 public:
  // The folder is `prefix` and six random characters: by default in the system's temporary
  // folder; a short prefix such as "/tmp/gst-mps-" where sockets go in it (their paths are
  // limited to about 100 bytes).
  explicit ScratchDir(
      const std::string& prefix = (std::filesystem::temp_directory_path() / "gpuscope-").string()) {
    std::string pattern = prefix + "XXXXXX";
    // Thrown, the test fails where the folder was to be made, and nothing runs in a wrong path.
    if (::mkdtemp(pattern.data()) == nullptr) {
      throw std::runtime_error("cannot make a folder " + pattern);
    }
    path_ = pattern;
  }
  ~ScratchDir() {
    std::error_code ignored;
    std::filesystem::remove_all(path_, ignored);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;

  const std::filesystem::path& path() const { return path_; }
  // The path of `name` in the folder.
  std::string file(const std::string& name) const { return (path_ / name).string(); }

 private:
  std::filesystem::path path_;
};

}  // namespace gpuscope::testing
