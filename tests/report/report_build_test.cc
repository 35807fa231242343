// gpuscope report's document, built from the fixtures: the H100 recordings (info, burn worker)
// and the hand-made telemetry, bench and sweep runs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <filesystem>

#include "gpuscope/report.h"
#include "gpuscope/telemetry.h"
#include "report_document_util.h"

namespace gpuscope::report {
namespace {

using testing::find_block;

using ::testing::Contains;
using ::testing::HasSubstr;

std::string fixture(const std::string& path) {
  return std::string(GPUSCOPE_TEST_FIXTURES) + "/" + path;
}

std::vector<std::string> all_fixtures() {
  return {fixture("report/h100_burn_worker_2026-11-22.jsonl"),
          fixture("info/h100_recorded_2026-11-22.json"),
          fixture("report/h100_monitor_2026-11-22.jsonl"),
          fixture("report/telemetry_handmade.records.json"),
          fixture("report/bench_handmade.records.json"),
          fixture("report/sweep_rtx3090_handmade.records.json")};
}

ReportOptions pinned_options() {
  ReportOptions options;
  options.generated_utc = "2026-11-22T12:00:00Z";
  return options;
}

std::vector<std::string> section_keys(const Document& doc) {
  std::vector<std::string> keys;
  for (const Section& s : doc.sections) keys.push_back(s.key);
  return keys;
}

const Headline* headline(const Document& doc, const std::string& label) {
  for (const Headline& h : doc.summary) {
    if (h.label == label) return &h;
  }
  return nullptr;
}

TEST(ReportBuildTest, FixturesGiveEverySectionAndTheAnswerFirst) {
  auto runs = load_runs(all_fixtures(), {});
  ASSERT_TRUE(runs.ok()) << runs.status().to_string();
  Document doc = build_report(*runs, pinned_options());
  EXPECT_THAT(section_keys(doc),
              ::testing::ElementsAre("burn", "telemetry", "bench", "sweep", "systems", "runs"));
  EXPECT_EQ(doc.context.sources.size(), 6u);

  const Headline* fastest = headline(doc, "Fastest matrix rate");
  ASSERT_NE(fastest, nullptr);
  EXPECT_NEAR(std::get<double>(fastest->value), 1.3465e15, 0.001e15);  // int8, RESULTS.md
  EXPECT_THAT(fastest->detail, HasSubstr("int8"));
  const Headline* best = headline(doc, "Best % of datasheet peak");
  ASSERT_NE(best, nullptr);
  EXPECT_NEAR(std::get<double>(best->value), 54.14 / 66.9, 0.002);  // fp64
  const Headline* knee = headline(doc, "Power limit for 90 % speed");
  ASSERT_NE(knee, nullptr);
  EXPECT_NEAR(std::get<double>(knee->value), 330, 0.5);  // fp32 in seeds/000
  ASSERT_NE(headline(doc, "Fastest train mode"), nullptr);
  EXPECT_THAT(headline(doc, "Fastest train mode")->detail, HasSubstr("fp16"));
  EXPECT_EQ(doc.summary.back().label, "Problems found");

  const Table* gemm = find_block<Table>(doc, "burn_gemm");
  ASSERT_NE(gemm, nullptr);
  EXPECT_EQ(gemm->rows.size(), 7u);
  EXPECT_EQ(std::get<std::string>(gemm->rows.front()[0]), "fp64");
  EXPECT_EQ(std::get<std::string>(gemm->rows.back()[0]), "int8");
  // int8 counts integer operations: its rates are OP/s and OP/J, the others' FLOP/s and FLOP/J.
  for (std::size_t c = 0; c < gemm->columns.size(); ++c) {
    const Unit column = gemm->columns[c].unit;
    if (column != Unit::flop_per_second && column != Unit::flop_per_joule) continue;
    const Unit op = column == Unit::flop_per_second ? Unit::op_per_second : Unit::op_per_joule;
    EXPECT_EQ(cell_unit(*gemm, gemm->rows.size() - 1, c), op) << gemm->columns[c].key;
    EXPECT_EQ(cell_unit(*gemm, 0, c), column) << gemm->columns[c].key;
  }

  const Table* knees = find_block<Table>(doc, "sweep_knees");
  ASSERT_NE(knees, nullptr);
  EXPECT_EQ(knees->rows.size(), 4u);
  const Chart* sweep = find_block<Chart>(doc, "sweep_throughput");
  ASSERT_NE(sweep, nullptr);
  EXPECT_EQ(sweep->markers.size(), 12u);  // 3 knees x 4 modes

  // The skipped bench mode and the power-capped telemetry are findings.
  bool skipped = false, throttled = false;
  for (const Finding& f : doc.findings) {
    skipped = skipped || analysis::text(f).find("fp8 was not measured") != std::string::npos;
    throttled = throttled || analysis::text(f).find("throttled for") != std::string::npos;
  }
  EXPECT_TRUE(skipped);
  EXPECT_TRUE(throttled);
}

// The burn of the shipped sample study (recorded on the H100): every precision ran into the
// 700 W limit (sw_power_cap) and nothing else. That is said, as information, not as 7 warnings,
// and once for the GPU, listing its precisions (issue 19: it was said once per precision).
TEST(ReportBuildTest, RunningAtThePowerLimitIsInformationNotAWarning) {
  auto runs = load_runs({fixture("../../data/sample-study/steps/burn-gpu0.json")}, {});
  ASSERT_TRUE(runs.ok()) << runs.status().to_string();
  Document doc = build_report(*runs, pinned_options());
  int capped = 0;
  for (const Finding& f : doc.findings) {
    EXPECT_NE(f.severity, Severity::warning) << analysis::text(f);
    if (analysis::text(f).find("ran at its power limit for") != std::string::npos) {
      ++capped;
      // fp32 (CUDA cores) stayed below the cap for all but a moment of its span.
      EXPECT_THAT(f.subjects, ::testing::ElementsAre("H100 80GB HBM3 · GPU 0", "fp64", "tf32",
                                                     "fp16", "bf16", "fp8", "int8"));
    }
  }
  EXPECT_EQ(capped, 1);
}

// A run as `monitor --store` writes it: telemetry, plus the session's summary numbers as
// measurements (among them the memory peak, named as bench names its own).
store::RunData monitor_store_run() {
  namespace names = store::names;
  store::RunData data;
  data.run.id = 1;
  data.run.kind = "monitor";
  data.run.started_unix_s = 1.7e9;
  data.run.gpus.push_back({});
  data.run.gpus[0].name = "NVIDIA H100 80GB HBM3";
  data.measurements = {
      {0, "", names::kPeakMemory, 60.0 * (1ull << 30), "B", nlohmann::json::object()},
      {0, "", names::kPowerAvg, 300.0, "W", nlohmann::json::object()},
      {0, "", names::kEnergy, 3000.0, "J", nlohmann::json::object()},
      {0, "", names::kThrottleSeconds, 0.5, "s", {{"reason", "sw_power_cap"}}}};
  store::TelemetrySeries power;
  power.metric = names::kPowerW;
  power.unit = "W";
  power.t_s = {0, 5, 10};
  power.values = {100, 500, 300};
  data.telemetry.push_back(power);
  return data;
}

// Each section shows only data of its kind: a store of one kind of run gives that kind's
// sections and the two that describe every run (systems, runs), nothing else.
TEST(ReportBuildTest, EachKindOfRunAloneGivesOnlyItsSections) {
  using ::testing::ElementsAre;
  Document monitor = build_report({monitor_store_run()}, pinned_options());
  EXPECT_THAT(section_keys(monitor), ElementsAre("telemetry", "systems", "runs"));
  EXPECT_EQ(headline(monitor, "Fastest training mode"), nullptr);

  struct Alone {
    const char* fixture;
    std::vector<std::string> sections;
  };
  const std::vector<Alone> kinds = {
      {"report/h100_monitor_2026-11-22.jsonl", {"telemetry", "systems", "runs"}},
      {"report/h100_burn_worker_2026-11-22.jsonl", {"burn", "systems", "runs"}},
      {"info/h100_recorded_2026-11-22.json", {"systems", "runs"}},
      {"report/bench_handmade.records.json", {"bench", "systems", "runs"}},
      {"report/sweep_rtx3090_handmade.records.json", {"sweep", "systems", "runs"}},
  };
  for (const Alone& alone : kinds) {
    auto runs = load_runs({fixture(alone.fixture)}, {});
    ASSERT_TRUE(runs.ok()) << runs.status().to_string();
    EXPECT_EQ(section_keys(build_report(*runs, pinned_options())), alone.sections) << alone.fixture;
  }
}

// The report's throttled time is the monitor's: NVML's throttle-time counters where the GPU has
// them, else the sampled clock-event masks, computed by the same function (one number).
TEST(ReportBuildTest, ThrottledTimeIsTheMonitorsComputation) {
  namespace names = store::names;
  auto throttled_in_report = [](const store::RunData& run) -> std::optional<double> {
    Document doc = build_report({run}, pinned_options());
    const Table* t = find_block<Table>(doc, "telemetry_summary");
    if (t == nullptr) return std::nullopt;
    for (std::size_t c = 0; c < t->columns.size(); ++c) {
      if (t->columns[c].key == "throttled_s") return std::get<double>(t->rows[0][c]);
    }
    return std::nullopt;
  };
  auto series = [](const char* metric, std::vector<double> values) {
    store::TelemetrySeries s;
    s.metric = metric;
    s.t_s = {0, 1, 2, 3};
    s.values = std::move(values);
    return s;
  };
  store::RunData run = monitor_store_run();
  run.measurements.clear();
  // Sampled, the SW power cap held from 1 s to 2 s; its counter says it held for 20 ms.
  run.telemetry.push_back(series(names::kClockEventReasons, {0, 4, 0, 0}));
  run.telemetry.push_back(series("throttle_sw_power_cap_s", {100.0, 100.0, 100.02, 100.02}));
  auto with_counter = throttled_in_report(run);
  ASSERT_TRUE(with_counter.has_value());
  EXPECT_NEAR(*with_counter, 0.02, 1e-9);

  // Without the counter: the masks, each holding until the next sample (the last one ends the
  // recording), as the monitor's summary counts them.
  run.telemetry.pop_back();
  run.telemetry.back() = series(names::kClockEventReasons, {0, 0, 4, 4});
  auto from_masks = throttled_in_report(run);
  ASSERT_TRUE(from_masks.has_value());
  std::vector<telemetry::GpuSample> samples(4);
  for (int i = 0; i < 4; ++i) {
    samples[i].t_s = i;
    samples[i].values.set(telemetry::Metric::clock_event_reasons, i >= 2 ? 4 : 0);
  }
  double monitor = 0;
  for (const auto& [reason, time] : telemetry::throttle_between(samples, -1e300, 1e300)) {
    monitor += time.seconds;
  }
  EXPECT_NEAR(*from_masks, monitor, 1e-9);
  EXPECT_NEAR(*from_masks, 1.0, 1e-9);
}

TEST(ReportBuildTest, TelemetryIsDownsampledForDrawingButNotForNumbers) {
  auto runs = load_runs({fixture("report/telemetry_handmade.records.json")}, {});
  ASSERT_TRUE(runs.ok()) << runs.status().to_string();
  ReportOptions options = pinned_options();
  options.max_points_per_series = 400;
  Document doc = build_report(*runs, options);
  const Chart* power = find_block<Chart>(doc, "telemetry_power");
  ASSERT_NE(power, nullptr);
  ASSERT_EQ(power->series.size(), 1u);
  EXPECT_LE(power->series[0].y.size(), 400u);
  EXPECT_EQ(power->points_measured, 3000u);
  EXPECT_FALSE(power->spans.empty()) << "the power-capped phases are shaded";
  EXPECT_EQ(power->rules.size(), 1u);

  // The drawn series still reaches the true extremes.
  const store::TelemetrySeries* raw = nullptr;
  for (const auto& s : (*runs)[0].telemetry) {
    if (s.metric == store::names::kPowerW) raw = &s;
  }
  ASSERT_NE(raw, nullptr);
  auto [lo, hi] = std::minmax_element(raw->values.begin(), raw->values.end());
  EXPECT_THAT(power->series[0].y, Contains(*lo));
  EXPECT_THAT(power->series[0].y, Contains(*hi));

  // The table's energy integrates every sample.
  double energy = 0;
  for (std::size_t i = 1; i < raw->t_s.size(); ++i) {
    energy += (raw->t_s[i] - raw->t_s[i - 1]) * (raw->values[i] + raw->values[i - 1]) / 2;
  }
  const Table* summary = find_block<Table>(doc, "telemetry_summary");
  ASSERT_NE(summary, nullptr);
  EXPECT_NEAR(std::get<double>(summary->rows[0][5]), energy, 1e-6 * energy);
  EXPECT_DOUBLE_EQ(std::get<double>(summary->rows[0][1]), 3000);
}

TEST(ReportBuildTest, TelemetryEnergyComesFromTheCounterWhereThereIsOne) {
  auto runs = load_runs({fixture("report/h100_monitor_2026-11-22.jsonl")}, {});
  ASSERT_TRUE(runs.ok()) << runs.status().to_string();
  Document doc = build_report(*runs, pinned_options());
  const Table* summary = find_block<Table>(doc, "telemetry_summary");
  ASSERT_NE(summary, nullptr);
  // The recording's own summary: 13716.3 J from the counter (bench/RESULTS.md).
  EXPECT_NEAR(std::get<double>(summary->rows[0][5]), 13716.3, 60);
  EXPECT_NE(find_block<Chart>(doc, "telemetry_activity"), nullptr);
}

TEST(ReportBuildTest, TwoRunsAreComparedSideBySide) {
  auto runs = load_runs({fixture("report/h100_burn_worker_2026-11-22.jsonl")}, {});
  ASSERT_TRUE(runs.ok());
  store::RunData slower = (*runs)[0];
  slower.run.label = "a slower day";
  for (store::Measurement& m : slower.measurements) {
    if (m.value) *m.value *= 0.9;
  }
  runs->push_back(slower);
  Document doc = build_report(*runs, pinned_options());
  EXPECT_THAT(section_keys(doc), Contains("compare"));
  const Table* compare = find_block<Table>(doc, "compare_gemm");
  ASSERT_NE(compare, nullptr);
  ASSERT_EQ(compare->columns.size(), 4u);  // precision, two runs, one ratio
  for (const auto& row : compare->rows) EXPECT_NEAR(std::get<double>(row[3]), 0.9, 1e-9);
  EXPECT_THAT(compare->columns[2].title, HasSubstr("a slower day"));
}

TEST(ReportBuildTest, NothingToReportIsStillADocument) {
  Document doc = build_report({}, pinned_options());
  EXPECT_TRUE(doc.sections.empty());
  ASSERT_EQ(doc.summary.size(), 1u);
  EXPECT_EQ(std::get<std::string>(doc.summary[0].value), "none");
}

TEST(ReportBuildTest, StoresAndFilesGiveTheSameReport) {
  std::string path =
      (std::filesystem::temp_directory_path() / "gpuscope-report-build-test.db").string();
  std::filesystem::remove(path);
  auto from_files = load_runs(all_fixtures(), {});
  ASSERT_TRUE(from_files.ok());
  {
    auto store = store::Store::open(path);
    ASSERT_TRUE(store.ok());
    for (const store::RunData& run : *from_files) {
      auto id = (*store)->write(run);
      ASSERT_TRUE(id.ok()) << id.status().to_string();
    }
  }
  auto from_store = load_runs({path}, {});
  ASSERT_TRUE(from_store.ok()) << from_store.status().to_string();
  ASSERT_EQ(from_store->size(), from_files->size());
  Document a = build_report(*from_files, pinned_options());
  Document b = build_report(*from_store, pinned_options());
  EXPECT_EQ(section_keys(a), section_keys(b));
  ASSERT_EQ(a.summary.size(), b.summary.size());
  for (std::size_t i = 0; i < a.summary.size(); ++i)
    EXPECT_EQ(a.summary[i].detail, b.summary[i].detail);

  auto one = load_runs({path}, {2});
  ASSERT_TRUE(one.ok());
  ASSERT_EQ(one->size(), 1u);
  EXPECT_EQ((*one)[0].run.id, 2);
  EXPECT_EQ(load_runs({path}, {99}).code(), Code::not_found);
  std::filesystem::remove(path);
}

}  // namespace
}  // namespace gpuscope::report

