// diagnose_dir on traces recorded on the H100 (tests/fixtures/diagnose, tests/fixtures/trace),
// the JSON document's schema, the reports, and bad input.
#include "gpuscope/diagnose.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <functional>
#include <optional>
#include <set>
#include <sstream>

#include "support/scratch_dir.h"
#include "support/trace_ranks.h"

namespace gpuscope::analysis {
namespace {

namespace fs = std::filesystem;

const fs::path kFixtures = GPUSCOPE_TEST_FIXTURES;
const fs::path kSmoke = kFixtures / "trace" / "h100_smoke_window";

using gpuscope::testing::ScratchDir;

std::string read(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

void write(const fs::path& p, const std::string& text) {
  std::ofstream(p) << text;
}

const Finding* find(const std::vector<Finding>& findings, const std::string& id) {
  for (const Finding& f : findings)
    if (f.id == id) return &f;
  return nullptr;
}

// The smoke loop (bench/trace_examples/smoke_train.py) reads .item() every step and copies an
// extra pageable tensor every step.
TEST(Diagnose, TheSmokeLoopSynchronizesEveryStep) {
  auto d = diagnose_dir(kSmoke, {});
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_EQ(d->processes.size(), 1u);
  const ProcessDiagnosis& p = d->processes.front();
  EXPECT_EQ(p.step_source, "marks");
  EXPECT_EQ(p.steps, 19u);  // 20 in the window; the first misses kernels launched before it
  EXPECT_GT(p.step_s, 0);
  EXPECT_LE(p.step_s, p.traced_step_s);
  const Finding* sync = find(d->findings, "sync_every_step");
  ASSERT_NE(sync, nullptr);
  EXPECT_FALSE(sync->evidence.empty());
  EXPECT_EQ(p.per_step.size(), 19u);
  EXPECT_FALSE(p.timeline.gpu_busy.empty());
}

// Traces recorded on the H100 (bench/diagnose_fixtures_device.sh, trimmed by
// tests/fixtures/diagnose/trim.py), each with one planted flaw: it must come out first.
struct Labelled {
  const char* fixture;
  const char* first;  // the planted flaw's finding id
};

class PlantedFlaw : public ::testing::TestWithParam<Labelled> {};

TEST_P(PlantedFlaw, ComesOutFirst) {
  auto d = diagnose_dir(kFixtures / "diagnose" / GetParam().fixture, {});
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_FALSE(d->findings.empty());
  EXPECT_EQ(d->findings.front().id, GetParam().first) << d->findings.front().title;
  EXPECT_TRUE(is_major(d->findings.front()));
  ASSERT_TRUE(d->findings.front().expected_speedup);
  EXPECT_GT(d->findings.front().expected_speedup->high, 1.0);
}

INSTANTIATE_TEST_SUITE_P(
    H100, PlantedFlaw,
    ::testing::Values(Labelled{"h100_data_starved", "input_bound"},
                      Labelled{"h100_sync_every_step", "sync_every_step"},
                      Labelled{"h100_launch_bound", "launch_bound"},
                      Labelled{"h100_flaws_fp32", "no_tensor_cores"},
                      Labelled{"h100_flaws_cudnn_defaults", "cudnn_defaults"},
                      Labelled{"h100_flaws_unfused_optimizer", "unfused_optimizer"},
                      Labelled{"h100_flaws_pageable_copies", "pageable_copies"},
                      Labelled{"h100_flaws_small_batch", "small_batch"},
                      // NVML timelines from the fake (a lent GPU's settings cannot change).
                      Labelled{"h100_power_capped", "throttled"},
                      Labelled{"h100_shared", "shared_gpu"},
                      // Derived: h100_flaws_none with 20 ms of host work after each step.
                      Labelled{"h100_host_work", "gpu_idle"}),
    [](const ::testing::TestParamInfo<Labelled>& param) {
      return std::string(param.param.fixture);
    });

// The measured gain of each fix (bench/diagnose_fixtures/flaws.py alone, fixed twin / flawed,
// on the H100: flaws_alone.txt) within 2x of the expected range.
TEST(Diagnose, ExpectedGainsAreWithinTwiceTheMeasuredOnes) {
  const std::pair<const char*, double> measured[] = {
      {"h100_flaws_fp32", 45.04 / 14.53},
      {"h100_flaws_cudnn_defaults", 24.25 / 14.53},
      {"h100_flaws_unfused_optimizer", 16.11 / 14.53},
      {"h100_flaws_pageable_copies", 28.37 / 14.53},
      {"h100_flaws_small_batch", 8709.7 / 645.5},  // samples/s at batch 128 vs 8
  };
  for (const auto& [fixture, gain] : measured) {
    auto d = diagnose_dir(kFixtures / "diagnose" / fixture, {});
    ASSERT_TRUE(d.ok()) << fixture;
    const GainRange g = *d->findings.front().expected_speedup;
    EXPECT_GE(gain, g.low / 2) << fixture << " expected " << g.low << "-" << g.high;
    EXPECT_LE(gain, g.high * 2) << fixture << " expected " << g.low << "-" << g.high;
  }
}

// The mean matrix kernel (a step's matrix time over its matrix kernels) is what the recording's
// kernel table says, whatever the number of steps: it tells a batch too small (kernels of real,
// batch-sized work) from a launch-bound loop (minimal kernels).
TEST(Diagnose, TheMeanMatrixKernelIsTheKernelTables) {
  for (const char* fixture : {"h100_flaws_small_batch", "h100_launch_bound"}) {
    const fs::path dir = kFixtures / "diagnose" / fixture;
    const auto summary = nlohmann::json::parse(read(dir / "summary.json"));
    double seconds = 0, kernels = 0;
    for (const auto& k : summary["gpu"]["kernel_time"]) {
      const std::string kind = k["kind"];
      if (kind != "gemm" && kind != "convolution" && kind != "attention") continue;
      seconds += k["seconds"].get<double>();
      kernels += k["count"].get<double>();
    }
    ASSERT_GT(kernels, 0) << fixture;
    auto d = diagnose_dir(dir, {});
    ASSERT_TRUE(d.ok()) << d.status().message();
    std::optional<double> mean_us;
    for (const Evidence& e : d->findings.front().evidence)
      if (e.what == "mean GEMM/convolution kernel") mean_us = e.value;
    ASSERT_TRUE(mean_us) << fixture;
    EXPECT_NEAR(*mean_us, seconds / kernels * 1e6, 0.15 * seconds / kernels * 1e6) << fixture;
  }
}

// Copies the fixture folder `from` into `to`, each line of its record files passed through
// `edit` (which may change it, or return false to drop it).
fs::path rewritten(const fs::path& from, const fs::path& to,
                   const std::function<bool(nlohmann::json&)>& edit) {
  for (const auto& entry : fs::directory_iterator(from)) {
    std::string text = read(entry.path());
    if (entry.path().filename().string().rfind("gpuscope-trace-", 0) == 0) {
      std::istringstream in(text);
      std::string out;
      for (std::string line; std::getline(in, line);) {
        auto j = nlohmann::json::parse(line);
        if (edit(j)) out += j.dump() + "\n";
      }
      text = out;
    }
    write(to / entry.path().filename(), text);
  }
  return to;
}

// The same recording with its waits moved to a thread that launches nothing (as NCCL's watchdog
// waits on its events): the training loop no longer synchronizes every step.
TEST(Diagnose, WaitsOnAThreadThatLaunchesNothingHoldNoStepBack) {
  const fs::path from = kFixtures / "diagnose" / "h100_sync_every_step";
  ScratchDir dir;
  std::set<std::string> waits;
  for (const auto& entry : fs::directory_iterator(from)) {
    if (entry.path().filename().string().rfind("gpuscope-trace-", 0) != 0) continue;
    std::istringstream in(read(entry.path()));
    for (std::string line; std::getline(in, line);) {
      const auto j = nlohmann::json::parse(line);
      if (j["t"] == "sync") waits.insert(std::to_string(j["corr"].get<uint64_t>()));
    }
  }
  ASSERT_FALSE(waits.empty());
  rewritten(from, dir.path(), [&](nlohmann::json& j) {
    if ((j["t"] == "runtime" || j["t"] == "driver") && j.contains("corr") &&
        waits.count(std::to_string(j["corr"].get<uint64_t>())) != 0)
      j["tid"] = 4242;  // a thread of the process that launches no GPU work
    return true;
  });
  auto original = diagnose_dir(from, {});
  ASSERT_TRUE(original.ok()) << original.status().message();
  ASSERT_NE(find(original->findings, "sync_every_step"), nullptr);
  auto moved = diagnose_dir(dir.path(), {});
  ASSERT_TRUE(moved.ok()) << moved.status().message();
  EXPECT_EQ(find(moved->findings, "sync_every_step"), nullptr);
}

// The H100 recording made light after the fact (`trace --light` records no sync, runtime or
// driver lines, and says so in the header's kinds): the wait every step is still found, from
// the small copy to the host each step, with less confidence; the launch-bound recording stays
// launch-bound.
fs::path lightened(const fs::path& from, const fs::path& to) {
  return rewritten(from, to, [](nlohmann::json& j) {
    if (j["t"] == "header") j["kinds"] = "kernel,memcpy,memset,overhead";
    return j["t"] != "sync" && j["t"] != "runtime" && j["t"] != "driver";
  });
}

TEST(Diagnose, ALightTraceStillFindsTheWaitEveryStepFromTheCopiesBack) {
  ScratchDir dir;
  auto d = diagnose_dir(lightened(kFixtures / "diagnose" / "h100_sync_every_step", dir.path()), {});
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_FALSE(d->findings.empty());
  EXPECT_EQ(d->findings.front().id, "sync_every_step");
  EXPECT_EQ(d->findings.front().confidence, Confidence::medium);
  bool noted = false;
  for (const std::string& n : d->notes)
    noted = noted || n.find("a light trace") != std::string::npos;
  EXPECT_TRUE(noted);

  ScratchDir launch;
  auto l = diagnose_dir(lightened(kFixtures / "diagnose" / "h100_launch_bound", launch.path()), {});
  ASSERT_TRUE(l.ok()) << l.status().message();
  ASSERT_FALSE(l->findings.empty());
  EXPECT_EQ(l->findings.front().id, "launch_bound");
}

// Tracing slowed the H100 launch-bound recording's steps (17.7 -> 24.1 ms): the note points to
// --light, which does not time the program's CUDA calls; not once the trace is light already,
// and not for a program tracing did not slow.
TEST(Diagnose, AProgramSlowedByTracingIsPointedToALightTrace) {
  const auto light_hint = [](const std::vector<std::string>& notes) {
    return std::any_of(notes.begin(), notes.end(), [](const std::string& n) {
      return n.find("tracing slowed") != std::string::npos &&
             n.find("--light records no synchronizations") != std::string::npos;
    });
  };
  auto full = diagnose_dir(kFixtures / "diagnose" / "h100_launch_bound", {});
  ASSERT_TRUE(full.ok()) << full.status().message();
  EXPECT_TRUE(light_hint(full->notes));
  ScratchDir dir;
  auto light =
      diagnose_dir(lightened(kFixtures / "diagnose" / "h100_launch_bound", dir.path()), {});
  ASSERT_TRUE(light.ok()) << light.status().message();
  EXPECT_FALSE(light_hint(light->notes));
  // Waiting for data, the data-starved recording's steps were not slowed: no note.
  auto starved = diagnose_dir(kFixtures / "diagnose" / "h100_data_starved", {});
  ASSERT_TRUE(starved.ok()) << starved.status().message();
  EXPECT_FALSE(light_hint(starved->notes));
  // Tracing slowed the sync-every-step recording's steps too (15.3 -> 22.3 ms): the note.
  auto waits = diagnose_dir(kFixtures / "diagnose" / "h100_sync_every_step", {});
  ASSERT_TRUE(waits.ok()) << waits.status().message();
  EXPECT_TRUE(light_hint(waits->notes));
}

// A healthy loop that also waits on the GPU a few times a step while the GPU stays busy (as a
// torchrun DDP job did on two H200s): the waits cost nothing, and the verdict comes first.
TEST(Diagnose, WaitsThatCostNothingComeAfterTheVerdict) {
  const fs::path from = kFixtures / "diagnose" / "h100_flaws_none";
  ScratchDir dir;
  for (const auto& entry : fs::directory_iterator(from)) {
    std::string text = read(entry.path());
    if (entry.path().filename().string().rfind("gpuscope-trace-", 0) == 0) {
      std::istringstream in(text);
      std::string added;
      int launches = 0;
      for (std::string line; std::getline(in, line);) {
        const auto j = nlohmann::json::parse(line);
        if (j["t"] != "runtime" || ++launches % 100 != 0) continue;
        const uint64_t end = j["end"].get<uint64_t>();
        added += nlohmann::json{{"t", "sync"},
                                {"start", end - 2000},
                                {"end", end - 1000},
                                {"type", "event_synchronize"},
                                {"corr", j["corr"]}}
                     .dump() +
                 "\n";
      }
      text += added;
    }
    write(dir.path() / entry.path().filename(), text);
  }
  auto d = diagnose_dir(dir.path(), {});
  ASSERT_TRUE(d.ok()) << d.status().message();
  const Finding* waits = find(d->findings, "sync_every_step");
  ASSERT_NE(waits, nullptr);
  EXPECT_FALSE(is_major(*waits));
  EXPECT_EQ(d->findings.front().id, "healthy");
}

TEST(Diagnose, HealthyTrainingHasNoMajorFinding) {
  for (const char* fixture : {"h100_healthy_train", "h100_flaws_none"}) {
    auto d = diagnose_dir(kFixtures / "diagnose" / fixture, {});
    ASSERT_TRUE(d.ok()) << d.status().message();
    for (const Finding& f : d->findings) EXPECT_FALSE(is_major(f)) << fixture << ": " << f.id;
    ASSERT_NE(find(d->findings, "healthy"), nullptr) << fixture;
    // Tracing slowed its steps by half; the step time is the untraced one.
    EXPECT_LT(d->processes.front().step_s, 0.8 * d->processes.front().traced_step_s);
  }
}

TEST(Diagnose, AGpuTheJobNeverUsedIsNamed) {
  // Two H100s (fake NVML timeline), the traced process on GPU 0 only.
  auto d = diagnose_dir(kFixtures / "diagnose" / "h100_one_of_two", {});
  ASSERT_TRUE(d.ok()) << d.status().message();
  EXPECT_EQ(d->findings.front().id, "healthy");
  const Finding* idle = find(d->findings, "idle_gpus");
  ASSERT_NE(idle, nullptr);
  EXPECT_EQ(idle->severity, Severity::info);
  EXPECT_EQ(idle->subjects, std::vector<std::string>{"GPU 1"});
  EXPECT_NE(idle->fix.find("--nproc_per_node=2"), std::string::npos);
}

TEST(Diagnose, JsonSchemaVersionOne) {
  auto d = diagnose_dir(kSmoke, {});
  ASSERT_TRUE(d.ok()) << d.status().message();
  const nlohmann::json j = diagnosis_to_json(*d);
  EXPECT_EQ(j["kind"], "gpuscope.diagnose");
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(kDiagnoseSchemaVersion, 1);
  for (const char* key : {"dir", "command", "findings", "processes", "notes", "rates_source"})
    EXPECT_TRUE(j.contains(key)) << key;
  ASSERT_TRUE(j["findings"].is_array());
  ASSERT_FALSE(j["findings"].empty());
  for (const nlohmann::json& f : j["findings"]) {
    for (const char* key : {"id", "severity", "title", "evidence", "fix"})
      EXPECT_TRUE(f.contains(key)) << key;
    EXPECT_TRUE(f["evidence"].is_array());
    for (const nlohmann::json& e : f["evidence"]) {
      EXPECT_TRUE(e["what"].is_string());
      EXPECT_TRUE(e["value"].is_number());
      EXPECT_TRUE(e["unit"].is_string());
    }
    if (f["severity"] != "info" || f.contains("expected_speedup")) {
      ASSERT_TRUE(f.contains("expected_speedup")) << f["id"];
      EXPECT_LE(f["expected_speedup"]["low"].get<double>(),
                f["expected_speedup"]["high"].get<double>());
    }
  }
  const nlohmann::json& p = j["processes"][0];
  for (const char* key : {"subject", "pid", "step_source", "steps", "step_s", "traced_step_s",
                          "gpu_busy_share", "per_step", "idle", "findings"})
    EXPECT_TRUE(p.contains(key)) << key;
  for (const char* key : {"wall_s", "gpu_busy_s", "data_wait_s", "sync_s"})
    EXPECT_TRUE(p["per_step"][0].contains(key)) << key;
}

TEST(Diagnose, ConsoleAndDocumentPutTheTopFindingFirst) {
  auto d = diagnose_dir(kSmoke, {});
  ASSERT_TRUE(d.ok());
  std::ostringstream out;
  print_diagnosis(*d, out);
  const std::string text = out.str();
  EXPECT_NE(text.find("finding: " + d->findings.front().title), std::string::npos) << text;
  EXPECT_NE(text.find("Fix:"), std::string::npos);
  report::Document doc = diagnosis_document(*d);
  ASSERT_GE(doc.sections.size(), 2u);
  EXPECT_EQ(doc.sections.front().key, "diagnose");
  ASSERT_FALSE(doc.findings.empty());
  EXPECT_NE(doc.findings.front().title.find(d->findings.front().title), std::string::npos);
  int charts = 0;
  for (const report::Block& b : doc.sections[1].blocks)
    charts += std::holds_alternative<report::Chart>(b);
  EXPECT_EQ(charts, 3);  // per-step breakdown, idle by gap length, the first steps' timeline
}

TEST(Diagnose, StoreRunHoldsTheFindings) {
  auto d = diagnose_dir(kSmoke, {});
  ASSERT_TRUE(d.ok());
  store::RunData run = diagnosis_run_data(*d, 100, 110, "gpuscope diagnose X");
  EXPECT_EQ(run.run.kind, "diagnose");
  ASSERT_EQ(run.findings.size(), d->findings.size());
  EXPECT_EQ(run.findings.front().id, d->findings.front().id);
  bool step = false;
  for (const store::Measurement& m : run.measurements) step = step || m.name == "step_time_s";
  EXPECT_TRUE(step);
}

TEST(Diagnose, AFolderThatIsNotATrace) {
  ScratchDir dir;
  auto d = diagnose_dir(dir.path(), {});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), Code::invalid_argument);
  EXPECT_NE(d.status().message().find("is not a trace folder"), std::string::npos);

