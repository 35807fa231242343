// One check for every vendor C API status (NVML, CUDA runtime, cuBLASLt, CUPTI, ...).
//
// Each adapter specializes, next to its vendor header,
//     template <> struct ApiErrorTraits<VendorStatusType> {
//       static ApiError describe(VendorStatusType status);
//     };
// saying whether the value means success, which gpuscope Code it maps to, and the vendor
// library's own error name/string. (A class template rather than an overload: vendor status
// enums live in the global namespace, where argument-dependent lookup would not find ours.)
// GPUSCOPE_API_CHECK(call) turns any such status into a Status whose message is the library's
// words (what a user reads) and whose detail is the call's text and file:line (for --verbose).
#pragma once

#include <string>

#include "gpuscope/status.h"

namespace gpuscope::detail {

struct ApiError {
  bool ok = false;
  Code code = Code::internal;
  std::string library_message;  // the vendor library's own error string
};

template <typename VendorStatus>
struct ApiErrorTraits;  // specialized by each adapter

Status make_api_status(const ApiError& error, const char* call_text, const char* file, int line);

template <typename VendorStatus>
Status api_status(VendorStatus status, const char* call_text, const char* file, int line) {
  ApiError error = ApiErrorTraits<VendorStatus>::describe(status);
  if (error.ok) return Status{};
  return make_api_status(error, call_text, file, line);
}

}  // namespace gpuscope::detail

#define GPUSCOPE_API_CHECK(call) ::gpuscope::detail::api_status((call), #call, __FILE__, __LINE__)
