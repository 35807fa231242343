#include "trace/trace_export.h"

#include <gtest/gtest.h>

#include <map>
#include <sstream>
#include <vector>

#include "trace/timeline_fixture.h"

namespace gpuscope::trace::detail {
namespace {

using nlohmann::json;

// The Trace Event format's rules the viewers depend on: required fields per phase, and slices of
// one track that nest or are disjoint (a partial overlap draws wrongly in Perfetto).
void expect_valid_trace(const json& doc) {
  ASSERT_TRUE(doc.is_object());
  ASSERT_TRUE(doc["traceEvents"].is_array());
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::pair<double, double>>> tracks;
  for (const json& e : doc["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("tid") && e.contains("name"))
        << e;
    const std::string ph = e["ph"];
    if (ph == "M") continue;
    ASSERT_TRUE(e["ts"].is_number()) << e;
    if (ph == "X") {
      ASSERT_TRUE(e["dur"].is_number()) << e;
      ASSERT_GE(e["dur"].get<double>(), 0) << e;
      tracks[{e["pid"], e["tid"]}].push_back(
          {e["ts"], e["ts"].get<double>() + e["dur"].get<double>()});
    } else if (ph == "C") {
      for (const auto& [k, v] : e["args"].items()) EXPECT_TRUE(v.is_number()) << e;
    } else {
      EXPECT_TRUE(ph == "i") << e;
    }
  }
  for (auto& [track, slices] : tracks) {
    std::sort(slices.begin(), slices.end());
    std::vector<double> open;  // ends of the enclosing slices
    for (const auto& [start, end] : slices) {
      while (!open.empty() && open.back() <= start + 1e-6) open.pop_back();
      if (!open.empty()) {
        EXPECT_LE(end, open.back() + 1e-6)
            << "partial overlap on track " << track.first << "/" << track.second;
      }
      open.push_back(end);
    }
  }
}

TEST(TraceExport, AStarvedLoopBecomesAValidTraceWithEveryTrack) {
  Timeline t = starved_loop(6, true);
  TraceSummary s = summarize(t, {}, {});
  std::vector<CounterSample> counters = {
      {t.gpu.front().start_ns, 0, {{"sm_active", 0.3}, {"power_w", 310}}}};
  ExportOptions o;
  o.metadata = {{"command", "python3 train.py"}};
  std::ostringstream out;
  ExportCounts counts = export_chrome_trace(t, s, counters, o, out);
  json doc = json::parse(out.str());
  expect_valid_trace(doc);
  EXPECT_EQ(counts.dropped, 0u);
  int steps = 0, kernels = 0, copies = 0, waits = 0, api = 0, counters_seen = 0;
  bool gpu_named = false;
  for (const json& e : doc["traceEvents"]) {
    const std::string cat = e.value("cat", "");
    steps += cat == "step" ? 1 : 0;
    kernels += cat == "kernel" ? 1 : 0;
    copies += cat == "memcpy" ? 1 : 0;
    waits += cat == "data_wait" ? 1 : 0;
    api += cat == "cuda_api" ? 1 : 0;
    counters_seen += e["ph"] == "C" ? 1 : 0;
    if (e["name"] == "process_name" && e["args"]["name"] == "GPU 0") gpu_named = true;
    if (cat == "memcpy") {
      EXPECT_EQ(e["name"], "HtoD pageable 64.0 MiB");
    }
  }
  EXPECT_EQ(steps, 5);
  EXPECT_EQ(kernels, 24);
  EXPECT_EQ(copies, 6);
  EXPECT_EQ(waits, 6);
  EXPECT_EQ(api, 24);
  EXPECT_EQ(counters_seen, 2);
  EXPECT_TRUE(gpu_named);
  EXPECT_EQ(doc["metadata"]["command"], "python3 train.py");
}

TEST(TraceExport, TheCapKeepsStepsAndSaysWhatWasDropped) {
  Timeline t = starved_loop(6, true);
  TraceSummary s = summarize(t, {}, {});
  ExportOptions o;
  o.limits.max_events = 10;
  std::ostringstream out;
  ExportCounts counts = export_chrome_trace(t, s, {}, o, out);
  json doc = json::parse(out.str());
  expect_valid_trace(doc);
  EXPECT_EQ(counts.written, 10u);
  EXPECT_GT(counts.dropped, 0u);
  int steps = 0;
  for (const json& e : doc["traceEvents"]) steps += e.value("cat", "") == "step" ? 1 : 0;
  EXPECT_EQ(steps, 5);
  EXPECT_GT(doc["metadata"]["dropped_events"]["kernel"].get<int>(), 0);
}

}  // namespace
}  // namespace gpuscope::trace::detail
