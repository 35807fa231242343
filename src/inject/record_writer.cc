#include "inject/record_writer.h"

#include <errno.h>
#include <unistd.h>

#include <cstring>

#include "inject/json_line.h"

namespace gpuscope::inject {

const char* record_kind_name(RecordKind kind) {
  switch (kind) {
    case RecordKind::kernel:
      return "kernel";
    case RecordKind::memcpy:
      return "memcpy";
    case RecordKind::memset:
      return "memset";
    case RecordKind::runtime:
      return "runtime";
    case RecordKind::driver:
      return "driver";
    case RecordKind::sync:
      return "sync";
    case RecordKind::overhead:
      return "overhead";
    case RecordKind::mark:
      return "mark";
    case RecordKind::step:
      return "step";
    case RecordKind::range:
      return "range";
    case RecordKind::other:
    case RecordKind::count_:
      break;
  }
  return "other";
}

RecordWriter::RecordWriter(int fd, size_t buffer_bytes, uint64_t max_bytes)
    : fd_(fd), buffer_(buffer_bytes, '\0'), max_bytes_(max_bytes) {}

RecordWriter::~RecordWriter() {
  if (fd_ >= 0) close(fd_);
}

uint64_t RecordWriter::dropped_total() const {
  uint64_t total = 0;
  for (const uint64_t n : dropped_) total += n;
  return total;
}

uint32_t RecordWriter::intern(std::string_view text) {
  if (text.size() > kMaxStringBytes) text = text.substr(0, kMaxStringBytes);
  if (const auto found = ids_.find(text); found != ids_.end()) return found->second;
  const uint32_t id = next_id_++;
  JsonLine(scratch_, "name").u("id", id).s("s", text).end();
  // Only a name whose line was written may be reused: a dropped one is defined again next time.
  if (append(scratch_, RecordKind::other) && ids_.size() < kMaxStrings) {
    strings_.emplace_back(text);
    ids_.emplace(strings_.back(), id);
  }
  return id;
}

bool RecordWriter::append(std::string_view line, RecordKind kind, bool forced) {
  if (fd_ < 0 || write_failed_ ||
      (!forced && max_bytes_ != 0 && bytes() + line.size() > max_bytes_)) {
    ++dropped_[static_cast<size_t>(kind)];
    return false;
  }
  if (used_ + line.size() > buffer_.size()) {
    if (!flush()) {
      ++dropped_[static_cast<size_t>(kind)];
      return false;
    }
    if (line.size() > buffer_.size()) {  // a line larger than the buffer goes straight out
      if (!write_all(line.data(), line.size())) {
        write_failed_ = true;
        ++dropped_[static_cast<size_t>(kind)];
        return false;
      }
      file_bytes_ += line.size();
      ++records_;
      return true;
    }
  }
  std::memcpy(buffer_.data() + used_, line.data(), line.size());
  used_ += line.size();
  ++records_;
  ++buffered_records_;
  return true;
}

bool RecordWriter::write_all(const char* data, size_t size) {
  while (size > 0) {
    const ssize_t n = ::write(fd_, data, size);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    data += n;
    size -= static_cast<size_t>(n);
  }
  return true;
}

bool RecordWriter::flush() {
  if (used_ == 0) return !write_failed_;
  if (fd_ < 0 || write_failed_ || !write_all(buffer_.data(), used_)) {
    write_failed_ = true;
    dropped_[static_cast<size_t>(RecordKind::other)] += buffered_records_;
    records_ -= buffered_records_;
  } else {
    file_bytes_ += used_;
  }
  used_ = 0;
  buffered_records_ = 0;
  return !write_failed_;
}

bool RecordWriter::flush_from_signal() {
  if (!mutex_.try_lock()) return false;
  const bool ok = flush();
  mutex_.unlock();
  return ok;
}

void RecordWriter::reset(int fd) {
  if (fd_ >= 0) close(fd_);
  fd_ = fd;
  used_ = 0;
  file_bytes_ = 0;
  records_ = 0;
  buffered_records_ = 0;
  write_failed_ = false;
  dropped_.fill(0);
  ids_.clear();
  strings_.clear();
  next_id_ = 1;
}

}  // namespace gpuscope::inject