  write(dir.path() / "notes.txt", "hello");
  d = diagnose_dir(dir.path() / "notes.txt", {});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), Code::invalid_argument);

  d = diagnose_dir(dir.path() / "missing", {});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), Code::not_found);
}

TEST(Diagnose, ADamagedRecordFileIsNamed) {
  ScratchDir dir;
  write(dir.path() / "gpuscope-trace-42.jsonl", "this is not JSON\n{\"t\":\"kernel\"}\n");
  auto d = diagnose_dir(dir.path(), {});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), Code::data_error);
  EXPECT_NE(d.status().message().find("gpuscope-trace-42.jsonl"), std::string::npos);
  EXPECT_NE(d.status().message().find("damaged record file"), std::string::npos);
}

TEST(Diagnose, ATraceWithoutKernelsSaysNoGpuWorkSeen) {
  ScratchDir dir;
  // The header and the end of a process that never launched a kernel.
  const std::string smoke = read(kSmoke / "gpuscope-trace-773.jsonl");
  const std::string header = smoke.substr(0, smoke.find('\n') + 1);
  write(dir.path() / "gpuscope-trace-773.jsonl",
        header + "{\"t\":\"end\",\"ts\":96865233259,\"reason\":\"exit\",\"steps\":0}\n");
  auto d = diagnose_dir(dir.path(), {});
  ASSERT_FALSE(d.ok());
  EXPECT_EQ(d.status().code(), Code::not_found);
  EXPECT_NE(d.status().message().find("no GPU work seen"), std::string::npos);
}

