// A trace run in the store and the report: `gpuscope trace`'s summary.json (here: the analysis of
// the H100 recording kept as a fixture) read as a "trace" run, stored and loaded back, and the
// report's trace section drawn from it, with its timeline in the HTML page.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>
#include <set>
#include <sstream>

#include "gpuscope/report.h"
#include "gpuscope/reporter.h"
#include "gpuscope/store.h"
#include "gpuscope/trace.h"
#include "report_document_util.h"
#include "store/trace_names.h"
#include "support/matchers.h"

namespace gpuscope::report {
namespace {

using testing::find_block;

using gpuscope::testing::HasAllSubstrs;
using ::testing::HasSubstr;
namespace names = store::names;

const nlohmann::json& smoke_summary() {
  static const nlohmann::json summary = [] {
    // The analysis writes trace.json beside the records: on a copy of the fixture.
    // One folder per process: CTest runs the tests of this file in parallel processes.
    const std::filesystem::path dir =
        ::testing::TempDir() + "/report_trace_smoke." + std::to_string(getpid());
    std::filesystem::remove_all(dir);
    std::filesystem::create_directories(dir);
    std::filesystem::copy(std::string(GPUSCOPE_TEST_FIXTURES) + "/trace/h100_smoke_window", dir);
    auto s = trace::analyse_trace_dir(dir, std::nullopt);
    EXPECT_TRUE(s.ok()) << s.status().message();
    nlohmann::json j = s.ok() ? *s : nlohmann::json::object();
    j["command"] = {"python3", "smoke_train.py"};
    return j;
  }();
  return summary;
}

store::RunData smoke_run() {
  auto runs = store::runs_from_document(smoke_summary());
  EXPECT_TRUE(runs.ok()) << runs.status().message();
  EXPECT_EQ(runs->size(), 1u);
  return runs->front();
}

std::size_t count(const store::RunData& run, const char* name) {
  std::size_t n = 0;
  for (const store::Measurement& m : run.measurements) n += m.name == name;
  return n;
}

TEST(TraceRun, ASummaryIsATraceRunWithItsStepsAndTimeline) {
  const store::RunData run = smoke_run();
  EXPECT_EQ(run.run.kind, "trace");
  EXPECT_EQ(run.run.command_line, "gpuscope trace -- python3 smoke_train.py");
  const auto traced = smoke_summary()["steps"]["traced"].get<std::size_t>();
  ASSERT_GT(traced, 0u);
  EXPECT_EQ(count(run, names::kTraceStepWall), traced);
  EXPECT_EQ(count(run, names::kTraceStepKernels), traced);
  EXPECT_EQ(count(run, names::kTraceTimelineStep), 3u);
  EXPECT_GT(count(run, names::kTraceTimelineInterval), 10u);
  EXPECT_GT(count(run, names::kTraceKernelTime), 0u);
  bool median = false;
  for (const store::Measurement& m : run.measurements) {
    if (m.name == names::kTraceStepTime && m.tags.value("stat", "") == "median") {
      median = true;
      EXPECT_NEAR(*m.value, smoke_summary()["steps"]["median_s"].get<double>(), 1e-12);
      EXPECT_EQ(m.unit, "s");
    }
  }
  EXPECT_TRUE(median);
}

TEST(TraceRun, ANewerSchemaIsRefused) {
  nlohmann::json summary = smoke_summary();
  summary["schema_version"] = 99;
  EXPECT_EQ(store::runs_from_document(summary).status().code(), Code::data_error);
}

TEST(TraceRun, TheStoreKeepsItWhole) {
  const std::string path =
      ::testing::TempDir() + "/trace_run_store." + std::to_string(getpid()) + ".db";
  std::filesystem::remove(path);
  store::RunData run = smoke_run();
  run.run.started_unix_s = 1.8e9;
  auto opened = store::Store::open(path);
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  auto id = (*opened)->write(run);
  ASSERT_TRUE(id.ok()) << id.status().message();
  auto loaded = (*opened)->load_run(*id);
  ASSERT_TRUE(loaded.ok());
  EXPECT_EQ(loaded->run.kind, "trace");
  EXPECT_EQ(loaded->measurements.size(), run.measurements.size());
  EXPECT_EQ(count(*loaded, names::kTraceTimelineInterval),
            count(run, names::kTraceTimelineInterval));
}

TEST(TraceReport, TheSectionGivesTheWindowEachStepAndAFewOnATimeline) {
  ReportOptions options;
  options.generated_utc = "2026-11-25T12:00:00Z";
  const Document doc = build_report({smoke_run()}, options);
  std::vector<std::string> keys;
  for (const Section& s : doc.sections) keys.push_back(s.key);
  EXPECT_THAT(keys, ::testing::Contains("trace"));
  EXPECT_THAT(keys, ::testing::Not(::testing::Contains("other")))
      << "trace measurements are the trace section's";
  const auto traced = smoke_summary()["steps"]["traced"].get<std::size_t>();
  const Table* steps = find_block<Table>(doc, "trace_steps");
  ASSERT_NE(steps, nullptr);
  EXPECT_EQ(steps->rows.size(), traced);
  ASSERT_NE(find_block<Table>(doc, "trace_overview"), nullptr);
  ASSERT_NE(find_block<Table>(doc, "trace_kernel_time"), nullptr);
  const Chart* timeline = find_block<Chart>(doc, "trace_timeline");
  ASSERT_NE(timeline, nullptr);
  EXPECT_EQ(timeline->kind, ChartKind::timeline);
  std::set<std::string> series, rows;
  for (const Series& s : timeline->series) {
    series.insert(s.name);
    ASSERT_EQ(s.x.size(), s.categories.size());
    ASSERT_EQ(s.y.size(), s.categories.size());
    for (std::size_t i = 0; i < s.x.size(); ++i) EXPECT_LE(s.x[i], s.y[i]);
    rows.insert(s.categories.begin(), s.categories.end());
  }
  EXPECT_TRUE(series.count("step"));
  EXPECT_TRUE(rows.count("steps"));
  EXPECT_GE(rows.size(), 3u) << "steps, a GPU stream, the main thread at least";
  bool headline = false;
  for (const Headline& h : doc.summary)
    headline = headline || h.label == "Traced step time (median)";
  EXPECT_TRUE(headline);
}

TEST(TraceReport, TheHtmlPageDrawsTheTimelineAsBarsOnRows) {
  ReportOptions options;
  options.generated_utc = "2026-11-25T12:00:00Z";
  const Document doc = build_report({smoke_run()}, options);
  std::ostringstream out;
  auto reporter = make_reporter("html", out);
  if (reporter.status().code() == Code::not_supported) GTEST_SKIP() << "built without plotly.js";
  ASSERT_TRUE(reporter.ok());
  ASSERT_TRUE(write_document(**reporter, doc).ok());
  const std::string html = out.str();
  EXPECT_THAT(html, HasAllSubstrs({"trace-timeline", "\"orientation\":\"h\"", "\"base\":["}));
  std::ostringstream json_out;
  auto json = make_reporter("json", json_out);
  ASSERT_TRUE(write_document(**json, doc).ok());
  EXPECT_THAT(json_out.str(), HasSubstr("\"kind\": \"timeline\""));
}

}  // namespace
}  // namespace gpuscope::report
