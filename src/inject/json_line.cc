#include "inject/json_line.h"

#include <charconv>
#include <cmath>

namespace gpuscope::inject {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

void append_utf8(std::string& out, uint32_t code) {
  if (code > 0x10FFFF || (code >= 0xD800 && code <= 0xDFFF)) {
    out += kReplacement;
  } else if (code < 0x80) {
    out += static_cast<char>(code);
  } else if (code < 0x800) {
    out += static_cast<char>(0xC0 | (code >> 6));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else if (code < 0x10000) {
    out += static_cast<char>(0xE0 | (code >> 12));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (code >> 18));
    out += static_cast<char>(0x80 | ((code >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((code >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (code & 0x3F));
  }
}

template <typename T>
void append_number(std::string& out, T value) {
  char digits[32];
  const auto [end, error] = std::to_chars(digits, digits + sizeof digits, value);
  out.append(digits, error == std::errc{} ? end : digits);
}

}  // namespace

std::string wide_to_utf8(const wchar_t* text) {
  std::string out;
  if (text == nullptr) return out;
  for (; *text != L'\0'; ++text) append_utf8(out, static_cast<uint32_t>(*text));
  return out;
}

JsonLine::JsonLine(std::string& out, std::string_view type) : out_(out) {
  out_.clear();
  out_ += "{\"t\":";
  append_json_string(out_, type);
}

void JsonLine::key(std::string_view name) {
  out_ += ',';
  append_json_string(out_, name);
  out_ += ':';
}

JsonLine& JsonLine::u(std::string_view name, uint64_t value) {
  key(name);
  append_number(out_, value);
  return *this;
}

JsonLine& JsonLine::i(std::string_view name, int64_t value) {
  key(name);
  append_number(out_, value);
  return *this;
}

JsonLine& JsonLine::d(std::string_view name, double value) {
  key(name);
  if (std::isfinite(value)) {
    append_number(out_, value);
  } else {
    out_ += "null";
  }
  return *this;
}

JsonLine& JsonLine::b(std::string_view name, bool value) {
  key(name);
  out_ += value ? "true" : "false";
  return *this;
}

JsonLine& JsonLine::s(std::string_view name, std::string_view value) {
  key(name);
  append_json_string(out_, value);
  return *this;
}

JsonLine& JsonLine::u3(std::string_view name, uint64_t x, uint64_t y, uint64_t z) {
  key(name);
  out_ += '[';
  append_number(out_, x);
  out_ += ',';
  append_number(out_, y);
  out_ += ',';
  append_number(out_, z);
  out_ += ']';
  return *this;
}

JsonLine& JsonLine::raw(std::string_view name, std::string_view json) {
  key(name);
  out_ += json;
  return *this;
}

std::string_view JsonLine::end() {
  out_ += "}\n";
  return out_;
}

}  // namespace gpuscope::inject
