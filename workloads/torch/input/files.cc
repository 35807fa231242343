#include "input/files.h"

#include <dirent.h>
#include <ftw.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>

namespace gpuscope::workloads {
namespace {

constexpr int kMaxDepth = 64;

std::string join(const std::string& a, const std::string& b) {
  if (a.empty()) return b;
  return a.back() == '/' ? a + b : a + "/" + b;
}

// Appends the files below root/relative to `out`; returns why not or "".
std::string walk(const std::string& root, const std::string& relative, int depth,
                 std::vector<std::string>& out) {
  const std::string dir = join(root, relative);
  const std::unique_ptr<DIR, int (*)(DIR*)> handle(opendir(dir.c_str()), closedir);
  if (!handle) return dir + ": " + std::strerror(errno);
  while (const dirent* entry = readdir(handle.get())) {
    const std::string name = entry->d_name;
    if (name == "." || name == "..") continue;
    const std::string child = relative.empty() ? name : relative + "/" + name;
    const PathKind kind = path_kind(join(root, child));
    if (kind == PathKind::file) {
      out.push_back(child);
    } else if (kind == PathKind::directory && depth < kMaxDepth) {
      if (std::string error = walk(root, child, depth + 1, out); !error.empty()) return error;
    }
  }
  return {};
}

int remove_entry(const char* path, const struct stat*, int, FTW*) {
  std::remove(path);
  return 0;
}

}  // namespace

PathKind path_kind(const std::string& path) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) return PathKind::missing;
  if (S_ISDIR(info.st_mode)) return PathKind::directory;
  if (S_ISREG(info.st_mode)) return PathKind::file;
  return PathKind::other;
}

std::string make_directories(const std::string& path) {
  for (size_t end = path.find('/', 1);; end = path.find('/', end + 1)) {
    const std::string prefix = path.substr(0, end);
    if (!prefix.empty() && mkdir(prefix.c_str(), 0755) != 0 && errno != EEXIST) {
      return prefix + ": " + std::strerror(errno);
    }
    if (end == std::string::npos) break;
  }
  return path_kind(path) == PathKind::directory ? std::string() : path + ": not a directory";
}

std::variant<std::vector<std::string>, std::string> list_files(const std::string& root) {
  std::vector<std::string> files;
  if (std::string error = walk(root, "", 0, files); !error.empty()) return error;
  std::sort(files.begin(), files.end());
  return files;
}

void remove_tree(const std::string& path) {
  nftw(path.c_str(), remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

}  // namespace gpuscope::workloads
