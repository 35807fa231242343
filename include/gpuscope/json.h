// Helpers for building JSON documents with nlohmann::json.
#pragma once

#include <cmath>
#include <optional>
#include <type_traits>

#include <nlohmann/json.hpp>
#include <string_view>

#include "gpuscope/status.h"

namespace gpuscope {

// {"schema_version": N, "kind": KIND, "error": {"code", "message"}}: the JSON document of a
// command that failed (`info --json`, `burn --json`).
inline nlohmann::json error_document(std::string_view kind, int schema_version,
                                     const Status& status) {
  return {{"schema_version", schema_version},
          {"kind", kind},
          {"error", {{"code", code_name(status.code())}, {"message", status.message()}}}};
}

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
