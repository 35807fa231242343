// One table of an enum's names, as on the command line and in JSON, read in both directions.
#pragma once

#include <array>
#include <cstddef>
#include <optional>
#include <string_view>
#include <utility>

namespace gpuscope::workloads {

template <typename Enum, size_t N>
using EnumNames = std::array<std::pair<Enum, std::string_view>, N>;

// `value`'s name; a value missing from the table gets the first entry's.
template <typename Enum, size_t N>
std::string_view name_of(const EnumNames<Enum, N>& names, Enum value) {
  for (const auto& [v, name] : names) {
    if (v == value) return name;
  }
  return names.front().second;
}

// The value named `name`; nullopt for a name not in the table.
template <typename Enum, size_t N>
std::optional<Enum> value_named(const EnumNames<Enum, N>& names, std::string_view name) {
  for (const auto& [v, n] : names) {
    if (n == name) return v;
  }
  return std::nullopt;
}

}  // namespace gpuscope::workloads
