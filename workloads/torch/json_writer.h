// A minimal JSON object writer for the one-line records gpuscope-torch prints: keys in insertion
// order, strings escaped, non-finite numbers written as null (JSON has no NaN).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace gpuscope::workloads {

class JsonObject {
 public:
  JsonObject& add(std::string_view key, std::string_view value);
  JsonObject& add(std::string_view key, const char* value) {
    return add(key, std::string_view(value));
  }
  JsonObject& add(std::string_view key, bool value);
  JsonObject& add(std::string_view key, int64_t value);
  JsonObject& add(std::string_view key, int value) { return add(key, static_cast<int64_t>(value)); }
  JsonObject& add(std::string_view key, double value);
  JsonObject& add(std::string_view key, std::span<const double> values);
  JsonObject& add(std::string_view key, const JsonObject& object);
  JsonObject& add_null(std::string_view key);
  // `json` must already be valid JSON (an array or object built elsewhere).
  JsonObject& add_raw(std::string_view key, std::string_view json);
  template <typename T>
  JsonObject& add(std::string_view key, const std::optional<T>& value) {
    return value ? add(key, *value) : add_null(key);
  }

  // The object as one line: {"k":v,...}.
  std::string str() const { return "{" + body_ + "}"; }

 private:
  void key(std::string_view name);
  std::string body_;
};

// `text` as a JSON string literal, quotes included (gpuscope_common's escaping: invalid UTF-8
// bytes become U+FFFD, so the line always parses).
std::string json_quote(std::string_view text);
// A double as JSON: shortest round-trip form, null when not finite.
std::string json_number(double value);

// A JSON array, [a,b,...]: `to_json(item)` writes each item of `items` as JSON.
template <typename Items, typename ToJson>
std::string json_array(const Items& items, ToJson to_json) {
  std::string out = "[";
  for (const auto& item : items) {
    if (out.size() > 1) out += ',';
    out += to_json(item);
  }
  return out + "]";
}

}  // namespace gpuscope::workloads