namespace gpuscope::report {
namespace {

// Two quick studies of the same GPU model: both columns read "H100 80GB HBM3 · GPU 0 · study
// quick". Each must say which run it is; and rows that started 24 °C apart are said to.
TEST(ReportBuildTest, ComparedRunsAreToldApartAndTheirStartTemperaturesCompared) {
  auto runs = load_runs({fixture("report/h100_burn_worker_2026-11-22.jsonl")}, {});
  ASSERT_TRUE(runs.ok());
  store::RunData first = (*runs)[0];
  first.run.label = "study quick";
  first.run.host = "node-a";
  first.run.started_unix_s = 1.7e9;
  store::RunData second = first;
  second.run.host = "node-b";
  second.run.started_unix_s = 1.7e9 + 3600;
  auto add_start = [](store::RunData& run, double celsius) {
    std::vector<store::Measurement> starts;
    for (const store::Measurement& m : run.measurements) {
      if (m.name == store::names::kGemmFlopPerS && m.value) {
        starts.push_back({m.gpu,
                          m.configuration,
                          store::names::kTemperatureStart,
                          celsius,
                          "degC",
                          {{"precision", m.tags["precision"]}}});
      }
    }
    run.measurements.insert(run.measurements.end(), starts.begin(), starts.end());
  };
  add_start(first, 50);
  add_start(second, 74);
  Document doc = build_report({first, second}, pinned_options());
  const Table* compare = find_block<Table>(doc, "compare_gemm");
  ASSERT_NE(compare, nullptr);
  ASSERT_GE(compare->columns.size(), 3u);
  EXPECT_NE(compare->columns[1].title, compare->columns[2].title);
  EXPECT_THAT(compare->columns[1].title, HasSubstr("node-a"));
  EXPECT_THAT(compare->columns[2].title, HasSubstr("node-b"));
  bool said = false;
  for (const Finding& f : doc.findings) {
    if (f.id != "start_temperature_gap") continue;
    said = true;
    EXPECT_THAT(analysis::text(f), HasSubstr("started 24 °C apart"));
  }
  EXPECT_TRUE(said);
}

store::Measurement bench_row(const std::string& model, const std::string& mode, double rate) {
  return {0,    "",    store::names::kSamplesPerS,
          rate, "1/s", {{"model", model}, {"task", "train"}, {"mode", mode}}};
}

// samples/s of different models do not compare: ResNet-50 won "fastest train mode" for being
// smaller. Each model gets its own answer.
TEST(ReportBuildTest, FastestTrainModeIsAnsweredPerModel) {
  store::RunData bench;
  bench.run.id = 1;
  bench.run.kind = "bench";
  bench.run.gpus.push_back({});
  bench.run.gpus[0].name = "NVIDIA H100 80GB HBM3";
  bench.measurements = {bench_row("resnet50", "fp32", 900), bench_row("resnet50", "amp_bf16", 2500),
                        bench_row("vit_b16", "fp32", 150), bench_row("vit_b16", "bf16", 400)};
  Document doc = build_report({bench}, pinned_options());
  const Headline* resnet = headline(doc, "Fastest train mode (resnet50)");
  const Headline* vit = headline(doc, "Fastest train mode (vit_b16)");
  ASSERT_NE(resnet, nullptr);
  ASSERT_NE(vit, nullptr);
  EXPECT_THAT(resnet->detail, HasSubstr("amp_bf16"));
  EXPECT_THAT(vit->detail, HasSubstr("bf16"));
  EXPECT_DOUBLE_EQ(std::get<double>(vit->value), 400);
}

}  // namespace
}  // namespace gpuscope::report
