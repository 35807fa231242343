// A small set of generated JPEG images for tests and quick runs (`gpuscope-torch --make-images`),
// so that no image files live in the repository: `count` images spread over `classes` subfolders
// (class_0, class_1, ...), each a class-coloured gradient with a stripe pattern and noise, of
// varying size and aspect ratio, learnable by class.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

namespace gpuscope::workloads {

struct ImageSetOptions {
  std::string dir;
  int64_t count = 64;
  int64_t classes = 4;
  uint64_t seed = 0;
};

// Writes the set (creating folders as needed). Returns nullopt on success, otherwise why not
// (no JPEG codec in this build, a folder or file that cannot be written).
std::optional<std::string> write_image_set(const ImageSetOptions& options);

}  // namespace gpuscope::workloads
