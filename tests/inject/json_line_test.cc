#include "inject/json_line.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

namespace gpuscope::inject {
namespace {

std::string escaped(std::string_view text) {
  std::string out;
  append_json_string(out, text);
  return out;
}

TEST(JsonLine, EscapesQuotesBackslashesAndControlCharacters) {
  EXPECT_EQ(escaped("a\"b\\c\nd\te\x01\x7f"), R"("a\"b\\c\nd\te\u0001\u007f")");
}

TEST(JsonLine, KeepsValidUtf8AndReplacesEveryInvalidByte) {
  EXPECT_EQ(escaped("caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80"),
            "\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  // A lone continuation byte, a cut sequence, an overlong '/', a surrogate, and 0xFF.
  const std::string bad = escaped("\x80|\xe2\x82|\xc0\xaf|\xed\xa0\x80|\xff");
  const auto parsed = nlohmann::json::parse(bad);  // throws if not valid JSON/UTF-8
  EXPECT_EQ(parsed.get<std::string>(),
            "\uFFFD|\uFFFD\uFFFD|\uFFFD\uFFFD|\uFFFD\uFFFD\uFFFD|\uFFFD");
}

TEST(JsonLine, ConvertsWideStrings) {
  EXPECT_EQ(wide_to_utf8(L"x\u00e9\U0001F600"), "x\xc3\xa9\xf0\x9f\x98\x80");
  EXPECT_EQ(wide_to_utf8(nullptr), "");
}

TEST(JsonLine, BuildsOneObjectPerLine) {
  std::string out = "left over";
  const std::string_view line = JsonLine(out, "kernel")
                                    .u("start", 18446744073709551615u)
                                    .i("delta", -3)
                                    .d("ratio", 0.5)
                                    .d("nan", 0.0 / 0.0)
                                    .b("ok", true)
                                    .s("name", "k<\"x\">")
                                    .u3("grid", 1, 2, 3)
                                    .raw("window", R"({"steps":3})")
                                    .end();
  ASSERT_EQ(line.back(), '\n');
  const auto parsed = nlohmann::json::parse(line);
  EXPECT_EQ(parsed["t"], "kernel");
  EXPECT_EQ(parsed["start"].get<uint64_t>(), 18446744073709551615u);
  EXPECT_EQ(parsed["delta"], -3);
  EXPECT_EQ(parsed["ratio"], 0.5);
  EXPECT_TRUE(parsed["nan"].is_null());
  EXPECT_EQ(parsed["ok"], true);
  EXPECT_EQ(parsed["name"], "k<\"x\">");
  EXPECT_EQ(parsed["grid"], nlohmann::json::parse("[1,2,3]"));
  EXPECT_EQ(parsed["window"]["steps"], 3);
}

}  // namespace
}  // namespace gpuscope::inject
