// The record file of one process: JSON lines through a fixed-size buffer (memory stays bounded
// however fast records come), a string table ("name" lines define an id once; records refer to
// it), a size cap with drop counts per record kind.
//
// Not thread-safe by itself: callers hold mutex() around every call except flush_from_signal.
#pragma once

#include <array>
#include <cstdint>
#include <deque>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_map>

namespace gpuscope::inject {

enum class RecordKind : uint8_t {
  kernel,
  memcpy,
  memset,
  runtime,
  driver,
  sync,
  overhead,
  mark,
  step,
  range,
  other,
  count_,
};
const char* record_kind_name(RecordKind kind);

class RecordWriter {
 public:
  static constexpr size_t kMaxStrings = 1u << 16;       // distinct strings kept in the table
  static constexpr size_t kMaxStringBytes = 16 * 1024;  // longer names are cut there

  // Takes ownership of `fd` (-1: write nothing, count everything as dropped).
  // REQUIRES: buffer_bytes > 0. max_bytes 0: no cap.
  RecordWriter(int fd, size_t buffer_bytes, uint64_t max_bytes);
  ~RecordWriter();
  RecordWriter(const RecordWriter&) = delete;
  RecordWriter& operator=(const RecordWriter&) = delete;

  std::mutex& mutex() { return mutex_; }

  // The id of `text`, writing its "name" line the first time. Past kMaxStrings distinct strings,
  // each call defines a fresh id (memory stays bounded, the file grows instead).
  uint32_t intern(std::string_view text);

  // Appends one line (ending in '\n'). Past the cap the line is dropped and counted under `kind`,
  // unless `forced` (the closing lines: dropped counts, window end, end). False when dropped.
  bool append(std::string_view line, RecordKind kind, bool forced = false);

  // Writes the buffer to the file. False on a write error (the buffered records are counted as
  // dropped and later records are dropped too).
  bool flush();

  // From a signal handler: flushes only if the mutex is free (the interrupted thread may hold
  // it). Uses only write(2) and a try-lock.
  bool flush_from_signal();

  // In a fork child: a new file, an empty buffer and string table, zero counts.
  void reset(int fd);

  uint64_t dropped(RecordKind kind) const { return dropped_[static_cast<size_t>(kind)]; }
  uint64_t dropped_total() const;
  uint64_t records() const { return records_; }
  uint64_t bytes() const { return file_bytes_ + used_; }  // written + buffered
  bool write_failed() const { return write_failed_; }

 private:
  bool write_all(const char* data, size_t size);

  std::mutex mutex_;
  int fd_;
  std::string buffer_;  // capacity fixed at construction; used_ bytes are valid
  size_t used_ = 0;
  uint64_t max_bytes_;
  uint64_t file_bytes_ = 0;
  uint64_t records_ = 0;
  uint64_t buffered_records_ = 0;
  bool write_failed_ = false;
  std::array<uint64_t, static_cast<size_t>(RecordKind::count_)> dropped_{};
  std::deque<std::string> strings_;  // owns the table's keys
  std::unordered_map<std::string_view, uint32_t> ids_;
  uint32_t next_id_ = 1;
  std::string scratch_;
};

}  // namespace gpuscope::inject