// Two ranks: the smoke process twice, the second on GPU 1 with another PID.
TEST(Diagnose, RanksAreDiagnosedEachAndMergedWhereTheyAgree) {
  ScratchDir dir;
  testing::write_two_ranks(dir.path());
  auto d = diagnose_dir(dir.path(), {});
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_EQ(d->processes.size(), 2u);
  EXPECT_EQ(d->processes[0].gpu, 0);
  EXPECT_EQ(d->processes[1].gpu, 1);
  const Finding* sync = find(d->findings, "sync_every_step");
  ASSERT_NE(sync, nullptr);
  EXPECT_EQ(sync->subjects.size(), 2u);
  EXPECT_NE(sync->subjects[0].find("773"), std::string::npos);
  EXPECT_NE(sync->subjects[1].find("774"), std::string::npos);
}

// Two torchrun ranks, the second GPU 1 ms slower a step: the first waits for it in its last
// all-reduce. The slower rank is named; the wait is not counted as the link's.
TEST(Diagnose, ARankThatHoldsTheOthersBackIsNamed) {
  ScratchDir dir;
  testing::write_data_parallel_rank(dir.path(), 901, 0, 7, 8);
  testing::write_data_parallel_rank(dir.path(), 902, 1, 8, 8);
  auto d = diagnose_dir(dir.path(), {});
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_EQ(d->processes.size(), 2u);
  const Finding* imbalance = find(d->findings, "rank_imbalance");
  ASSERT_NE(imbalance, nullptr);
  ASSERT_EQ(imbalance->subjects.size(), 1u);
  EXPECT_NE(imbalance->subjects[0].find("902"), std::string::npos) << imbalance->subjects[0];
  EXPECT_EQ(imbalance->gpu, 1);
  // Both ranks' own exposed all-reduce is the slower one's 1 ms: one finding for both.
  const Finding* exposed = find(d->findings, "exposed_communication");
  ASSERT_NE(exposed, nullptr);
  EXPECT_EQ(exposed->subjects.size(), 2u);
  // Balanced: no imbalance, the all-reduce still exposed.
  ScratchDir balanced;
  testing::write_data_parallel_rank(balanced.path(), 901, 0, 8, 8);
  testing::write_data_parallel_rank(balanced.path(), 902, 1, 8, 8);
  auto b = diagnose_dir(balanced.path(), {});
  ASSERT_TRUE(b.ok()) << b.status().message();
  EXPECT_EQ(find(b->findings, "rank_imbalance"), nullptr);
  EXPECT_NE(find(b->findings, "exposed_communication"), nullptr);
}

