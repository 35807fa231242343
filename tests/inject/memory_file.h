// A RecordWriter over an in-memory file (memfd), and the lines written to it.
#pragma once

#include <sys/mman.h>
#include <unistd.h>

#include <memory>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "inject/record_writer.h"

namespace gpuscope::inject::testing {

class MemoryFile {
 public:
  explicit MemoryFile(size_t buffer_bytes = 4096, uint64_t max_bytes = 0)
      : fd_(memfd_create("records", 0)),
        writer_(std::make_unique<RecordWriter>(dup(fd_), buffer_bytes, max_bytes)) {}
  ~MemoryFile() { close(fd_); }

  RecordWriter& writer() { return *writer_; }

  // Everything written so far (after flushing the writer).
  std::string text() {
    writer_->flush();
    std::string out(static_cast<size_t>(lseek(fd_, 0, SEEK_END)), '\0');
    if (!out.empty() && pread(fd_, out.data(), out.size(), 0) < 0) out.clear();
    return out;
  }

  std::vector<nlohmann::json> lines() {
    std::vector<nlohmann::json> out;
    const std::string all = text();
    size_t pos = 0;
    while (pos < all.size()) {
      const size_t end = all.find('\n', pos);
      out.push_back(nlohmann::json::parse(all.substr(pos, end - pos)));
      pos = end + 1;
    }
    return out;
  }

 private:
  int fd_;
  std::unique_ptr<RecordWriter> writer_;
};

}  // namespace gpuscope::inject::testing
