// The bench JSON file: written whole or not at all (it is rewritten after every row while the
// matrix runs, and a bench may be killed at any moment), and read back for --resume.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "gpuscope/bench.h"

namespace gpuscope::bench {
namespace {

namespace fs = std::filesystem;

Status io_failure(const std::string& what, const std::string& path, int error) {
  return Status(Code::io_error, fmt::format("cannot {} {}: {}", what, path, std::strerror(error)));
}

// Writes all of `text` to `fd`; false with errno set on failure.
bool write_all(int fd, const std::string& text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

Status save_bench_json(const std::string& path, const nlohmann::json& document) {
  // In the same directory, so that the rename is atomic.
  const std::string tmp = path + ".tmp";
  const std::string text = document.dump(2) + "\n";
  const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  if (fd < 0) return io_failure("write", tmp, errno);
  if (!write_all(fd, text) || ::fsync(fd) != 0) {
    const int error = errno;
    ::close(fd);
    std::remove(tmp.c_str());
    return io_failure("write", tmp, error);
  }
  if (::close(fd) != 0) {
    const int error = errno;
    std::remove(tmp.c_str());
    return io_failure("write", tmp, error);
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    const int error = errno;
    std::remove(tmp.c_str());
    return io_failure("replace", path, error);
  }
  return {};
}

Result<BenchResult> load_bench_json(const std::string& path) {
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return Status(Code::not_found, fmt::format("{}: no such file", path));
  }
  std::ifstream in(path);
  if (!in) return io_failure("read", path, errno);
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return Status(Code::data_error, fmt::format("{}: not JSON (truncated or another file?)", path));
  }
  auto result = bench_from_json(doc);
  if (!result.ok()) {
    return Status(result.code(), fmt::format("{}: {}", path, result.status().message()));
  }
  return result;
}

}  // namespace gpuscope::bench
