// The names of an enum's values as one table that serves both ways: the name of a value (what a
// writer prints) and the value of a name (what its reader parses back). A table that names every
// value can say so at compile time (names_every_value), as -Wswitch would check a switch.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace gpuscope::detail {

template <typename Enum>
struct EnumName {
  Enum value;
  const char* name;
};

// The name `value` has in `names`, `fallback` when it has none.
template <typename Enum, std::size_t N>
constexpr const char* name_in(const EnumName<Enum> (&names)[N], Enum value,
                              const char* fallback = "unknown") {
  for (const EnumName<Enum>& n : names) {
    if (n.value == value) return n.name;
  }
  return fallback;
}

// The value named `name` in `names`, nullopt when none is.
template <typename Enum, std::size_t N>
constexpr std::optional<Enum> value_named(const EnumName<Enum> (&names)[N], std::string_view name) {
  for (const EnumName<Enum>& n : names) {
    if (n.name == name) return n.value;
  }
  return std::nullopt;
}

// Whether `names` lists the values 0, 1, ... `last` of Enum, in that order.
template <typename Enum, std::size_t N>
constexpr bool names_every_value(const EnumName<Enum> (&names)[N], Enum last) {
  if (static_cast<std::size_t>(last) + 1 != N) return false;
  for (std::size_t i = 0; i < N; ++i) {
    if (static_cast<std::size_t>(names[i].value) != i) return false;
  }
  return true;
}

}  // namespace gpuscope::detail
