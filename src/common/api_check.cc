#include "common/api_check.h"

#include <fmt/format.h>

#include <cstring>

namespace gpuscope::detail {

Status make_api_status(const ApiError& error, const char* call_text, const char* file, int line) {
  const char* base = std::strrchr(file, '/');
  return Status(error.code, error.library_message,
                fmt::format("{} [{}:{}]", call_text, base ? base + 1 : file, line));
}

}  // namespace gpuscope::detail
