#include "json_reader.h"

#include <limits>

namespace gpuscope::fake_nvml {
namespace {

template <class T>
T unsigned_as(const nlohmann::json& value, const std::string& path) {
  if (!value.is_number_unsigned() && !(value.is_number_integer() && value.get<long long>() >= 0)) {
    throw ScenarioError(path + ": expected a non-negative integer");
  }
  const auto number = value.get<unsigned long long>();
  if (number > std::numeric_limits<T>::max()) throw ScenarioError(path + ": too large");
  return static_cast<T>(number);
}

}  // namespace

template <>
bool json_as<bool>(const nlohmann::json& value, const std::string& path) {
  if (!value.is_boolean()) throw ScenarioError(path + ": expected true or false");
  return value.get<bool>();
}

template <>
unsigned json_as<unsigned>(const nlohmann::json& value, const std::string& path) {
  return unsigned_as<unsigned>(value, path);
}

template <>
unsigned long long json_as<unsigned long long>(const nlohmann::json& value,
                                               const std::string& path) {
  return unsigned_as<unsigned long long>(value, path);
}

template <>
int json_as<int>(const nlohmann::json& value, const std::string& path) {
  if (!value.is_number_integer()) throw ScenarioError(path + ": expected an integer");
  const auto number = value.get<long long>();
  if (number < std::numeric_limits<int>::min() || number > std::numeric_limits<int>::max()) {
    throw ScenarioError(path + ": out of range");
  }
  return static_cast<int>(number);
}

template <>
double json_as<double>(const nlohmann::json& value, const std::string& path) {
  if (!value.is_number()) throw ScenarioError(path + ": expected a number");
  return value.get<double>();
}

template <>
std::string json_as<std::string>(const nlohmann::json& value, const std::string& path) {
  if (!value.is_string()) throw ScenarioError(path + ": expected a string");
  return value.get<std::string>();
}

ObjectReader::ObjectReader(const nlohmann::json& object, std::string path)
    : object_(object), path_(std::move(path)) {
  if (!object_.is_object()) throw ScenarioError(path_ + ": expected an object");
}

const nlohmann::json* ObjectReader::child(std::string_view key) {
  read_.emplace(key);
  const auto it = object_.find(key);
  if (it == object_.end() || it->is_null()) return nullptr;
  return &*it;
}

std::string ObjectReader::path_of(std::string_view key) const {
  return path_.empty() ? std::string(key) : path_ + "." + std::string(key);
}

void ObjectReader::finish() const {
  for (const auto& [key, value] : object_.items()) {
    if (!read_.contains(key)) throw ScenarioError(path_of(key) + ": unknown key");
  }
}

}  // namespace gpuscope::fake_nvml
