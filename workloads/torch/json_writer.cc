#include "json_writer.h"

#include "gpuscope/json_text.h"

#include <charconv>
#include <cmath>

namespace gpuscope::workloads {

std::string json_quote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  append_json_string(out, text);
  return out;
}

std::string json_number(double value) {
  if (!std::isfinite(value)) return "null";
  char buffer[32];
  const auto [end, ec] = std::to_chars(buffer, buffer + sizeof buffer, value);
  if (ec != std::errc()) return "null";
  return std::string(buffer, end);
}

void JsonObject::key(std::string_view name) {
  if (!body_.empty()) body_ += ',';
  body_ += json_quote(name);
  body_ += ':';
}

JsonObject& JsonObject::add(std::string_view name, std::string_view value) {
  key(name);
  body_ += json_quote(value);
  return *this;
}

JsonObject& JsonObject::add(std::string_view name, bool value) {
  key(name);
  body_ += value ? "true" : "false";
  return *this;
}

JsonObject& JsonObject::add(std::string_view name, int64_t value) {
  key(name);
  body_ += std::to_string(value);
  return *this;
}

JsonObject& JsonObject::add(std::string_view name, double value) {
  key(name);
  body_ += json_number(value);
  return *this;
}

JsonObject& JsonObject::add(std::string_view name, std::span<const double> values) {
  key(name);
  body_ += '[';
  for (size_t i = 0; i < values.size(); ++i) {
    if (i > 0) body_ += ',';
    body_ += json_number(values[i]);
  }
  body_ += ']';
  return *this;
}

JsonObject& JsonObject::add(std::string_view name, const JsonObject& object) {
  key(name);
  body_ += object.str();
  return *this;
}

JsonObject& JsonObject::add_raw(std::string_view name, std::string_view json) {
  key(name);
  body_ += json;
  return *this;
}

JsonObject& JsonObject::add_null(std::string_view name) {
  key(name);
  body_ += "null";
  return *this;
}

}  // namespace gpuscope::workloads
