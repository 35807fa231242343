// gpuscope_common's small helpers: durations, the time, the host name, put(optional).
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <optional>
#include <string>

#include "gpuscope/clock.h"
#include "gpuscope/host.h"
#include "gpuscope/json.h"
#include "gpuscope/json_text.h"

namespace gpuscope {
namespace {

TEST(FormatDuration, CompactAsBenchsProgressLine) {
  EXPECT_EQ(format_duration(0, DurationStyle::compact), "0s");
  EXPECT_EQ(format_duration(42.4, DurationStyle::compact), "42s");
  EXPECT_EQ(format_duration(250, DurationStyle::compact), "4m10s");
  EXPECT_EQ(format_duration(3720, DurationStyle::compact), "1h02m");
  EXPECT_EQ(format_duration(-3, DurationStyle::compact), "0s");
}

TEST(FormatDuration, ClockAsStudysProgress) {
  EXPECT_EQ(format_duration(0, DurationStyle::clock), "0:00");
  EXPECT_EQ(format_duration(65, DurationStyle::clock), "1:05");
  EXPECT_EQ(format_duration(3723, DurationStyle::clock), "1:02:03");
  EXPECT_EQ(format_duration(-5, DurationStyle::clock), "0:00");
}

TEST(UnixNow, IsTheSystemClockInSeconds) {
  const double before = static_cast<double>(std::time(nullptr));
  const double now = unix_now_s();
  EXPECT_GE(now, before);
  EXPECT_LT(now, before + 5);
}

TEST(HostName, IsGethostnames) {
  char name[256] = {};
  ASSERT_EQ(::gethostname(name, sizeof name - 1), 0);
  EXPECT_EQ(host_name(), std::string(name));
  EXPECT_FALSE(host_name().empty());
}

TEST(PutOptional, WritesOnlyWhatIsThere) {
  nlohmann::json j = nlohmann::json::object();
  put(j, "absent", std::optional<double>());
  put(j, "watts", std::optional<double>(250.5));
  put(j, "count", std::optional<int>(3));
  put(j, "name", std::optional<std::string>("H100"));
  put(j, "nan", std::optional<double>(std::nan("")));
  put(j, "inf", std::optional<double>(std::numeric_limits<double>::infinity()));
  EXPECT_EQ(j.dump(), R"({"count":3,"name":"H100","watts":250.5})");
}

TEST(JsonText, EscapesAndReplacesInvalidUtf8) {
  std::string out;
  append_json_string(out, "a\"b\\c\n\x01\x7f \xc3\xa9 \xff");
  EXPECT_EQ(out, "\"a\\\"b\\\\c\\n\\u0001\\u007f \xc3\xa9 \xef\xbf\xbd\"");
  EXPECT_EQ(nlohmann::json::parse(out).get<std::string>(),
            "a\"b\\c\n\x01\x7f \xc3\xa9 \xef\xbf\xbd");
}

}  // namespace
}  // namespace gpuscope
