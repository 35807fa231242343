// Strict reading of scenario JSON: typed fields, errors that name the JSON path, and a check
// that every key of an object was understood.
#pragma once

#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <utility>

#include <nlohmann/json.hpp>

#include "scenario.h"

namespace gpuscope::fake_nvml {

// Converts `value` (found at `path`) to T, or throws ScenarioError. T is one of bool, int,
// unsigned, unsigned long long, double, std::string.
template <class T>
T json_as(const nlohmann::json& value, const std::string& path);
template <>
bool json_as<bool>(const nlohmann::json& value, const std::string& path);
template <>
int json_as<int>(const nlohmann::json& value, const std::string& path);
template <>
unsigned json_as<unsigned>(const nlohmann::json& value, const std::string& path);
template <>
unsigned long long json_as<unsigned long long>(const nlohmann::json& value,
                                               const std::string& path);
template <>
double json_as<double>(const nlohmann::json& value, const std::string& path);
template <>
std::string json_as<std::string>(const nlohmann::json& value, const std::string& path);

// Reads one JSON object. Keys read through it are remembered, and finish() rejects the rest,
// so that a misspelled key is an error instead of a silently absent feature.
class ObjectReader {
 public:
  // Throws ScenarioError when `object` is not an object.
  ObjectReader(const nlohmann::json& object, std::string path);

  template <class T>
  std::optional<T> optional(std::string_view key) {
    const nlohmann::json* value = child(key);
    if (value == nullptr) return std::nullopt;
    return json_as<T>(*value, path_of(key));
  }

  template <class T>
  T required(std::string_view key) {
    const nlohmann::json* value = child(key);
    if (value == nullptr) throw ScenarioError(path_of(key) + ": required");
    return json_as<T>(*value, path_of(key));
  }

  template <class T>
  T value_or(std::string_view key, T fallback) {
    return optional<T>(key).value_or(std::move(fallback));
  }

  // The member object `key` as `read(ObjectReader&)` returns it, every key of it checked as
  // finish() checks; nullopt when it is absent.
  template <class Read>
  auto nested(std::string_view key, Read read)
      -> std::optional<decltype(read(std::declval<ObjectReader&>()))> {
    const nlohmann::json* value = child(key);
    if (value == nullptr) return std::nullopt;
    ObjectReader reader(*value, path_of(key));
    auto result = read(reader);
    reader.finish();
    return result;
  }

  // The member `key` (a JSON null counts as absent), or nullptr.
  const nlohmann::json* child(std::string_view key);

  std::string path_of(std::string_view key) const;

  // Throws ScenarioError naming the first key that no accessor asked for.
  void finish() const;

 private:
  const nlohmann::json& object_;
  std::string path_;
  std::set<std::string, std::less<>> read_;
};

}  // namespace gpuscope::fake_nvml
