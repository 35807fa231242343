#include "gpuscope/status.h"

#include <fmt/format.h>

namespace gpuscope {

std::string_view code_name(Code code) {
  switch (code) {
    case Code::ok:
      return "ok";
    case Code::invalid_argument:
      return "invalid_argument";
    case Code::not_found:
      return "not_found";
    case Code::not_supported:
      return "not_supported";
    case Code::no_driver:
      return "no_driver";
    case Code::no_device:
      return "no_device";
    case Code::permission_denied:
      return "permission_denied";
    case Code::gpu_lost:
      return "gpu_lost";
    case Code::out_of_memory:
      return "out_of_memory";
    case Code::io_error:
      return "io_error";
    case Code::data_error:
      return "data_error";
    case Code::timeout:
      return "timeout";
    case Code::cancelled:
      return "cancelled";
    case Code::internal:
      return "internal";
  }
  return "unknown";
}

std::string Status::to_string() const {
  if (ok()) return "ok";
  if (detail_.empty()) return fmt::format("{}: {}", code_name(code_), message_);
  return fmt::format("{}: {} [{}]", code_name(code_), message_, detail_);
}

Status Status::with_context(std::string_view context) const {
  if (ok()) return *this;
  return Status(code_, fmt::format("{}: {}", context, message_), detail_);
}

}  // namespace gpuscope
