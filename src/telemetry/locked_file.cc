#include "telemetry/locked_file.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace gpuscope::telemetry::detail {
namespace {

constexpr std::size_t kFlushBytes = 256 * 1024;
constexpr auto kFlushPeriod = std::chrono::seconds(1);

Status io_error(const std::string& path, std::string_view what, int error) {
  return Status(Code::io_error, fmt::format("{}: {}: {}", path, what, std::strerror(error)));
}

}  // namespace

Result<std::unique_ptr<LockedFile>> LockedFile::create(const std::string& path) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return io_error(path, "cannot create", errno);
  struct flock lock {};
  lock.l_type = F_WRLCK;
  lock.l_whence = SEEK_SET;
  if (::fcntl(fd, F_SETLK, &lock) != 0) {
    const int error = errno;
    struct flock holder {};
    holder.l_type = F_WRLCK;
    holder.l_whence = SEEK_SET;
    const bool known = ::fcntl(fd, F_GETLK, &holder) == 0 && holder.l_type != F_UNLCK;
    ::close(fd);
    if (error == EACCES || error == EAGAIN) {
      return Status(Code::io_error,
                    fmt::format("{} is being written by another process{}; choose another file",
                                path, known ? fmt::format(" (PID {})", holder.l_pid) : ""));
    }
    return io_error(path, "cannot lock", error);
  }
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && ::ftruncate(fd, 0) != 0) {
    const int error = errno;
    ::close(fd);
    return io_error(path, "cannot truncate", error);
  }
  return std::unique_ptr<LockedFile>(new LockedFile(path, fd));
}

LockedFile::~LockedFile() {
  if (fd_ >= 0) {
    (void)flush();  // a failure was already reported by the sink, or cannot be any more
    ::close(fd_);
  }
}

Status LockedFile::append_row(std::string_view row, Row kind) {
  pending_.append(row);
  pending_rows_.push_back({pending_.size(), kind});
  const auto now = std::chrono::steady_clock::now();
  if (pending_.size() >= kFlushBytes || now - last_flush_ >= kFlushPeriod) return flush();
  return Status{};
}

Status LockedFile::flush() {
  last_flush_ = std::chrono::steady_clock::now();
  // Data rows among the first `bytes` pending bytes (whole rows only).
  auto data_rows_within = [this](std::size_t bytes) {
    std::uint64_t rows = 0;
    for (const PendingRow& r : pending_rows_) {
      if (r.end <= bytes && r.kind == Row::data) ++rows;
    }
    return rows;
  };
  std::size_t done = 0;
  while (done < pending_.size()) {
    const ssize_t n = ::write(fd_, pending_.data() + done, pending_.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int error = n < 0 ? errno : ENOSPC;
      // Keep the whole rows that made it; cut a partly written one off.
      const std::string_view written(pending_.data(), done);
      const std::size_t end = written.rfind('\n');
      const std::size_t kept = end == std::string_view::npos ? 0 : end + 1;
      data_rows_written_ += data_rows_within(kept);
      bytes_written_ += kept;
      if (kept < done && ::ftruncate(fd_, static_cast<off_t>(bytes_written_)) == 0) {
        ::lseek(fd_, static_cast<off_t>(bytes_written_), SEEK_SET);
      }
      pending_.clear();
      pending_rows_.clear();
      return Status(Code::io_error,
                    fmt::format("{}: write failed: {}; the {} rows written before are kept", path_,
                                std::strerror(error), data_rows_written_));
    }
    done += static_cast<std::size_t>(n);
  }
  bytes_written_ += pending_.size();
  data_rows_written_ += data_rows_within(pending_.size());
  pending_.clear();
  pending_rows_.clear();
  return Status{};
}

}  // namespace gpuscope::telemetry::detail
