// nvmlReturn_t -> Status, for GPUSCOPE_API_CHECK (common/api_check.h).
#pragma once

#include <nvml.h>

#include "common/api_check.h"

namespace gpuscope::nvml::detail {
// Makes error messages use the loaded library's own nvmlErrorString (set by Library::load;
// nullptr restores the built-in names).
void set_error_string_function(decltype(&::nvmlErrorString) fn);
}  // namespace gpuscope::nvml::detail

namespace gpuscope::detail {
template <>
struct ApiErrorTraits<nvmlReturn_t> {
  static ApiError describe(nvmlReturn_t status);
};
}  // namespace gpuscope::detail

// Fetches an optional NVML function from `api`: a missing symbol reads as not_supported.
#define GPUSCOPE_NVML_CALL(api, fn, ...)                                                 \
  ((api).fn == nullptr ? ::gpuscope::Status(::gpuscope::Code::not_supported,             \
                                            #fn " is not exported by this NVML library") \
                       : ::gpuscope::detail::api_status(                                 \
                             (api).fn(__VA_ARGS__), #fn "(" #__VA_ARGS__ ")", __FILE__, __LINE__))
