#include "trace/chrome_trace.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <vector>

namespace gpuscope::trace::detail {
namespace {

using nlohmann::json;

json parse(const std::string& text) {
  return json::parse(text);
}

TEST(ChromeTrace, WritesTheObjectFormWithMicrosecondsFromTheOrigin) {
  std::ostringstream out;
  ChromeTraceWriter w(out, 1'000'000'000);
  w.process_name(1, "GPU 0", 0);
  w.thread_name(1, 7, "stream 7", 1);
  json args = {{"grid", "[1,2,3]"}};
  EXPECT_TRUE(w.complete(1, 7, "gemm", "kernel", 1'000'002'500, 1500, &args));
  EXPECT_TRUE(w.instant(42, 42, "gpuscope.step", "step", 1'000'010'000));
  EXPECT_TRUE(w.counter(1, "power", 1'000'020'000, {{"W", 350.5}}));
  w.finish({{"command", "python3 train.py"}});

  json doc = parse(out.str());
  ASSERT_TRUE(doc["traceEvents"].is_array());
  EXPECT_EQ(doc["displayTimeUnit"], "ms");
  const json* kernel = nullptr;
  for (const json& e : doc["traceEvents"]) {
    // Every event carries what the viewers need.
    for (const char* key : {"name", "ph", "pid", "tid"}) EXPECT_TRUE(e.contains(key)) << e;
    if (e["ph"] != "M") {
      EXPECT_TRUE(e.contains("ts")) << e;
    }
    if (e["name"] == "gemm") kernel = &e;
  }
  ASSERT_NE(kernel, nullptr);
  EXPECT_DOUBLE_EQ((*kernel)["ts"].get<double>(), 2.5);
  EXPECT_DOUBLE_EQ((*kernel)["dur"].get<double>(), 1.5);
  EXPECT_EQ((*kernel)["args"]["grid"], "[1,2,3]");
  EXPECT_EQ(doc["metadata"]["command"], "python3 train.py");
  EXPECT_EQ(doc["metadata"]["events_written"], 3);
  EXPECT_TRUE(doc["metadata"]["dropped_events"].empty());
}

TEST(ChromeTrace, CapsEventsAndCountsWhatWasDroppedPerCategory) {
  std::ostringstream out;
  ChromeTraceWriter w(out, 0, ChromeTraceWriter::Limits{.max_events = 3});
  w.process_name(1, "GPU 0", 0);  // metadata never counts against the cap
  int admitted = 0;
  for (int i = 0; i < 5; ++i) admitted += w.complete(1, 1, "k", "kernel", i * 10, 5) ? 1 : 0;
  for (int i = 0; i < 2; ++i) admitted += w.complete(1, 2, "copy", "memcpy", i * 10, 5) ? 1 : 0;
  w.finish({});
  EXPECT_EQ(admitted, 3);
  EXPECT_EQ(w.events_dropped(), 4u);
  json doc = parse(out.str());
  EXPECT_EQ(doc["metadata"]["dropped_events"]["kernel"], 2);
  EXPECT_EQ(doc["metadata"]["dropped_events"]["memcpy"], 2);
  int slices = 0;
  for (const json& e : doc["traceEvents"]) slices += e["ph"] == "X" ? 1 : 0;
  EXPECT_EQ(slices, 3);
}

TEST(ChromeTrace, AnyBytesInANameStillMakeValidJson) {
  std::ostringstream out;
  ChromeTraceWriter w(out, 0);
  const std::string bad = std::string("range \xff\xfe \"quoted\" \\ \n end") + '\0' + "tail";
  EXPECT_TRUE(w.complete(1, 1, bad, "nvtx", 0, 10));
  w.finish({});
  json doc = parse(out.str());  // throws on invalid JSON
  EXPECT_NE(doc["traceEvents"][0]["name"].get<std::string>().find("\"quoted\""), std::string::npos);
}

TEST(ChromeTrace, NegativeDurationsAreWrittenAsZero) {
  std::ostringstream out;
  ChromeTraceWriter w(out, 0);
  w.complete(1, 1, "k", "kernel", 100, -50);
  w.finish({});
  EXPECT_EQ(parse(out.str())["traceEvents"][0]["dur"].get<double>(), 0.0);
}

}  // namespace
}  // namespace gpuscope::trace::detail
