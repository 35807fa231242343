// The headline answers from recorded outputs (H100, 2026-11-22) and scripted problems.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>

#include "gpuscope/study.h"
#include "support/matchers.h"
#include "test_gpu.h"

namespace gpuscope::study {
namespace {

using testing::gpu;

using gpuscope::testing::HasAllSubstrs;
using nlohmann::json;
using ::testing::HasSubstr;
using ::testing::Not;

json fixture(const std::string& path) {
  std::ifstream in(std::string(GPUSCOPE_TEST_FIXTURES) + "/" + path);
  return json::parse(in);
}

json recorded_info() {
  return fixture("info/h100_recorded_2026-11-22.json");
}
json recorded_burn() {
  return fixture("burn/h100_burn_recorded_2026-11-22.json");
}

const analysis::Finding* find_problem(const Headlines& h, const std::string& code) {
  for (const analysis::Finding& p : h.problems) {
    if (p.id == code) return &p;
  }
  return nullptr;
}

TEST(StudyHeadlines, AchievedVsDatasheetFromTheRecordedBurn) {
  Headlines h;
  json info = recorded_info();
  add_burn_answers(recorded_burn(), &info, h);
  ASSERT_EQ(h.compute.size(), 3u);
  const ComputeAnswer& bf16 = h.compute[1];
  EXPECT_EQ(bf16.precision, "bf16");
  EXPECT_EQ(bf16.gpu, 0);
  ASSERT_TRUE(bf16.achieved_flop_per_s && bf16.datasheet_flop_per_s && bf16.fraction);
  EXPECT_NEAR(*bf16.achieved_flop_per_s, 706.4e12, 0.1e12);
  EXPECT_DOUBLE_EQ(*bf16.datasheet_flop_per_s, 989.4e12);  // the info's datasheet entry
  EXPECT_NEAR(*bf16.fraction, 0.714, 0.001);
  EXPECT_EQ(h.compute[2].precision, "fp8");
  EXPECT_NEAR(*h.compute[2].fraction, 0.636, 0.001);
  // The recorded run was at its power cap the whole time: a note, not a problem; nothing else.
  EXPECT_EQ(find_problem(h, "throttled"), nullptr);
  ASSERT_EQ(h.problems.size(), 1u);
  EXPECT_EQ(h.problems[0].id, "power_capped");
  EXPECT_EQ(h.problems[0].severity, analysis::Severity::info);
  EXPECT_THAT(problem_text(h.problems[0]), HasSubstr("for 99% of the GEMM time"));
}

TEST(StudyHeadlines, DatasheetFromTheFractionWithoutInfo) {
  Headlines h;
  add_burn_answers(recorded_burn(), nullptr, h);
  ASSERT_EQ(h.compute.size(), 3u);
  ASSERT_TRUE(h.compute[1].datasheet_flop_per_s);
  EXPECT_NEAR(*h.compute[1].datasheet_flop_per_s, 989.4e12, 0.5e12);
}

TEST(StudyHeadlines, ThermalThrottlingAndWrongResultsAreProblems) {
  json burn = recorded_burn();
  json& bf16 = burn["targets"][0]["gemm"][1];
  bf16["throttle_seconds"]["hw_thermal_slowdown"] = 1.5;  // of a 2.08 s span
  bf16["errors"]["mismatches"] = 3;                       // burn's reader counts the total again
  bf16["errors"]["total"] = 3;
  Headlines h;
  add_burn_answers(burn, nullptr, h);
  const analysis::Finding* throttled = find_problem(h, "throttled");
  ASSERT_NE(throttled, nullptr);
  EXPECT_EQ(throttled->severity, analysis::Severity::warning);
  EXPECT_THAT(problem_text(*throttled), HasSubstr("hw_thermal_slowdown"));
  EXPECT_THAT(problem_text(*throttled), HasSubstr("bf16"));
  const analysis::Finding* wrong = find_problem(h, "wrong_results");
  ASSERT_NE(wrong, nullptr);
  EXPECT_EQ(wrong->severity, analysis::Severity::error);
  EXPECT_THAT(problem_text(*wrong), HasSubstr("XID"));
}

TEST(StudyHeadlines, LowHostLinkAgainstTheLinkGeneration) {
  json burn = recorded_burn();
  json info = recorded_info();  // PCIe Gen5 x16
  // Rates as the H100 measured them (a size sweep: small copies are slow on any link), but
  // with d2h held to 12 GB/s. Pageable copies are no test of the link.
  auto row = [](const char* memory, const char* direction, double size, double rate) {
    return json{
        {"memory", memory}, {"direction", direction}, {"size_bytes", size}, {"bytes_per_s", rate}};
  };
  burn["targets"][0]["host_link"] =
      json::array({row("pinned", "h2d", 4096, 6.1e9), row("pinned", "h2d", 1 << 30, 54.7e9),
                   row("pinned", "d2h", 4096, 5.5e9), row("pinned", "d2h", 1 << 30, 12.0e9),
                   row("pageable", "h2d", 1 << 30, 7.1e9)});
  Headlines h;
  add_burn_answers(burn, &info, h);
  int low = 0;
  for (const analysis::Finding& p : h.problems) {
    if (p.id != "host_link_low") continue;
    ++low;
    EXPECT_THAT(problem_text(p), HasSubstr("pinned d2h copies reach 12.0 GB/s at best"));
    EXPECT_THAT(problem_text(p), HasSubstr("Gen5 x16"));
  }
  EXPECT_EQ(low, 1);
}

TEST(StudyHeadlines, PcieLinkNotAtFullWidth) {
  json info = recorded_info();
  info["gpus"][0]["pcie"]["width"] = 8;
  Headlines h;
  add_info_problems(info, {0}, h);
  const analysis::Finding* p = find_problem(h, "pcie_link_degraded");
  ASSERT_NE(p, nullptr);
  EXPECT_EQ(p->severity, analysis::Severity::warning);
  EXPECT_THAT(problem_text(*p), HasSubstr("x8 of x16"));
  Headlines recorded;
  add_info_problems(recorded_info(), {0}, recorded);
  EXPECT_TRUE(recorded.problems.empty());
}

TEST(StudyHeadlines, PcieLinkExpectations) {
  ASSERT_TRUE(pcie_link_bytes_per_s(5, 16));
  EXPECT_NEAR(*pcie_link_bytes_per_s(5, 16), 53.6e9, 0.1e9);
  EXPECT_NEAR(*pcie_link_bytes_per_s(4, 16) * 2, *pcie_link_bytes_per_s(5, 16), 0.1e9);
  EXPECT_FALSE(pcie_link_bytes_per_s(9, 16));
  EXPECT_FALSE(pcie_link_bytes_per_s(4, 0));
}

TEST(StudyHeadlines, BenchAnswersAsTheBenchDocumentGivesThem) {
  json bench = {{"rows", json::array()},
                {"answers", json::array({{{"model", "resnet50"},
                                          {"task", "train"},
                                          {"fastest",
                                           {{"mode", "amp_bf16"},
                                            {"samples_per_second", 3100.0},
                                            {"peak_allocated_bytes", 2.1e10}}},
                                          {"most_efficient",
                                           {{"mode", "amp_bf16"},
                                            {"joules_per_sample", 0.21},
                                            {"samples_per_second", 3000.0},
                                            {"peak_allocated_bytes", 2.1e10}}},
                                          {"smallest_memory", nullptr}}})}};
  Headlines h;
  add_bench_answers(bench, 1, h);
  ASSERT_EQ(h.models.size(), 1u);
  const ModelAnswer& m = h.models[0];
  EXPECT_EQ(m.gpu, 1);
  EXPECT_EQ(m.model, "resnet50");
  ASSERT_TRUE(m.fastest);
  EXPECT_EQ(m.fastest->mode, "amp_bf16");
  EXPECT_EQ(m.fastest->samples_per_second, 3100.0);
  ASSERT_TRUE(m.most_efficient);
  EXPECT_EQ(m.most_efficient->joules_per_sample, 0.21);
  EXPECT_FALSE(m.smallest_memory.has_value());
}

TEST(StudyHeadlines, FromTheShippedSampleStudy) {
  auto sample = locate_sample();
  ASSERT_TRUE(sample.ok()) << sample.status().to_string();
  auto state = load_state(*sample);
  ASSERT_TRUE(state.ok()) << state.status().to_string();
  EXPECT_EQ(state->options.level, Level::standard);
  Headlines h = compute_headlines(*state, *sample);
  // The default study recorded on the H100 (interrupted in its bench step and resumed): every
  // precision burned, 3 models x train/infer in all seven modes, with the convergence guard.
  EXPECT_EQ(h.compute.size(), 7u);
  ASSERT_EQ(h.models.size(), 6u);
  EXPECT_EQ(h.models[0].model, "vit_b16");
  EXPECT_EQ(h.models[0].task, "train");
  // fp16 trained ViT faster (3169 samples/s), but its loss went to NaN: never "fastest".
  ASSERT_TRUE(h.models[0].fastest);
  EXPECT_EQ(h.models[0].fastest->mode, "bf16");
  ASSERT_TRUE(h.models[2].fastest);
  EXPECT_EQ(h.models[2].model + " " + h.models[2].task, "resnet50 train");
  EXPECT_EQ(h.models[2].fastest->mode, "amp_fp16");
  ASSERT_TRUE(h.models[3].fastest);
  EXPECT_EQ(h.models[3].fastest->mode, "fp16");  // resnet50 infer: no guard for inference
  for (const ModelAnswer& m : h.models) {
    ASSERT_TRUE(m.most_efficient) << m.model << " " << m.task;  // every mode's energy measured
    EXPECT_TRUE(m.most_efficient->joules_per_sample) << m.model << " " << m.task;
  }
  EXPECT_NEAR(*h.models[4].most_efficient->joules_per_sample, 2.448, 0.001);  // gpt2 train
  std::string text = headlines_text(*state, h);
  EXPECT_THAT(text, HasAllSubstrs({"Recorded on a lent NVIDIA H100 80GB HBM3",
                                   "bf16     698.7 TFLOP/s of 989.4 datasheet (71%)",
                                   "fastest:        bf16 2981 samples/s, 9.7 GiB",
                                   "most efficient: bf16 248 samples/s, 2.45 J/sample, 9.9 GiB"}));
  EXPECT_THAT(text, Not(HasSubstr("n/a")));
  // The guard's verdicts are problems, as in the report's findings: pure fp16 diverged for all
  // three models.
  EXPECT_THAT(text, HasSubstr("Problems found:\n  [warning] vit_b16 fp16 training: the loss is "
                              "not finite from step 4 on (nan); do not train in this mode"));
  EXPECT_EQ(std::count_if(h.problems.begin(), h.problems.end(),
                          [](const analysis::Finding& p) { return p.id == "convergence_guard"; }),
            3);
  EXPECT_THAT(text, HasSubstr("note: GPU 0 ran at its power limit for 86% of the GEMM time"));
  // A tie in memory goes to the mode that trains: bf16, not the diverging fp16.
  ASSERT_TRUE(h.models[0].smallest_memory);
  EXPECT_EQ(h.models[0].smallest_memory->mode, "bf16");
}

// A trusted mode whose energy was not measured (timed windows shorter than the energy counter's
// reads) might be the most efficient one: then no mode is named. On the H100 a short GPT-2 row
// set once named tf32 beside an unmeasured bf16 row that was twice as fast.
TEST(StudyHeadlines, NoMostEfficientModeWhileATrustedModeHasNoEnergy) {
  auto sample = locate_sample();
  ASSERT_TRUE(sample.ok()) << sample.status().to_string();
  std::ifstream in(*sample / "steps/bench-gpu0.json");
  json bench = json::parse(in);
  int dropped = 0;
  for (json& row : bench["rows"]) {
    if (row["model"] == "gpt2" && row["task"] == "train" && row["mode"] == "bf16") {
      row["energy_j"] = nullptr;
      row["joules_per_sample"] = nullptr;
      ++dropped;
    }
  }
  ASSERT_EQ(dropped, 1);
  Headlines h;
  add_bench_answers(bench, 0, h);
  ASSERT_EQ(h.models.size(), 6u);
  const ModelAnswer& gpt2_train = h.models[4];
  ASSERT_EQ(gpt2_train.model + " " + gpt2_train.task, "gpt2 train");
  EXPECT_FALSE(gpt2_train.most_efficient.has_value()) << gpt2_train.most_efficient->mode;
  ASSERT_TRUE(gpt2_train.fastest);
  EXPECT_EQ(gpt2_train.fastest->mode, "bf16");
  ASSERT_TRUE(h.models[5].most_efficient);  // gpt2 infer is untouched
  EXPECT_EQ(h.models[5].most_efficient->mode, "bf16");
  State state;
  EXPECT_THAT(headlines_text(state, h), HasSubstr("most efficient: n/a (no energy measured)"));
}

TEST(StudyHeadlines, FailedStepsAreProblems) {
  State state;
  state.machine = {"h", {gpu(0, "GPU-a", "x")}};
  state.plan = *build_plan({}, state.machine);
  StepRecord failed;
  failed.status = StepStatus::failed;
  failed.message = "crashed: killed by signal 11 (SIGSEGV)";
  failed.log_path = "steps/burn-gpu0.log";
  state.steps["burn-gpu0"] = failed;
  StepRecord skipped;
  skipped.status = StepStatus::skipped;
  skipped.message = "gpuscope-torch is not built";
  state.steps["bench-gpu0"] = skipped;
  state.steps["sweep-gpu0"] = skipped;  // planned skip: not a problem
  Headlines h = compute_headlines(state, ::testing::TempDir());
  ASSERT_EQ(h.problems.size(), 2u);
  EXPECT_EQ(h.problems[0].id, "step_failed");
  EXPECT_THAT(problem_text(h.problems[0]), HasSubstr("steps/burn-gpu0.log"));
  EXPECT_EQ(h.problems[1].id, "step_skipped");
  EXPECT_EQ(h.problems[1].severity, analysis::Severity::info);
}

TEST(StudyHeadlines, SummaryJsonSchemaIsPinned) {
  auto sample = locate_sample();
  ASSERT_TRUE(sample.ok());
  auto state = load_state(*sample);
  ASSERT_TRUE(state.ok());
  Headlines h = compute_headlines(*state, *sample);
  json j = summary_to_json(*state, h, "out", false);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["kind"], "gpuscope.study");
  EXPECT_EQ(j["status"], "finished");
  EXPECT_EQ(j["report"], "out/report.html");
  ASSERT_EQ(j["steps"].size(), 4u);
  EXPECT_EQ(j["steps"][3]["status"], "skipped");
  for (const char* key : {"compute", "models", "problems"}) {
    EXPECT_TRUE(j["answers"][key].is_array()) << key;
  }
  const json& c = j["answers"]["compute"][0];
  for (const char* key :
       {"gpu", "precision", "achieved_flop_per_s", "datasheet_flop_per_s", "fraction", "note"}) {
    EXPECT_TRUE(c.contains(key)) << key;
  }
  const json& m = j["answers"]["models"][0];
  for (const char* key : {"gpu", "model", "task", "fastest", "most_efficient", "smallest_memory"}) {
    EXPECT_TRUE(m.contains(key)) << key;
  }
  EXPECT_EQ(m["most_efficient"]["mode"], "bf16");  // vit_b16 train: energy measured
  EXPECT_NEAR(m["most_efficient"]["joules_per_sample"].get<double>(), 0.2373, 0.0001);
  // An answer not given is null.
  Headlines unanswered = h;
  unanswered.models[1].most_efficient.reset();
  const json none = summary_to_json(*state, unanswered, "out", false);
  EXPECT_TRUE(none["answers"]["models"][1]["most_efficient"].is_null());
  EXPECT_EQ(summary_to_json(*state, h, "out", true)["status"], "interrupted");
}

}  // namespace
}  // namespace gpuscope::study

