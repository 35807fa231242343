// Result files read as runs: the records format round-trips; `info --json` and burn worker
// lines recorded on the H100 become runs the report can use.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <map>

#include "gpuscope/store.h"
#include "store_test_util.h"

namespace gpuscope::store {
namespace {

using ::testing::HasSubstr;
using testing::ScratchDir;

std::string fixture(const std::string& path) {
  return std::string(GPUSCOPE_TEST_FIXTURES) + "/" + path;
}

// The one run the result file at `path` holds; an empty run, with the test failed, where the
// file cannot be read or holds another number of runs.
RunData only_run(const std::string& path) {
  auto runs = read_result_file(path);
  EXPECT_TRUE(runs.ok()) << runs.status().to_string();
  if (!runs.ok()) return {};
  EXPECT_EQ(runs->size(), 1u) << path;
  return runs->size() == 1 ? (*runs)[0] : RunData{};
}

TEST(ResultFileTest, RecordsRoundTripThroughJson) {
  ScratchDir dir;
  RunData sample = testing::sample_run();
  std::string path = dir.file("runs.json");
  testing::write_bytes(path, runs_to_json({sample}).dump(1));
  auto runs = read_result_file(path);
  ASSERT_TRUE(runs.ok()) << runs.status().to_string();
  ASSERT_EQ(runs->size(), 1u);
  const RunData& back = (*runs)[0];
  EXPECT_EQ(back.source, path);
  EXPECT_EQ(runs_to_json(*runs), runs_to_json({sample}));
  EXPECT_EQ(back.run.gpus[0].peak->flops_per_s, sample.run.gpus[0].peak->flops_per_s);
  EXPECT_FALSE(back.measurements[1].value.has_value());
  EXPECT_EQ(back.findings[0].id, "throttled");
  EXPECT_EQ(analysis::to_json(back.findings[0]), analysis::to_json(sample.findings[0]));
}

TEST(ResultFileTest, RecordsFromJsonGoIntoAStore) {
  ScratchDir dir;
  auto runs = read_result_file(fixture("report/bench_handmade.records.json"));
  ASSERT_TRUE(runs.ok()) << runs.status().to_string();
  auto store = Store::open(dir.file("results.db"));
  ASSERT_TRUE(store.ok());
  auto id = (*store)->write((*runs)[0]);
  ASSERT_TRUE(id.ok()) << id.status().to_string();
  auto back = (*store)->load_run(*id);
  ASSERT_TRUE(back.ok());
  EXPECT_EQ(back->measurements.size(), (*runs)[0].measurements.size());
}

TEST(ResultFileTest, MalformedRecordsNameTheField) {
  ScratchDir dir;
  std::string path = dir.file("bad.json");
  nlohmann::json doc = runs_to_json({testing::sample_run()});
  doc["runs"][0]["gpus"][1]["power_limit_w"] = "a lot";
  testing::write_bytes(path, doc.dump());
  auto runs = read_result_file(path);
  EXPECT_EQ(runs.code(), Code::data_error);
  EXPECT_THAT(runs.status().message(), HasSubstr("runs[0].gpus[1].power_limit_w"));

  doc = runs_to_json({testing::sample_run()});
  doc["schema_version"] = kRecordsSchemaVersion + 1;
  testing::write_bytes(path, doc.dump());
  EXPECT_EQ(read_result_file(path).code(), Code::data_error);

  testing::write_bytes(path, "{\"kind\": \"something.else\"}");
  EXPECT_THAT(read_result_file(path).status().message(), HasSubstr("something.else"));

  testing::write_bytes(path, "not json at all\n");
  EXPECT_EQ(read_result_file(path).code(), Code::data_error);

  EXPECT_EQ(read_result_file(dir.file("missing.json")).code(), Code::not_found);
}

TEST(ResultFileTest, MalformedRecordsNameTheFieldInEachList) {
  ScratchDir dir;
  const std::string path = dir.file("bad.json");
  const std::pair<nlohmann::json::json_pointer, nlohmann::json> damages[] = {
      {"/runs/0/gpus/0/name"_json_pointer, 5},
      {"/runs/0/configurations/0/name"_json_pointer, 5},
      {"/runs/0/measurements/0/name"_json_pointer, 5},
      {"/runs/0/telemetry/0/values"_json_pointer, {1.0}},
      {"/runs/0/findings/0/severity"_json_pointer, "fatal"},
      {"/runs/0/findings/0/evidence"_json_pointer, "none"}};
  const char* messages[] = {"runs[0].gpus[0].name: expected a string",
                            "runs[0].configurations[0].name: expected a string",
                            "runs[0].measurements[0].name: expected a string",
                            "runs[0].telemetry[0].t_s: expected arrays t_s and values",
                            "runs[0].findings[0].severity: expected info, warning or error",
                            "runs[0].findings[0]: malformed evidence"};
  for (std::size_t i = 0; i < std::size(damages); ++i) {
    nlohmann::json doc = runs_to_json({testing::sample_run()});
    ASSERT_TRUE(doc.contains(damages[i].first.parent_pointer())) << messages[i];
    doc[damages[i].first] = damages[i].second;
    testing::write_bytes(path, doc.dump());
    auto runs = read_result_file(path);
    EXPECT_EQ(runs.code(), Code::data_error) << messages[i];
    EXPECT_THAT(runs.status().message(), HasSubstr(messages[i]));
  }
}

TEST(ResultFileTest, InfoRecordingOfTheH100IsAnInfoRun) {
  const RunData run = only_run(fixture("info/h100_recorded_2026-11-22.json"));
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(run.run.kind, "info");
  EXPECT_EQ(run.run.command_line, "gpuscope info --json");
  EXPECT_EQ(run.run.host, "vm");
  EXPECT_EQ(run.run.gpuscope_version, "0.1.0");
  EXPECT_EQ(run.run.driver_version, "580.159.04");
  EXPECT_EQ(run.run.cuda_driver_version, "13.0");
  EXPECT_EQ(run.run.cuda_runtime_version, "13.0");
  EXPECT_EQ(run.run.label, "h100_recorded_2026-11-22");
  ASSERT_EQ(run.run.gpus.size(), 1u);
  const GpuRecord& g = run.run.gpus[0];
  EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.power_limit_w, 700.0);
  EXPECT_EQ(g.power_min_limit_w, 200.0);
  EXPECT_EQ(g.sm_clock_max_hz, 1980e6);
  EXPECT_EQ(g.pcie_generation_max, 5);
  ASSERT_TRUE(g.peak.has_value());
  EXPECT_EQ(g.peak->model, "H100 SXM5 80GB");
  EXPECT_DOUBLE_EQ(g.peak->flops_per_s.at("bf16"), 989.4e12);
  EXPECT_EQ(g.details["ecc"]["current"], true);
  EXPECT_TRUE(run.findings.empty()) << "gpu_idle at rest is not a finding";
}

TEST(ResultFileTest, BurnWorkerLinesOfTheH100AreABurnRun) {
  const RunData run = only_run(fixture("report/h100_burn_worker_2026-11-22.jsonl"));
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(run.run.kind, "burn");
  ASSERT_EQ(run.run.gpus.size(), 1u) << "one GPU, however many workers' lines";
  ASSERT_TRUE(run.run.gpus[0].peak.has_value()) << "peak rates come from the datasheet table";
  EXPECT_EQ(run.run.gpus[0].peak->model, "H100 SXM5 80GB");
  std::map<std::string, double> medians;
  int memory = 0, host_link = 0, errors = 0;
  for (const Measurement& m : run.measurements) {
    if (m.name == names::kGemmFlopPerS && m.tags["stat"] == "median") {
      medians[m.tags["precision"]] = *m.value;
    }
    memory += m.name == names::kMemoryBytesPerS;
    host_link += m.name == names::kHostLinkBytesPerS;
    if (m.name == names::kGemmErrors) errors += static_cast<int>(*m.value);
  }
  EXPECT_EQ(medians.size(), 7u);
  EXPECT_NEAR(medians["bf16"], 711.5e12, 0.1e12);  // bench/RESULTS.md
  EXPECT_NEAR(medians["fp64"], 54.1e12, 0.1e12);
  EXPECT_EQ(memory, 4);
  EXPECT_EQ(host_link, 60);
  EXPECT_EQ(errors, 0);
  EXPECT_TRUE(run.findings.empty());
}

TEST(ResultFileTest, MonitorRecordingOfTheH100IsAMonitorRunWithItsSeries) {
  const RunData run = only_run(fixture("report/h100_monitor_2026-11-22.jsonl"));
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(run.run.kind, "monitor");
  EXPECT_EQ(run.run.host, "vm");
  EXPECT_DOUBLE_EQ(run.run.started_unix_s, 1795330888.6663077);
  ASSERT_TRUE(run.run.ended_unix_s.has_value());
  EXPECT_NEAR(*run.run.ended_unix_s - run.run.started_unix_s, 32.97, 0.01);
  EXPECT_THAT(run.run.command_line, HasSubstr("-- python3 bench/monitor_workload.py train"));
  ASSERT_EQ(run.run.gpus.size(), 1u);
  EXPECT_EQ(run.run.gpus[0].power_limit_w, 700.0);
  std::map<std::string, const TelemetrySeries*> series;
  for (const TelemetrySeries& s : run.telemetry) series[s.metric] = &s;
  ASSERT_TRUE(series.count(names::kPowerW));
  EXPECT_EQ(series[names::kPowerW]->values.size(), 331u);
  EXPECT_EQ(series[names::kPowerW]->unit, "W");
  ASSERT_TRUE(series.count(names::kTensorActivity));
  EXPECT_EQ(series[names::kTensorActivity]->values.size(), 329u) << "GPM needs two samples";
  EXPECT_FALSE(series.count("gpu")) << "bookkeeping fields are not series";
  EXPECT_TRUE(
      std::is_sorted(series[names::kPowerW]->t_s.begin(), series[names::kPowerW]->t_s.end()));
}

// `gpuscope burn --json`, as its own schema test pins it (hand-made input; three targets: an
// H100, an A100 MIG instance with a wrong result, one whose worker crashed).
TEST(ResultFileTest, BurnReportIsABurnRunWithItsTelemetryAggregates) {
  const RunData run = only_run(fixture("burn/burn_schema_v1.json"));
  ASSERT_FALSE(HasFailure());
  EXPECT_EQ(run.run.kind, "burn");
  EXPECT_EQ(run.run.command_line, "gpuscope burn --json");
  EXPECT_EQ(run.run.host, "node1");
  EXPECT_EQ(run.run.gpuscope_version, "0.1.0");
  EXPECT_EQ(run.run.driver_version, "580.159.04");
  EXPECT_EQ(run.run.cuda_driver_version, "13.0");
  ASSERT_EQ(run.run.gpus.size(), 3u);
  EXPECT_EQ(run.run.gpus[1].details["label"], "GPU 1 MIG 3g.20gb (GI 1 CI 0)");
  ASSERT_TRUE(run.run.gpus[0].peak.has_value());
  EXPECT_NEAR(run.run.gpus[0].peak->flops_per_s.at("bf16"), 767.25e12 / 0.775, 1e9)
      << "the rate burn compared with comes back from its fraction of peak";
  std::map<std::string, int> names_seen;
  bool throttle = false, skipped_fp8 = false;
  for (const Measurement& m : run.measurements) {
    ++names_seen[m.name];
    if (m.gpu == 0 && m.name == names::kThrottleSeconds && m.tags["reason"] == "sw_power_cap") {
      throttle = *m.value == 1.25 && m.tags["precision"] == "bf16";
    }
    if (m.gpu == 0 && m.tags.value("precision", "") == "fp8" && !m.value) skipped_fp8 = true;
  }
  EXPECT_TRUE(throttle);
  EXPECT_TRUE(skipped_fp8);
  EXPECT_GT(names_seen[names::kTemperatureMax], 0);
  EXPECT_GT(names_seen[names::kPowerAvg], 0);
  EXPECT_GT(names_seen[names::kMemoryBytesPerS], 0);
  int errors = 0;
  for (const Finding& f : run.findings) errors += f.severity == Severity::error;
  EXPECT_EQ(errors, 2) << "the wrong result and the crashed worker";
}

TEST(ResultFileTest, BurnWorkerLinesReportVerificationErrors) {
  ScratchDir dir;
  std::string path = dir.file("worker.jsonl");
  testing::write_bytes(
      path,
      R"({"v":1,"type":"device","name":"NVIDIA H100 80GB HBM3","uuid":"GPU-1","sm_count":132})"
      "\n"
      R"({"v":1,"type":"gemm_result","precision":"bf16","n":8192,"partial":false,"windows":3,)"
      R"("flop_per_second":{"median":7e14,"min":6.9e14,"max":7.1e14,"mean":7e14,"count":3},)"
      R"("verification":{"gemms_checked":100,"mismatches":2,"nan_count":0,"inf_count":0,)"
      R"("reference_tiles_failed":0,"ok":false},"fault_injected":false,"ok":false})"
      "\n"
      R"({"v":1,"type":"skipped","what":"fp8","code":"not_supported","reason":"needs cc 8.9"})"
      "\n"
      R"({"v":1,"type":"error","code":"verification_failed","message":"bf16 differed"})"
      "\n");
  const RunData run = only_run(path);
  ASSERT_FALSE(HasFailure());
  ASSERT_EQ(run.findings.size(), 1u) << "one finding for one failure";
  EXPECT_EQ(run.findings[0].severity, Severity::error);
  EXPECT_EQ(run.findings[0].id, "verification_failed");
  bool skipped = false;
  for (const Measurement& m : run.measurements) {
    if (m.tags.value("precision", "") == "fp8") {
      skipped = !m.value && m.tags["skipped"] == "needs cc 8.9";
    }
  }
  EXPECT_TRUE(skipped);

  testing::write_bytes(path, R"({"v":2,"type":"device","name":"X"})"
                             "\n");
  EXPECT_EQ(read_result_file(path).code(), Code::data_error);
}

// The store reads worker lines with burn's own reader of the protocol: a malformed line is
// refused naming the line and the field, and one file describes one GPU.
TEST(ResultFileTest, BurnWorkerLinesThatBreakTheProtocolAreRefusedSayingWhere) {
  ScratchDir dir;
  std::string path = dir.file("worker.jsonl");
  const std::string device =
      R"({"v":1,"type":"device","name":"NVIDIA H100 80GB HBM3","uuid":"GPU-1","sm_count":132})";
  testing::write_bytes(path, device + "\n" +
                                 R"({"v":1,"type":"gemm_window","precision":"bf16","window":0,)"
                                 R"("gemms":"many","flop":1e15,"seconds":1,"elapsed_seconds":1,)"
                                 R"("mismatches":0,"nan_count":0,"inf_count":0})"
                                 "\n");
  auto runs = read_result_file(path);
  ASSERT_EQ(runs.code(), Code::data_error);
  EXPECT_THAT(runs.status().message(), HasSubstr("line 2"));
  EXPECT_THAT(runs.status().message(), HasSubstr("'gemm_window' line without a valid 'gemms'"));

  testing::write_bytes(path, device + "\n" +
                                 R"({"v":1,"type":"device","name":"NVIDIA H100 80GB HBM3",)"
                                 R"("uuid":"GPU-2","sm_count":132})"
                                 "\n");
  runs = read_result_file(path);
  ASSERT_EQ(runs.code(), Code::data_error);
  EXPECT_THAT(runs.status().message(), HasSubstr("a second device (GPU-2 after GPU-1)"));
}

}  // namespace
}  // namespace gpuscope::store
