// What a file is, judged from its first bytes alone, before SQLite is allowed near it: a foreign
// file must never be opened by SQLite for writing (opening may roll back a hot journal or
// switch journal modes, which rewrites the file).
#pragma once

#include <cstdint>
#include <string>

#include "gpuscope/status.h"

namespace gpuscope::store::detail {

struct FileProbe {
  bool exists = false;
  std::uint64_t size_bytes = 0;
  bool sqlite = false;               // starts with "SQLite format 3\0" and a full header
  std::uint32_t application_id = 0;  // header offset 68, big-endian
  std::uint32_t user_version = 0;    // header offset 60 (as of the last checkpoint)
};

// io_error when the file exists but cannot be read (permissions, a directory).
Result<FileProbe> probe_file(const std::string& path);

}  // namespace gpuscope::store::detail
