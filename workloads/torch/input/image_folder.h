// A folder of JPEG images read the way torchvision's ImageFolder reads one: every .jpg/.jpeg
// below it (recursively, case-insensitive extension) is a sample, labelled by its top-level
// subfolder's index among the sorted subfolder names. Files directly in the folder form one
// class of their own, named "" and sorted first.
#pragma once

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

namespace gpuscope::workloads {

struct ImageFile {
  std::string path;
  int64_t label = 0;
};

struct ImageFolder {
  std::string root;
  std::vector<std::string> classes;  // sorted; classes[label] is the subfolder's name
  std::vector<ImageFile> files;      // sorted by path
};

// Scans `root`. Returns the folder, or why it cannot be used: it does not exist, is not a
// directory, cannot be read, or holds no .jpg/.jpeg file.
std::variant<ImageFolder, std::string> scan_image_folder(const std::string& root);

}  // namespace gpuscope::workloads
