// Helpers for building JSON documents with nlohmann::json.
#pragma once

#include <cmath>
#include <optional>
#include <type_traits>

#include <nlohmann/json.hpp>

namespace gpuscope {

// Sets object[key] to the value when there is one: missing data stays absent, never 0 or null.
// A floating-point value that is not finite is absent too (JSON has no NaN or infinity).
template <typename T>
void put(nlohmann::json& object, const char* key, const std::optional<T>& value) {
  if (!value) return;
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(*value)) return;
  }
  object[key] = *value;
}

}  // namespace gpuscope
