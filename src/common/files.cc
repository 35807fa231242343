// Reading and writing the files a user names: atomic replacement through an exclusively created
// temporary file, and capped reads of regular files only. (The path checks: path_check.cc.)
#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>

#include "gpuscope/files.h"

namespace gpuscope::files {
namespace {

namespace fs = std::filesystem;

Status io_failure(std::string_view what, const std::string& path, int error) {
  return Status(Code::io_error, fmt::format("cannot {} {}: {}", what, path, std::strerror(error)));
}

// Writes all of `text` to `fd`; false with errno set on failure.
bool write_all(int fd, std::string_view text) {
  std::size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) return false;
    if (n == 0) {
      errno = ENOSPC;
      return false;
    }
    done += static_cast<std::size_t>(n);
  }
  return true;
}

// The process's umask, read without changing it (umask(2) would, for a moment, for every
// thread); 022 when /proc does not say.
mode_t current_umask() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("Umask:", 0) == 0)
      return static_cast<mode_t>(std::strtoul(&line[6], nullptr, 8));
  }
  return 022;
}

// A file-size limit (ulimit -f) must fail the write with EFBIG, not kill the process: the old
// file is intact either way, but only an error can say so.
void ignore_file_size_signal() {
  static std::atomic<bool> done{false};
  if (done.exchange(true)) return;
  struct sigaction current {};
  if (::sigaction(SIGXFSZ, nullptr, &current) == 0 && current.sa_handler == SIG_DFL) {
    std::signal(SIGXFSZ, SIG_IGN);
  }
}

std::string folder_of(const std::string& path) {
  const fs::path parent = fs::path(path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

// Opens a new file in `dir` named `prefix`XXXXXX exclusively (O_CREAT|O_EXCL: never through an
// existing file or symlink); its name in `name`.
int open_temporary(const std::string& dir, std::string_view prefix, std::string* name) {
  std::string pattern = (fs::path(dir) / fmt::format("{}XXXXXX", prefix)).string();
  const int fd = ::mkostemp(pattern.data(), O_CLOEXEC);
  if (fd >= 0) *name = pattern;
  return fd;
}

Status write_straight(const std::string& path, std::string_view content) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) return io_failure("write", path, errno);
  const bool ok = write_all(fd, content);
  const int error = errno;
  ::close(fd);
  return ok ? Status{} : io_failure("write", path, error);
}

}  // namespace

Result<std::string> create_temporary_file(const std::string& dir, std::string_view prefix) {
  std::string name;
  const int fd = open_temporary(dir, prefix, &name);
  if (fd < 0) return io_failure("create a file in", dir, errno);
  ::close(fd);
  return name;
}

Status write_file_atomically(const std::string& path, std::string_view content) {
  ignore_file_size_signal();
  struct stat target {};
  const bool exists = ::stat(path.c_str(), &target) == 0;
  if (exists && S_ISDIR(target.st_mode)) return io_failure("write", path, EISDIR);
  if (exists && (S_ISCHR(target.st_mode) || S_ISFIFO(target.st_mode))) {
    return write_straight(path, content);
  }
  // A symlink at `path` is replaced by the rename, so its target's permissions do not count.
  struct stat entry {};
  const bool regular_there = ::lstat(path.c_str(), &entry) == 0 && S_ISREG(entry.st_mode) && exists;
  const mode_t mode = regular_there ? (entry.st_mode & 07777) : (0666 & ~current_umask());

  const std::string dir = folder_of(path);
  std::string temporary;
  const int fd =
      open_temporary(dir, fmt::format(".{}.tmp-", fs::path(path).filename().string()), &temporary);
  if (fd < 0) return io_failure("write", path, errno);
  int error = 0;
  if (::fchmod(fd, mode) != 0 || !write_all(fd, content) || ::fsync(fd) != 0) error = errno;
  if (::close(fd) != 0 && error == 0) error = errno;
  if (error == 0 && std::rename(temporary.c_str(), path.c_str()) != 0) error = errno;
  if (error != 0) {
    ::unlink(temporary.c_str());
    return Status(Code::io_error, fmt::format("cannot write {}: {}; {}", path, std::strerror(error),
                                              exists ? "the file there was left as it was"
                                                     : "nothing was written"));
  }
  return Status{};
}

Result<std::string> read_file(const std::string& path, std::uint64_t max_bytes) {
  // O_NONBLOCK: opening a FIFO must not wait for a writer before it can be refused.
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
  if (fd < 0) {
    const int error = errno;
    if (error == ENOENT) return Status(Code::not_found, fmt::format("{}: no such file", path));
    return io_failure("read", path, error);
  }
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    const int error = errno;
    ::close(fd);
    return io_failure("read", path, error);
  }
  if (!S_ISREG(st.st_mode)) {
    ::close(fd);
    return Status(Code::invalid_argument,
                  fmt::format("{} is not a regular file ({}): gpuscope reads only files", path,
                              S_ISDIR(st.st_mode)    ? "a folder"
                              : S_ISCHR(st.st_mode)  ? "a character device"
                              : S_ISBLK(st.st_mode)  ? "a block device"
                              : S_ISFIFO(st.st_mode) ? "a FIFO"
                                                     : "a socket"));
  }
  auto too_large = [&] {
    return Status(Code::data_error,
                  fmt::format("{} is larger than {} MiB, more than gpuscope reads from one file",
                              path, max_bytes >> 20));
  };
  if (static_cast<std::uint64_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return too_large();
  }
  std::string text;
  text.reserve(static_cast<std::size_t>(st.st_size));
  char buffer[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int error = errno;
      ::close(fd);
      return io_failure("read", path, error);
    }
    if (n == 0) break;
    text.append(buffer, static_cast<std::size_t>(n));
    if (text.size() > max_bytes) {  // it grew while read
      ::close(fd);
      return too_large();
    }
  }
  ::close(fd);
  return text;
}

}  // namespace gpuscope::files
