#include "fuzz/fuzz_input.h"

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

namespace gpuscope::fuzz {
namespace fs = std::filesystem;

namespace {

// The input file and its SQLite side files, removed when the process exits normally.
struct InputFile {
  std::string path =
      (fs::temp_directory_path() / ("gpuscope-fuzz-" + std::to_string(::getpid()) + ".input"))
          .string();
  void remove_all() const {
    std::error_code ec;
    for (const char* suffix : {"", "-wal", "-shm", "-journal"}) fs::remove(path + suffix, ec);
  }
  ~InputFile() { remove_all(); }
};

}  // namespace

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> lines;
  while (!text.empty()) {
    const std::size_t end = text.find('\n');
    lines.push_back(text.substr(0, end));
    if (end == std::string_view::npos) break;
    text.remove_prefix(end + 1);
  }
  return lines;
}

const std::string& write_input_file(std::string_view bytes) {
  static const InputFile file;
  file.remove_all();
  std::ofstream out(file.path, std::ios::binary | std::ios::trunc);
  out.write(bytes.data(), static_cast<std::streamsize>(bytes.size()));
  out.close();
  if (!out) std::abort();  // no input file means no test: fail loudly
  return file.path;
}

}  // namespace gpuscope::fuzz
