#include "inject/json_line.h"

#include <charconv>
#include <cmath>

namespace gpuscope::inject {
namespace {

constexpr std::string_view kReplacement = "\xEF\xBF\xBD";  // U+FFFD in UTF-8

// Length of the valid UTF-8 sequence starting at text[pos], or 0 if it is not valid
// (overlong forms, surrogates and code points above U+10FFFF are invalid).
size_t utf8_sequence_length(std::string_view text, size_t pos) {
  const auto byte = [&](size_t k) { return static_cast<unsigned char>(text[pos + k]); };
  const unsigned char lead = byte(0);
  size_t length = 0;
  uint32_t code = 0;
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    code = lead & 0x1Fu;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    code = lead & 0x0Fu;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    code = lead & 0x07u;
  } else {
    return 0;
  }
  if (pos + length > text.size()) return 0;
  for (size_t k = 1; k < length; ++k) {
    if ((byte(k) & 0xC0u) != 0x80u) return 0;
    code = (code << 6) | (byte(k) & 0x3Fu);
  }
  if (length == 3 && (code < 0x800 || (code >= 0xD800 && code <= 0xDFFF))) return 0;
  if (length == 4 && (code < 0x10000 || code > 0x10FFFF)) return 0;
  return length;
}

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

void append_json_string(std::string& out, std::string_view text) {
  static constexpr char kHex[] = "0123456789abcdef";
  out += '"';
  size_t pos = 0;
  while (pos < text.size()) {
    const auto c = static_cast<unsigned char>(text[pos]);
    if (c < 0x80) {
      switch (c) {
        case '"':
          out += "\\\"";
          break;
        case '\\':
          out += "\\\\";
          break;
        case '\n':
          out += "\\n";
          break;
        case '\r':
          out += "\\r";
          break;
        case '\t':
          out += "\\t";
          break;
        default:
          if (c < 0x20 || c == 0x7F) {
            out += "\\u00";
            out += kHex[c >> 4];
            out += kHex[c & 0xF];
          } else {
            out += static_cast<char>(c);
          }
      }
      ++pos;
      continue;
    }
    const size_t length = utf8_sequence_length(text, pos);
    if (length == 0) {
      out += kReplacement;
      ++pos;
    } else {
      out.append(text.substr(pos, length));
      pos += length;
    }
  }
  out += '"';
}

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
