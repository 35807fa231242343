#include "input/image_folder.h"

#include <algorithm>
#include <cctype>
#include <map>

#include "input/files.h"

namespace gpuscope::workloads {
namespace {

bool is_jpeg_name(const std::string& path) {
  const size_t dot = path.rfind('.');
  if (dot == std::string::npos || path.find('/', dot) != std::string::npos) return false;
  std::string ext = path.substr(dot);
  std::transform(ext.begin(), ext.end(), ext.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return ext == ".jpg" || ext == ".jpeg";
}

}  // namespace

std::variant<ImageFolder, std::string> scan_image_folder(const std::string& root) {
  const PathKind kind = path_kind(root);
  if (kind == PathKind::missing) return "--data " + root + ": no such directory";
  if (kind != PathKind::directory) return "--data " + root + ": not a directory";
  auto listed = list_files(root);
  if (auto* error = std::get_if<std::string>(&listed)) return "--data " + root + ": " + *error;

  std::vector<std::pair<std::string, std::string>> found;  // (class, relative path)
  for (const std::string& relative : std::get<std::vector<std::string>>(listed)) {
    if (!is_jpeg_name(relative)) continue;
    const size_t slash = relative.find('/');
    found.emplace_back(slash == std::string::npos ? std::string() : relative.substr(0, slash),
                       relative);
  }
  if (found.empty()) return "--data " + root + ": no .jpg or .jpeg file in it";

  std::map<std::string, int64_t> labels;
  for (const auto& [name, path] : found) labels.emplace(name, 0);
  ImageFolder folder;
  folder.root = root;
  for (auto& [name, label] : labels) {
    label = static_cast<int64_t>(folder.classes.size());
    folder.classes.push_back(name);
  }
  const std::string prefix = root.ends_with('/') ? root : root + "/";
  for (const auto& [name, path] : found) folder.files.push_back({prefix + path, labels.at(name)});
  return folder;  // sorted by path: list_files sorts
}

}  // namespace gpuscope::workloads
