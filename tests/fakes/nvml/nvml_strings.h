// Writing a string result the way NVML does; shared by both fake libraries.
#pragma once

#include <cstring>
#include <string_view>

#include "fake_nvml_export.h"

namespace gpuscope::fake_nvml {

// Copies `text` and its terminator to `out`; NVML_ERROR_INSUFFICIENT_SIZE when `length` is
// too small, NVML_ERROR_INVALID_ARGUMENT when `out` is null.
inline nvmlReturn_t copy_string(std::string_view text, char* out, unsigned length) {
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  if (text.size() + 1 > length) return NVML_ERROR_INSUFFICIENT_SIZE;
  std::memcpy(out, text.data(), text.size());
  out[text.size()] = '\0';
  return NVML_SUCCESS;
}

}  // namespace gpuscope::fake_nvml