// gpuscope-torch data parallel on 2x H200 with the copy-engine all-reduce, eager (recorded,
// tests/fixtures/trace/h200x2_torch_copy_engine): every synchronization of the window falls in
// the one step where the program read its window's timing back (21 waits in 1 step of 4), which
// averages to 5 a step but is no wait every step; the peer copies hide behind the backward.
TEST(Diagnose, WaitsInOneStepOfAWindowAreNoWaitEveryStep) {
  auto d = diagnose_dir(kFixtures / "trace" / "h200x2_torch_copy_engine", {});
  ASSERT_TRUE(d.ok()) << d.status().message();
  ASSERT_EQ(d->processes.size(), 2u);
  EXPECT_EQ(find(d->findings, "sync_every_step"), nullptr);
  EXPECT_EQ(find(d->findings, "exposed_communication"), nullptr);
  EXPECT_EQ(d->findings.front().id, "healthy");
}

TEST(Diagnose, ASummaryOfTheWrongShapeIsIgnoredWithANote) {
  ScratchDir dir;
  fs::copy_file(kSmoke / "gpuscope-trace-773.jsonl", dir.path() / "gpuscope-trace-773.jsonl");
  write(dir.path() / "summary.json",
        R"({"command": 7, "cpu": {"threads": [{"pid": "x"}]}, "telemetry": {"gpus": 3}})");
  auto d = diagnose_dir(dir.path(), {});
  ASSERT_TRUE(d.ok()) << d.status().message();
  bool noted = false;
  for (const std::string& n : d->notes)
    noted = noted || n.find("summary.json") != std::string::npos;
  EXPECT_TRUE(noted);
  EXPECT_NE(find(d->findings, "sync_every_step"), nullptr);
}

TEST(Diagnose, MeasuredRatesFromABurnResult) {
  std::ifstream in(kFixtures / "burn" / "h100_burn_recorded_2026-11-22.json");
  auto rates = rates_from_burn_json(nlohmann::json::parse(in));
  ASSERT_TRUE(rates.count(Precision::bf16));
  EXPECT_NEAR(rates[Precision::bf16], 706.4e12, 1e12);
  EXPECT_TRUE(rates_from_burn_json(nlohmann::json::object()).empty());
  EXPECT_TRUE(
      rates_from_burn_json(
          nlohmann::json::parse(R"({"targets": [{"gemm": [{"status": 3, "precision": 1}]}]})"))
          .empty());
}

}  // namespace
}  // namespace gpuscope::analysis
