// The few file-system operations the input path needs, on POSIX calls. Not std::filesystem: the
// torch wheel's libtorch.so exports its own, older build of std::filesystem's functions, which
// the dynamic linker binds our calls to (std::filesystem::remove_all crashed in it).
#pragma once

#include <string>
#include <variant>
#include <vector>

namespace gpuscope::workloads {

enum class PathKind { missing, directory, file, other };
// What `path` is, following symbolic links.
PathKind path_kind(const std::string& path);

// Creates `path` and its missing parents (mkdir -p). Returns "" on success, else why not.
std::string make_directories(const std::string& path);

// Every regular file below `root`, recursively (following symbolic links, at most 64 levels),
// as paths relative to `root` ("a/b.jpg"), sorted. Returns why not when `root` cannot be read.
std::variant<std::vector<std::string>, std::string> list_files(const std::string& root);

// Removes `path` and everything below it (rm -rf), ignoring errors.
void remove_tree(const std::string& path);

}  // namespace gpuscope::workloads