namespace gpuscope::study {
namespace {

// bench --share's document (the study's sharing step): its answers become the study's, per GPU
// and workload, in the text and in the summary JSON; a bench document adds none.
TEST(StudyHeadlines, SharingAnswers) {
  const json share = {
      {"kind", "gpuscope.bench.share"},
      {"schema_version", 1},
      {"shares",
       {{{"workload", "resnet50 train amp_bf16 batch=8"},
         {"answer", "Up to 4 copies pay off (MPS: 1.85x the throughput of one process alone)."}}}}};
  Headlines h;
  add_bench_answers(share, 0, h);
  ASSERT_EQ(h.sharing.size(), 1u);
  EXPECT_EQ(h.sharing[0],
            "GPU 0 resnet50 train amp_bf16 batch=8: Up to 4 copies pay off (MPS: 1.85x the "
            "throughput of one process alone).");
  EXPECT_TRUE(h.models.empty());
  State state;
  EXPECT_THAT(headlines_text(state, h), HasSubstr("Sharing one GPU (bench --share):\n  GPU 0 "
                                                  "resnet50 train amp_bf16 batch=8: Up to 4"));
  const json summary = summary_to_json(state, h, "/tmp/s", false);
  EXPECT_EQ(summary["answers"]["sharing"][0], h.sharing[0]);
  Headlines none;
  add_bench_answers(json{{"kind", "gpuscope.bench"}, {"rows", json::array()}}, 0, none);
  EXPECT_TRUE(none.sharing.empty());
}

}  // namespace
}  // namespace gpuscope::study
