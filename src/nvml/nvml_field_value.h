// The value of one nvmlDeviceGetFieldValues result, whatever type NVML reported it in: the one
// place that reads nvmlFieldValue_t's union.
#pragma once

#include <cstdint>
#include <optional>

#include "nvml/nvml_api.h"

namespace gpuscope::nvml::detail {

// nullopt when the field failed (its own nvmlReturn) or has a type that is not a number.
inline std::optional<double> field_as_double(const nvmlFieldValue_t& value) {
  if (value.nvmlReturn != NVML_SUCCESS) return std::nullopt;
  switch (value.valueType) {
    case NVML_VALUE_TYPE_DOUBLE:
      return value.value.dVal;
    case NVML_VALUE_TYPE_UNSIGNED_INT:
      return static_cast<double>(value.value.uiVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
      return static_cast<double>(value.value.ulVal);
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
      return static_cast<double>(value.value.ullVal);
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
      return static_cast<double>(value.value.sllVal);
    case NVML_VALUE_TYPE_SIGNED_INT:
      return static_cast<double>(value.value.siVal);
    default:
      return std::nullopt;
  }
}

// A counter: nullopt also for a negative or non-integer value.
inline std::optional<std::uint64_t> field_as_u64(const nvmlFieldValue_t& value) {
  if (value.nvmlReturn != NVML_SUCCESS) return std::nullopt;
  switch (value.valueType) {
    case NVML_VALUE_TYPE_UNSIGNED_LONG_LONG:
      return value.value.ullVal;
    case NVML_VALUE_TYPE_UNSIGNED_LONG:
      return value.value.ulVal;
    case NVML_VALUE_TYPE_UNSIGNED_INT:
      return value.value.uiVal;
    case NVML_VALUE_TYPE_SIGNED_LONG_LONG:
      return value.value.sllVal >= 0 ? std::optional<std::uint64_t>(value.value.sllVal)
                                     : std::nullopt;
    default:
      return std::nullopt;
  }
}

}  // namespace gpuscope::nvml::detail
