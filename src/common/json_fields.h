// Reading typed fields out of a JSON object with one error for the whole record: the first
// missing or mistyped field, named by its path ("runs[0].gpus[1].power_limit_w"). The field
// reader of gpuscope's JSON formats (info, burn, bench, monitor, the store's records).
#pragma once

#include <fmt/format.h>

#include <cstdint>
#include <limits>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpuscope/status.h"

namespace gpuscope::detail {

class JsonFields {
 public:
  JsonFields(const nlohmann::json& object, std::string where)
      : object_(object), where_(std::move(where)) {
    if (!object_.is_object()) fail("", "expected an object");
  }

  // The first problem found, or ok, and the key it is about ("" for the object itself).
  const Status& status() const { return status_; }
  const std::string& failed_key() const { return failed_key_; }
  const std::string& where() const { return where_; }
  const nlohmann::json& object() const { return object_; }

  // Each field by its type, optional (opt_*: absent or null is nullopt) or required (absent is
  // a problem, "missing"). A field of another type is a problem either way.

  std::optional<std::string> opt_text(const char* key) {
    return typed<std::string>(key, &nlohmann::json::is_string, "expected a string");
  }
  std::string text(const char* key) { return required(key, opt_text(key)); }
  std::optional<double> opt_number(const char* key) {
    return typed<double>(key, &nlohmann::json::is_number, "expected a number");
  }
  double number(const char* key) { return required(key, opt_number(key)); }
  std::optional<int> opt_int(const char* key) {
    return typed<int>(key, &nlohmann::json::is_number_integer, "expected an integer");
  }
  int integer(const char* key) { return required(key, opt_int(key)); }
  // A non-negative integer that fits T (unsigned, std::uint64_t).
  template <typename T>
  std::optional<T> opt_unsigned(const char* key) {
    const nlohmann::json* v = find(key);
    if (v == nullptr) return std::nullopt;
    if (!v->is_number_unsigned() && !(v->is_number_integer() && v->get<std::int64_t>() >= 0)) {
      fail(key, "expected a non-negative integer");
      return std::nullopt;
    }
    const auto value = v->get<std::uint64_t>();
    if (value > std::numeric_limits<T>::max()) {
      fail(key, "too large");
      return std::nullopt;
    }
    return static_cast<T>(value);
  }
  template <typename T>
  T count(const char* key) {
    return required(key, opt_unsigned<T>(key));
  }
  std::optional<bool> opt_bool(const char* key) {
    return typed<bool>(key, &nlohmann::json::is_boolean, "expected true or false");
  }
  bool boolean(const char* key) { return required(key, opt_bool(key)); }
  // An object or array member, or a null json when absent (null counts as absent).
  const nlohmann::json& member(const char* key) {
    const nlohmann::json* v = find(key);
    return v == nullptr ? null_ : *v;
  }
  // A list member; absent (or null) reads as an empty list.
  const nlohmann::json& list(const char* key) {
    const nlohmann::json* v = find(key);
    if (v == nullptr) return empty_list_;
    if (!v->is_array()) {
      fail(key, "expected a list");
      return empty_list_;
    }
    return *v;
  }
  // A list of strings; absent (or null) reads as none.
  std::vector<std::string> texts(const char* key) {
    std::vector<std::string> out;
    for (const nlohmann::json& item : list(key)) {
      if (!item.is_string()) {
        fail(key, "expected a list of strings");
        return {};
      }
      out.push_back(item.get<std::string>());
    }
    return out;
  }
  bool has(const char* key) const { return find(key) != nullptr; }

  void fail(std::string_view key, std::string_view why) {
    if (!status_.ok()) return;
    failed_key_ = key;
    // where.key, or the one of them there is (a document's top level has no where).
    const std::string path = key.empty()      ? where_
                             : where_.empty() ? std::string(key)
                                              : fmt::format("{}.{}", where_, key);
    status_ = Status(Code::data_error, fmt::format("{}: {}", path, why));
  }
  // Takes on the first problem of `member`, the reader of this object's member `key` (made with
  // where() + "." + key), as this object's problem with `key`.
  void take_problem(const char* key, const JsonFields& member) {
    if (!status_.ok() || member.status().ok()) return;
    failed_key_ = key;
    status_ = member.status();
  }

 private:
  template <typename T>
  T required(const char* key, std::optional<T> value) {
    if (!value && !has(key)) fail(key, "missing");
    return value.value_or(T{});
  }

  // The member `key` as T when `has_type` holds for it; absent (or null) reads as nullopt, any
  // other type fails with `expected`.
  template <typename T>
  std::optional<T> typed(const char* key, bool (nlohmann::json::*has_type)() const noexcept,
                         const char* expected) {
    const nlohmann::json* v = find(key);
    if (v == nullptr) return std::nullopt;
    if (!(v->*has_type)()) {
      fail(key, expected);
      return std::nullopt;
    }
    return v->get<T>();
  }

  const nlohmann::json* find(const char* key) const {
    if (!object_.is_object()) return nullptr;
    auto it = object_.find(key);
    if (it == object_.end() || it->is_null()) return nullptr;
    return &*it;
  }

  const nlohmann::json& object_;
  std::string where_;
  Status status_;
  std::string failed_key_;
  inline static const nlohmann::json null_{};
  inline static const nlohmann::json empty_list_ = nlohmann::json::array();
};

}  // namespace gpuscope::detail
