#include "gpuscope/status.h"

#include <fmt/format.h>

#include "common/enum_names.h"

namespace gpuscope {
namespace {

constexpr detail::EnumName<Code> kCodeNames[] = {{Code::ok, "ok"},
                                                 {Code::invalid_argument, "invalid_argument"},
                                                 {Code::not_found, "not_found"},
                                                 {Code::not_supported, "not_supported"},
                                                 {Code::no_driver, "no_driver"},
                                                 {Code::no_device, "no_device"},
                                                 {Code::permission_denied, "permission_denied"},
                                                 {Code::gpu_lost, "gpu_lost"},
                                                 {Code::out_of_memory, "out_of_memory"},
                                                 {Code::io_error, "io_error"},
                                                 {Code::data_error, "data_error"},
                                                 {Code::timeout, "timeout"},
                                                 {Code::cancelled, "cancelled"},
                                                 {Code::internal, "internal"}};
static_assert(detail::names_every_value(kCodeNames, Code::internal));

}  // namespace

std::string_view code_name(Code code) {
  return detail::name_in(kCodeNames, code);
}

std::optional<Code> code_named(std::string_view name) {
  return detail::value_named(kCodeNames, name);
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
