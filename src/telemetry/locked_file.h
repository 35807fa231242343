// An output file for a sink: created or truncated only once this process holds its lock, written
// in whole rows, flushed at least once a second.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/status.h"

namespace gpuscope::telemetry::detail {

class LockedFile {
 public:
  // Opens `path` for writing and takes a POSIX write lock on it before truncating, so a second
  // gpuscope pointed at the same file fails (io_error naming the PID that holds it) and never
  // destroys the first one's data. io_error with the system's words for anything else.
  static Result<std::unique_ptr<LockedFile>> create(const std::string& path);
  ~LockedFile();  // flushes what it can, then closes (and so unlocks)
  LockedFile(const LockedFile&) = delete;
  LockedFile& operator=(const LockedFile&) = delete;

  // data: a sample's row, counted in "N rows kept"; meta: a CSV header, a JSON-lines session or
  // summary line, written the same way but not counted.
  enum class Row { data, meta };

  const std::string& path() const { return path_; }
  std::uint64_t data_rows_written() const { return data_rows_written_; }

  // Adds a complete row (with its '\n'); flushes when a second has passed since the last flush
  // or much is pending.
  Status append_row(std::string_view row, Row kind = Row::data);
  // Writes what is pending. On a failure (disk full, file-size limit, ...) the file is cut back
  // to its last whole row, so what it holds stays readable, and io_error says how many data rows
  // it keeps.
  Status flush();

 private:
  LockedFile(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}

  std::string path_;
  int fd_ = -1;
  std::string pending_;
  struct PendingRow {
    std::size_t end;  // offset in pending_ just past its '\n'
    Row kind;
  };
  std::vector<PendingRow> pending_rows_;
  std::uint64_t data_rows_written_ = 0;
  std::uint64_t bytes_written_ = 0;
  std::chrono::steady_clock::time_point last_flush_ = std::chrono::steady_clock::now();
};

}  // namespace gpuscope::telemetry::detail
