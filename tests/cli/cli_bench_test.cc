// `gpuscope bench` end to end: the real binary, NVML replaced by the fake library (a GPU at a
// constant 300 W) and gpuscope-torch by a scripted fake (tests/fakes/torch): rows measured with
// energy, OOM / unsupported / crashed / malformed rows skipped while the matrix goes on, the
// convergence guard, Ctrl-C keeping the finished rows, the JSON document and the store, and a
// matrix killed mid-way resumed from its last finished row (--resume).
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "gpuscope/exit_codes.h"
#include "gpuscope/store.h"
#include "support/cli_run.h"
#include "support/matchers.h"
#include "support/stored_runs.h"

namespace gpuscope {
namespace {

using gpuscope::testing::HasAllSubstrs;
using ::testing::HasSubstr;

using testing::CliRun;
using testing::slurp;

// A path of this test process's in the bench tests' scratch folder, with nothing there yet.
std::string fresh(const std::string& name) {
  return testing::fresh_path(testing::scratch_dir("cli_bench_test"), name);
}

std::vector<std::string> base_env() {
  return {std::string("GPUSCOPE_NVML_LIBRARY=") + GPUSCOPE_FAKE_NVML_PATH,
          std::string("GPUSCOPE_FAKE_NVML_SCENARIO=") + GPUSCOPE_BENCH_TEST_DATA +
              "/h100_constant_300w.json",
          std::string("GPUSCOPE_TORCH_BIN=") + GPUSCOPE_FAKE_TORCH};
}

// Runs gpuscope with `args` and extra environment, capturing both streams.
CliRun bench(const std::string& args, const std::vector<std::string>& env = {}) {
  std::string vars;
  for (const auto& e : base_env()) vars += " '" + e + "'";
  for (const auto& e : env) vars += " '" + e + "'";
  return testing::run_gpuscope(testing::scratch_dir("cli_bench_test"), vars, "bench " + args);
}

nlohmann::json json_of(const CliRun& run) {
  auto j = nlohmann::json::parse(run.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << run.out << run.err;
  return j;
}

const nlohmann::json* row(const nlohmann::json& doc, const std::string& task,
                          const std::string& mode) {
  for (const auto& r : doc["rows"]) {
    if (r["task"] == task && r["mode"] == mode) return &r;
  }
  return nullptr;
}

TEST(CliBench, ListPrintsTheExpandedRows) {
  CliRun run = bench("--preset seeds --list");
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(run.out, HasSubstr("23 rows"));
  EXPECT_THAT(run.out, HasSubstr("--input host --loader-workers 8 --pinned on"));
  run = bench("--model gpt2 --task infer --mode bf16,fp8 --knob graphs=on,off --list");
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(run.out, HasSubstr("4 rows"));
}

TEST(CliBench, BadArgumentsAreUsageErrors) {
  testing::expect_refused([](const std::string& args) { return bench(args); }, kExitUsage,
                          {
                              {"--model vit_b16 --knob turbo=on", ""},
                              {"--model vit_b16 --mode fp12", ""},
                              {"--preset seeds --model vit_b16", "--preset is a whole matrix"},
                              {"", ""},
                              {"--model vit_b16 --gpu 7", ""},  // the fake machine has one GPU
                              {"--model vit_b16 --torch-bin /nonexistent/gpuscope-torch",
                               "/nonexistent/gpuscope-torch"},
                          });
}

TEST(CliBench, GpusGivesAScalingTable) {
  const std::string log = fresh("gpus_args.log");
  CliRun run = bench("--model vit_b16 --mode amp_bf16 --gpus 1,2 --guard off --windows 1 --steps 2",
                     {"GPUSCOPE_FAKE_TORCH_LOG=" + log});
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(run.out, HasAllSubstrs({"Scaling",
                                      "97.0%",  // the fake scales at 97 %
                                      "75.0%",  // and hides 75 % of its all-reduce
                                      // gpuscope-torch's default on one host
                                      "copy-engine, AdamW sharded"}));
  EXPECT_THAT(slurp(log), HasSubstr("--world-size 2"));
  // `-- --all-reduce nccl` reaches every row; the table says what ran.
  CliRun nccl = bench(
      "--model vit_b16 --mode amp_bf16 --gpus 1,2 --guard off --windows 1 --steps 2 -- "
      "--all-reduce nccl");
  EXPECT_EQ(nccl.exit_code, kExitOk) << nccl.err;
  EXPECT_THAT(nccl.out, HasSubstr("nccl"));
  EXPECT_THAT(nccl.out, ::testing::Not(HasSubstr("copy-engine")));
  EXPECT_THAT(nccl.out, ::testing::Not(HasSubstr("sharded")));
  EXPECT_EQ(bench("--model vit_b16 --gpus 1,x").exit_code, kExitUsage);
  EXPECT_EQ(bench("--model vit_b16 --task infer --gpus 1,2").exit_code, kExitUsage);
}

TEST(CliBench, ADataParallelRowsPowerAndEnergyAreEveryGpus) {
  // Two fake GPUs at 300 W each: the 2-GPU row draws 600 W and spends as many joules per sample
  // as one GPU (each rank trains as many samples on a GPU drawing as much).
  const std::string file = fresh("two_gpus.json");
  CliRun run = bench(
      "--model vit_b16 --mode amp_bf16 --gpus 1,2 --guard off --windows 2 --steps 5 --json " + file,
      {std::string("GPUSCOPE_FAKE_NVML_SCENARIO=") + GPUSCOPE_BENCH_TEST_DATA +
       "/two_h100_constant_300w.json"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  const nlohmann::json doc = nlohmann::json::parse(slurp(file));
  ASSERT_EQ(doc["rows"].size(), 2u);
  const nlohmann::json& one = doc["rows"][0];
  const nlohmann::json& two = doc["rows"][1];
  ASSERT_TRUE(one["power_avg_w"].is_number()) << one.dump();
  ASSERT_TRUE(two["power_avg_w"].is_number()) << two.dump();
  // Within 10 %: the fake's energy counter follows the wall clock, and on a loaded host a
  // sample's timestamp and its energy reading can be tens of ms apart in a window under a
  // second (289 W was seen beside a parallel test run); 600 against 300 W is what is checked.
  EXPECT_NEAR(one["power_avg_w"].get<double>(), 300, 30);
  EXPECT_NEAR(two["power_avg_w"].get<double>(), 600, 60);
  EXPECT_NEAR(two["timed_samples"].get<double>(), 2 * one["timed_samples"].get<double>(), 1e-9);
  EXPECT_NEAR(two["joules_per_sample"].get<double>(), one["joules_per_sample"].get<double>(),
              0.05 * one["joules_per_sample"].get<double>());
}

TEST(CliBench, TheNoSyncCeilingSplitsTheScalingLoss) {
  const std::string log = fresh("ceiling_args.log");
  const std::string file = fresh("ceiling.json");
  CliRun run = bench(
      "--model vit_b16 --mode amp_bf16 --gpus 1,2 --no-sync-ceiling --guard off --windows 1 "
      "--steps 2 --json " +
          file,
      {"GPUSCOPE_FAKE_TORCH_LOG=" + log});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  // The fake: 97 % synchronized; apart, its slower rank at 98 % of one GPU alone.
  const nlohmann::json doc = nlohmann::json::parse(slurp(file));
  ASSERT_EQ(doc["rows"].size(), 3u);
  EXPECT_EQ(doc["rows"][2]["grad_sync"], false);
  EXPECT_EQ(doc["rows"][2]["gpus"], 2);
  ASSERT_EQ(doc["scaling"].size(), 2u);
  const nlohmann::json& two = doc["scaling"][1];
  EXPECT_NEAR(two["efficiency"].get<double>(), 0.97, 1e-9);
  EXPECT_NEAR(two["gpus_together"].get<double>(), 0.98, 1e-9);
  EXPECT_NEAR(two["communication"].get<double>(), 0.97 / 0.98, 1e-9);
  EXPECT_THAT(run.out, HasAllSubstrs({"no-sync ceiling", "98.0%", "99.0%"}));
  EXPECT_THAT(slurp(log), HasSubstr("--world-size 2 --grad-sync off"));
  // It measures data-parallel rows only.
  EXPECT_EQ(bench("--model vit_b16 --no-sync-ceiling").exit_code, kExitUsage);
  EXPECT_EQ(bench("--model vit_b16 --gpus 1 --no-sync-ceiling").exit_code, kExitUsage);
}

TEST(CliBench, MeasuresRowsAndSkipsTheOnesThatCannotRun) {
  const std::string log = fresh("args.log");
  CliRun run = bench("--model vit_b16 --mode fp32,amp_fp16,fp16,fp8 --windows 3 --steps 5 --json -",
                     {"GPUSCOPE_FAKE_TORCH_OOM=train:fp16", "GPUSCOPE_FAKE_TORCH_UNSUPPORTED=fp8",
                      "GPUSCOPE_FAKE_TORCH_KILL=infer:amp_fp16", "GPUSCOPE_FAKE_TORCH_LOG=" + log});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  nlohmann::json doc = json_of(run);
  EXPECT_EQ(doc["kind"], "gpuscope.bench");
  EXPECT_EQ(doc["schema_version"], 1);
  ASSERT_EQ(doc["rows"].size(), 8u);  // the matrix went on past every failure
  EXPECT_EQ(doc["gpu"]["name"], "NVIDIA H100 80GB HBM3");

  const auto* oom = row(doc, "train", "fp16");
  EXPECT_EQ((*oom)["status"], "skipped");
  EXPECT_EQ((*oom)["skip_code"], "out_of_memory");
  EXPECT_THAT((*oom)["skip_reason"].get<std::string>(), HasSubstr("out of memory"));
  EXPECT_EQ((*row(doc, "infer", "fp8"))["skip_code"], "not_supported");
  const auto* killed = row(doc, "infer", "amp_fp16");
  EXPECT_EQ((*killed)["skip_code"], "crashed");
  EXPECT_THAT((*killed)["skip_reason"].get<std::string>(), HasSubstr("SIGKILL"));

  // A measured row: the fake's samples/s, and energy from the fake GPU's 300 W over the timed
  // windows only: J/sample = 300 W x window seconds / samples per window.
  const auto* fp32 = row(doc, "train", "fp32");
  ASSERT_EQ((*fp32)["status"], "ok");
  EXPECT_NEAR((*fp32)["samples_per_second"].get<double>(), 128 * 5 / 0.2, 1e-6);
  EXPECT_EQ((*fp32)["batch"], 128);
  const double window_s = (*fp32)["timed_seconds"].get<double>() / 3;
  EXPECT_NEAR((*fp32)["power_avg_w"].get<double>(), 300, 3);
  EXPECT_NEAR((*fp32)["joules_per_sample"].get<double>(), 300 * window_s / 640,
              0.05 * 300 * window_s / 640);
  EXPECT_NEAR((*fp32)["sm_activity"].get<double>(), 0.8, 0.01);
  EXPECT_NEAR((*fp32)["tensor_activity"].get<double>(), 0.5, 0.01);
  EXPECT_EQ((*fp32)["short_energy_windows"], true);  // 0.2 s windows
  EXPECT_EQ((*fp32)["guard"]["verdict"], "ok");
  EXPECT_TRUE((*row(doc, "infer", "fp32"))["guard"].is_null());  // no guard for inference

  // Answers: amp_fp16 is the fastest training mode that ran, fp16 having run out of memory.
  ASSERT_EQ(doc["answers"].size(), 2u);
  EXPECT_EQ(doc["answers"][0]["task"], "train");
  EXPECT_EQ(doc["answers"][0]["fastest"]["mode"], "amp_fp16");
  EXPECT_EQ(doc["answers"][0]["most_efficient"]["mode"], "amp_fp16");
  EXPECT_EQ(doc["answers"][0]["smallest_memory"]["mode"], "amp_fp16");
  EXPECT_EQ(doc["answers"][1]["fastest"]["mode"], "fp16");  // amp_fp16 crashed, fp8 unsupported

  // Each row ran gpuscope-torch with its own arguments; guards for the two training modes that ran.
  const std::string args = slurp(log);
  EXPECT_THAT(args, HasAllSubstrs({"--model vit_b16 --task train --mode fp32 --windows 3 --steps 5",
                                   "--task guard --model vit_b16 --mode fp32 --seed 0",
                                   "--task guard --model vit_b16 --mode amp_fp16 --seed 0"}));
  EXPECT_THAT(args, ::testing::Not(HasSubstr("--task guard --model vit_b16 --mode fp16")));
  // The progress line.
  EXPECT_THAT(run.err, HasAllSubstrs({"bench [1/8] vit_b16 train fp32", "elapsed, ~",
                                      "bench   skipped: CUDA out of memory"}));
}

// The seeds preset end to end (fake windows 10x shorter): every row, the guard for each training
// mode, and what cudnn.benchmark, loader workers, pinning and non_blocking bought.
TEST(CliBench, SeedsPresetAnswersTheSeedsQuestions) {
  CliRun run = bench("--preset seeds --json -", {"GPUSCOPE_FAKE_TORCH_TIME_SCALE=0.1"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  nlohmann::json doc = json_of(run);
  ASSERT_EQ(doc["rows"].size(), 23u);
  EXPECT_EQ(doc["rows_planned"], 23);
  // ViT-B/16 train and infer, ResNet-50 train.
  ASSERT_EQ(doc["answers"].size(), 3u);
  EXPECT_EQ(doc["answers"][0]["model"], "vit_b16");
  EXPECT_EQ(doc["answers"][0]["fastest"]["mode"], "fp8");  // the fake's fastest mode
  EXPECT_EQ(doc["answers"][1]["task"], "infer");
  const auto& resnet = doc["answers"][2];
  EXPECT_EQ(resnet["model"], "resnet50");
  std::map<std::string, double> bought;
  for (const auto& e : resnet["knob_effects"]) {
    bought[e["knob"].get<std::string>() + " " + e["mode"].get<std::string>()] =
        e["speedup"].get<double>();
  }
  EXPECT_NEAR(bought["cudnn_benchmark fp32"], 1.25, 1e-6);  // the fake: off is 0.8x
  EXPECT_NEAR(bought["cudnn_benchmark amp_fp16"], 1.25, 1e-6);
  EXPECT_NEAR(bought["loader_workers amp_bf16"], 2.0, 1e-6);
  EXPECT_NEAR(bought["pinned amp_bf16"], 1.2, 1e-6);
  EXPECT_NEAR(bought["non_blocking amp_bf16"], 1.1, 1e-6);
  // One guard per training mode and model: 7 ViT modes, ResNet-50 fp32, amp_fp16, amp_bf16.
  EXPECT_EQ(doc["guard"].size(), 10u);
}

// Without a driver there is nothing to measure: bench says so at once (no row runs) and exits 3,
// as every command does without a GPU.
TEST(CliBench, WithoutADriverItSaysSoAtOnceAndExits3) {
  const std::string log = fresh("no_driver.log");
  for (const std::string& no_driver :
       {std::string("GPUSCOPE_FAKE_NVML_SCENARIO=") + GPUSCOPE_TEST_FIXTURES +
            "/nvml/no_driver.json",
        std::string("GPUSCOPE_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1")}) {
    CliRun run = bench("--model vit_b16 --task infer --mode bf16 --windows 1 --steps 1 --json -",
                       {no_driver, "GPUSCOPE_FAKE_TORCH_LOG=" + log});
    EXPECT_EQ(run.exit_code, kExitNoGpu) << run.err;
    EXPECT_THAT(run.err, HasSubstr("no NVIDIA driver"));
    EXPECT_FALSE(std::filesystem::exists(log)) << "a row ran: " << slurp(log);
  }
}

// A driver with GPUs, but gpuscope-torch sees no CUDA device (CUDA_VISIBLE_DEVICES=, a broken
// CUDA install): the first row says so and bench stops there with exit code 3, rather than
// skipping every row and exiting 0.
TEST(CliBench, RowsThatFindNoCudaDeviceEndTheBenchWithExit3) {
  const std::string log = fresh("no_device.log");
  CliRun run = bench(
      "--model vit_b16 --task train,infer --mode fp32,bf16 --windows 1 --steps 1 "
      "--guard off --json -",
      {"GPUSCOPE_FAKE_TORCH_NO_DEVICE=vit_b16", "GPUSCOPE_FAKE_TORCH_LOG=" + log});
  EXPECT_EQ(run.exit_code, kExitNoGpu) << run.err;
  EXPECT_THAT(run.err, HasSubstr("no CUDA device"));
  std::ifstream in(log);
  int rows_run = 0;
  for (std::string line; std::getline(in, line);) ++rows_run;
  EXPECT_EQ(rows_run, 1);
}

// A row that outlives --row-timeout is stopped (SIGTERM, then SIGKILL) and skipped.
TEST(CliBench, ARowPastItsTimeLimitIsStopped) {
  CliRun run = bench(
      "--model vit_b16 --task train --mode fp32,bf16 --windows 3 --steps 1 --guard off "
      "--row-timeout 0.5 --json -",
      {"GPUSCOPE_FAKE_TORCH_TIME_SCALE=5"});  // fp32 windows of 1 s, bf16 of 0.2 s
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  nlohmann::json doc = json_of(run);
  EXPECT_EQ((*row(doc, "train", "fp32"))["skip_code"], "timeout");
  EXPECT_EQ((*row(doc, "train", "bf16"))["skip_code"], "timeout");
  CliRun quick = bench(
      "--model vit_b16 --task train --mode bf16 --windows 1 --steps 1 --guard off "
      "--row-timeout 5 --json -");
  EXPECT_EQ((*row(json_of(quick), "train", "bf16"))["status"], "ok");
}

TEST(CliBench, CrashesAndMalformedOutputAreSkippedRows) {
  CliRun run = bench("--model resnet50 --task infer --mode fp32,tf32,bf16 --windows 2 --steps 2",
                     {"GPUSCOPE_FAKE_TORCH_SEGV=fp32", "GPUSCOPE_FAKE_TORCH_MALFORMED=tf32"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(run.out, HasAllSubstrs({"skipped: crashed", "skipped: malformed", "killed by SIGSEGV",
                                      "not a JSON object", "fastest:          bf16"}));
}

TEST(CliBench, GuardVerdictsExcludeBrokenModes) {
  CliRun run = bench(
      "--model gpt2 --task train --mode fp32,fp16,bf16,amp_fp16 --windows 2 --steps 2 --json -",
      {"GPUSCOPE_FAKE_TORCH_GUARD_DIVERGE=bf16", "GPUSCOPE_FAKE_TORCH_GUARD_NAN=fp16",
       "GPUSCOPE_FAKE_TORCH_GUARD_COLLAPSE=amp_fp16"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  nlohmann::json doc = json_of(run);
  EXPECT_EQ((*row(doc, "train", "fp32"))["guard"]["verdict"], "ok");
  EXPECT_EQ((*row(doc, "train", "fp16"))["guard"]["verdict"], "nan");
  EXPECT_EQ((*row(doc, "train", "bf16"))["guard"]["verdict"], "diverged");
  EXPECT_EQ((*row(doc, "train", "amp_fp16"))["guard"]["verdict"], "scale_collapse");
  // bf16 and fp16 are faster, but broken: fp32 is the fastest that learns.
  EXPECT_EQ(doc["answers"][0]["fastest"]["mode"], "fp32");
  EXPECT_EQ(doc["guard"].size(), 4u);
}

TEST(CliBench, AGpuscopeTorchWithoutGuardGivesUnknown) {
  CliRun run = bench("--model vit_b16 --task train --mode fp32,bf16 --windows 1 --steps 1 --json -",
                     {"GPUSCOPE_FAKE_TORCH_NO_GUARD=1"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  nlohmann::json doc = json_of(run);
  const auto& guard = (*row(doc, "train", "bf16"))["guard"];
  EXPECT_EQ(guard["verdict"], "unknown");
  EXPECT_THAT(guard["reason"].get<std::string>(), HasSubstr("no --task guard"));
  EXPECT_EQ(doc["answers"][0]["fastest"]["mode"], "bf16");  // unknown does not exclude
  CliRun off =
      bench("--model vit_b16 --task train --mode bf16 --windows 1 --steps 1 --guard off --json -");
  EXPECT_TRUE((*row(json_of(off), "train", "bf16"))["guard"].is_null());
}

TEST(CliBench, StoreRunFlowsIntoTheReport) {
  const std::string db = fresh("bench.db");
  CliRun run = bench(
      "--model vit_b16 --mode fp32,bf16,fp8 --knob cudnn_benchmark=off,on --windows 2 --steps 2 "
      "--store " +
          db,
      {"GPUSCOPE_FAKE_TORCH_UNSUPPORTED=fp8", "GPUSCOPE_FAKE_TORCH_GUARD_NAN=bf16"});
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(run.err, HasSubstr("written to " + db));
  const auto runs = testing::stored_runs(db);
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].run.kind, "bench");
  const store::RunData& data = runs[0];
  EXPECT_THAT(data.run.command_line, HasSubstr("bench --model vit_b16"));

  // `gpuscope report` renders it in its bench section.
  const std::string report = fresh("report.md");
  const std::string command = std::string(GPUSCOPE_BIN) + " report " + db + " -o " + report +
                              " --format md >/dev/null 2>&1";
  ASSERT_EQ(std::system(command.c_str()), 0);
  const std::string md = slurp(report);
  EXPECT_THAT(md,
              HasAllSubstrs({"Training and inference modes (bench)",
                             // Rows that differ only in a knob stay apart, named by what differs.
                             "bf16 [cudnn_benchmark=off]", "bf16 [cudnn_benchmark=on]",
                             "skipped: fp8 needs compute capability 8.9 (fake)",
                             // The guard's verdict: in the row's note and as a finding.
                             "does not converge (guard: nan)",
                             "vit_b16 bf16 nan: the loss is not finite from step 30 on"}));
}

// Four inference rows, the third (fp32) with windows of 0.8 s: time to stop it while it runs.
const char* const kFourRows[] = {
    "--model",   "vit_b16", "--task",  "infer", "--mode", "bf16,fp16,fp32,tf32",
    "--windows", "4",       "--steps", "2"};

// The four rows' matrix run in the background: its JSON document, the fake torch's log of its
// arguments, gpuscope's stdout and stderr, and its pid.
struct FourRows {
  std::string json, log, out, err;
  pid_t pid = -1;

  // Sends `signal` and waits for the end: the wait status, -1 where there is none.
  int stop(int signal) const {
    kill(pid, signal);
    int status = 0;
    return waitpid(pid, &status, 0) == pid ? status : -1;
  }
};

// Starts `gpuscope bench ARGS --json JSON` in the background (the fake torch's windows 12x
// longer), its files named after `name`, and waits until the third row has started; pid -1 where
// it did not.
FourRows start_four_rows(const std::string& name) {
  FourRows rows{fresh(name + ".json"), fresh(name + "_args.log"), fresh(name + ".out"),
                fresh(name + ".err")};
  std::vector<std::string> argv = {"/usr/bin/env"};
  for (const auto& e : base_env()) argv.push_back(e);
  argv.push_back("GPUSCOPE_FAKE_TORCH_LOG=" + rows.log);
  argv.push_back("GPUSCOPE_FAKE_TORCH_TIME_SCALE=12");  // fp32 windows of 0.8 s
  argv.insert(argv.end(), {GPUSCOPE_BIN, "bench"});
  for (const char* a : kFourRows) argv.push_back(a);
  argv.insert(argv.end(), {"--json", rows.json});
  const pid_t pid = testing::spawn_captured(argv, rows.out, rows.err);
  if (pid > 0 &&
      testing::eventually([&] { return slurp(rows.log).find("--mode fp32") != std::string::npos; },
                          10)) {
    rows.pid = pid;
  }
  return rows;
}

// Ctrl-C: the running row is told (forwarded), the finished rows are kept and written.
TEST(CliBench, InterruptKeepsTheFinishedRows) {
  const FourRows rows = start_four_rows("interrupted");
  ASSERT_GT(rows.pid, 0) << slurp(rows.err);
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const int status = rows.stop(SIGINT);
  ASSERT_NE(status, -1);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), kExitInterrupted) << slurp(rows.err);
  nlohmann::json doc = nlohmann::json::parse(slurp(rows.json), nullptr, false);
  ASSERT_FALSE(doc.is_discarded()) << slurp(rows.err);
  EXPECT_EQ(doc["interrupted"], true);
  EXPECT_EQ(doc["rows_planned"], 4);
  ASSERT_EQ(doc["rows"].size(), 3u);  // bf16, fp16 finished; fp32 interrupted; tf32 never ran
  EXPECT_EQ(doc["rows"][0]["status"], "ok");
  EXPECT_EQ(doc["rows"][1]["status"], "ok");
  EXPECT_EQ(doc["rows"][2]["skip_code"], "interrupted");
  EXPECT_EQ(slurp(rows.log).find("--mode tf32"), std::string::npos);
  EXPECT_THAT(slurp(rows.out), HasSubstr("(interrupted)"));
}

int lines_of(const std::string& text) {
  return static_cast<int>(std::count(text.begin(), text.end(), '\n'));
}

// SIGKILL mid-matrix (nothing can be written then): the file holds the rows finished before,
// and --resume runs only the others.
TEST(CliBench, KilledMidMatrixLeavesItsRowsAndResumeRunsTheRest) {
  const FourRows rows = start_four_rows("killed");
  ASSERT_GT(rows.pid, 0) << slurp(rows.err);
  const int status = rows.stop(SIGKILL);
  ASSERT_NE(status, -1);
  ASSERT_TRUE(WIFSIGNALED(status));
  const std::string& json = rows.json;

  nlohmann::json left = nlohmann::json::parse(slurp(json), nullptr, false);
  ASSERT_FALSE(left.is_discarded()) << slurp(json);
  EXPECT_EQ(left["complete"], false);
  EXPECT_EQ(left["rows_planned"], 4);
  ASSERT_EQ(left["rows"].size(), 2u);  // bf16 and fp16 finished; fp32 was running
  EXPECT_EQ(left["rows"][0]["mode"], "bf16");
  EXPECT_EQ(left["rows"][1]["mode"], "fp16");
  EXPECT_EQ(left["rows"][1]["status"], "ok");
  EXPECT_EQ(left["answers"][0]["fastest"]["mode"], "bf16");  // over the rows so far
  EXPECT_FALSE(std::filesystem::exists(json + ".tmp"));

  // The same matrix, resumed into the same file: only fp32 and tf32 run.
  const std::string log = fresh("resumed_args.log");
  std::string args;
  for (const char* a : kFourRows) args += std::string(a) + " ";
  CliRun resumed =
      bench(args + "--resume " + json + " --json " + json, {"GPUSCOPE_FAKE_TORCH_LOG=" + log});
  ASSERT_EQ(resumed.exit_code, kExitOk) << resumed.err;
  const std::string ran = slurp(log);
  EXPECT_EQ(lines_of(ran), 2) << ran;
  EXPECT_THAT(ran, HasSubstr("--mode fp32"));
  EXPECT_THAT(ran, HasSubstr("--mode tf32"));
  EXPECT_THAT(ran, ::testing::Not(HasSubstr("--mode bf16")));
  EXPECT_THAT(resumed.err, HasSubstr("bench resuming: 2 of 4 rows kept"));
  EXPECT_THAT(resumed.err, HasSubstr("bench [3/4] vit_b16 infer fp32"));
  EXPECT_THAT(resumed.err, ::testing::Not(HasSubstr("bench [1/4]")));
  EXPECT_THAT(resumed.out, HasSubstr("4 of 4 rows on NVIDIA H100 80GB HBM3 (2 kept from an"));

  nlohmann::json doc = nlohmann::json::parse(slurp(json), nullptr, false);
  ASSERT_FALSE(doc.is_discarded());
  EXPECT_EQ(doc["complete"], true);
  EXPECT_EQ(doc["interrupted"], false);
  EXPECT_EQ(doc["resumed_rows"], 2);
  EXPECT_EQ(doc["earlier_wall_seconds"], left["wall_seconds"]);
  EXPECT_GT(doc["wall_seconds"].get<double>(), left["wall_seconds"].get<double>());
  EXPECT_EQ(doc["started_unix_s"], left["started_unix_s"]);
  ASSERT_EQ(doc["rows"].size(), 4u);
  std::vector<std::string> modes;
  for (const auto& r : doc["rows"]) {
    modes.push_back(r["mode"]);
    EXPECT_EQ(r["status"], "ok");
  }
  EXPECT_THAT(modes, ::testing::ElementsAre("bf16", "fp16", "fp32", "tf32"));
  EXPECT_EQ(doc["rows"][0], left["rows"][0]);  // kept as it was
  // The answers are over all four rows: tf32, new and 12x faster than the kept rows (their
  // windows were 12x longer), is the fastest; bf16, kept, the smallest.
  ASSERT_EQ(doc["answers"].size(), 1u);
  EXPECT_EQ(doc["answers"][0]["fastest"]["mode"], "tf32");
  EXPECT_EQ(doc["answers"][0]["smallest_memory"]["mode"], "bf16");

  // Resuming the finished file runs nothing.
  const std::string none = fresh("none_args.log");
  CliRun again =
      bench(args + "--resume " + json + " --json -", {"GPUSCOPE_FAKE_TORCH_LOG=" + none});
  ASSERT_EQ(again.exit_code, kExitOk) << again.err;
  EXPECT_EQ(slurp(none), "");
  EXPECT_EQ(json_of(again)["rows"].size(), 4u);
}

// The fp32 loss curve of the first attempt is the one a mode measured on resume is judged
// against: here a curve that ends far lower than the fake's, so bf16 is "diverged" only
// against it.
TEST(CliBench, GuardVerdictsSurviveAResume) {
  const std::string args =
      "--model gpt2 --task train --mode fp32,bf16 --windows 1 --steps 1 --guard-steps 60 ";
  CliRun full = bench(args + "--json -");
  ASSERT_EQ(full.exit_code, kExitOk) << full.err;
  nlohmann::json earlier = json_of(full);
  ASSERT_EQ((*row(earlier, "train", "bf16"))["guard"]["verdict"], "ok");
  earlier["rows"].erase(1);
  earlier["complete"] = false;
  nlohmann::json guards = nlohmann::json::array();
  for (auto g : earlier["guard"]) {
    if (g["mode"] != "fp32") continue;
    nlohmann::json losses = nlohmann::json::array();
    for (int i = 0; i < 60; ++i) losses.push_back(0.10 - 0.05 * i / 59);
    g["curve"]["losses"] = losses;
    guards.push_back(g);
  }
  ASSERT_EQ(guards.size(), 1u);
  earlier["guard"] = guards;
  const std::string file = fresh("guard_resume.json");
  std::ofstream(file) << earlier.dump(2);

  const std::string log = fresh("guard_resume_args.log");
  CliRun resumed =
      bench(args + "--resume " + file + " --json -", {"GPUSCOPE_FAKE_TORCH_LOG=" + log});
  ASSERT_EQ(resumed.exit_code, kExitOk) << resumed.err;
  const std::string ran = slurp(log);
  EXPECT_EQ(lines_of(ran), 2) << ran;  // the bf16 row and its guard run
  EXPECT_THAT(ran, HasSubstr("--model gpt2 --task train --mode bf16"));
  EXPECT_THAT(ran, HasSubstr("--task guard --model gpt2 --mode bf16"));
  EXPECT_THAT(ran, ::testing::Not(HasSubstr("--task guard --model gpt2 --mode fp32")));
  nlohmann::json doc = json_of(resumed);
  EXPECT_EQ((*row(doc, "train", "fp32"))["guard"]["verdict"], "ok");
  const auto& bf16 = (*row(doc, "train", "bf16"))["guard"];
  EXPECT_EQ(bf16["verdict"], "diverged");
  EXPECT_THAT(bf16["reason"].get<std::string>(), HasSubstr("fp32 at 0.05"));
  EXPECT_EQ(doc["guard"].size(), 2u);
  EXPECT_EQ(doc["answers"][0]["fastest"]["mode"], "fp32");  // bf16 is faster, but diverged
}

TEST(CliBench, ResumeOfAMissingForeignOrOtherMatrixFileIsAClearError) {
  const std::string small = "--model vit_b16 --task infer --windows 1 --steps 1 ";
  CliRun missing = bench(small + "--mode bf16 --resume /nonexistent/bench.json");
  EXPECT_EQ(missing.exit_code, kExitUsage);
  EXPECT_THAT(missing.err, HasSubstr("--resume: /nonexistent/bench.json: no such file"));

  const std::string foreign = std::string(GPUSCOPE_BENCH_TEST_DATA) + "/h100_constant_300w.json";
  CliRun other = bench(small + "--mode bf16 --resume " + foreign);
  EXPECT_EQ(other.exit_code, kExitError);
  EXPECT_THAT(other.err, HasSubstr("not a gpuscope bench document"));

  const std::string truncated = fresh("truncated.json");
  std::ofstream(truncated) << "{\"kind\": \"gpuscope.bench\", \"rows\": [";
  CliRun cut = bench(small + "--mode bf16 --resume " + truncated);
  EXPECT_EQ(cut.exit_code, kExitError);
  EXPECT_THAT(cut.err, HasSubstr("not JSON"));

  const std::string file = fresh("two_rows.json");
  ASSERT_EQ(bench(small + "--mode bf16,fp16 --json " + file).exit_code, kExitOk);
  const std::string before = slurp(file);
  CliRun modes = bench(small + "--mode bf16,fp32 --resume " + file + " --json " + file);
  EXPECT_EQ(modes.exit_code, kExitUsage);
  EXPECT_THAT(modes.err, HasSubstr("row 2 is 'vit_b16 infer fp16' in the file to resume but "
                                   "'vit_b16 infer fp32' in this matrix"));
  EXPECT_EQ(slurp(file), before);  // refused before anything was written
  CliRun windows = bench(
      "--model vit_b16 --task infer --windows 2 --steps 1 --mode bf16,fp16 "
      "--resume " +
      file);
  EXPECT_EQ(windows.exit_code, kExitUsage);
  EXPECT_THAT(windows.err, HasSubstr("--windows 1 --steps 1'; this matrix has '"));
  CliRun guard = bench(small + "--mode bf16,fp16 --guard off --resume " + file);
  EXPECT_EQ(guard.exit_code, kExitUsage);
  EXPECT_THAT(guard.err, HasSubstr("--guard on; this run has --guard off"));
}

// On a MIG instance (the fake's A100 in MIG mode): the rows run with the instance's UUID in
// CUDA_VISIBLE_DEVICES (no --device), the result names the instance, and the GPU's energy is not
// given to the rows (NVML measures it for the whole GPU only). bench could only address a whole
// GPU by index before.
TEST(CliBench, RunsOnAMigInstance) {
  const std::string mig = "MIG-2a3b4c5d-6e7f-5a8b-9c0d-1e2f3a4b5c6d";
  const std::string args_log = fresh("mig_args.log"), device_log = fresh("mig_devices.log");
  const std::vector<std::string> env = {
      std::string("GPUSCOPE_FAKE_NVML_SCENARIO=") + GPUSCOPE_TEST_FIXTURES + "/nvml/a100_mig.json",
      "GPUSCOPE_FAKE_TORCH_LOG=" + args_log, "GPUSCOPE_FAKE_TORCH_DEVICE_LOG=" + device_log};
  CliRun run = bench("--gpu " + mig +
                         " --model vit_b16 --task train --mode bf16 --windows 1 --steps 1 "
                         "--guard off --json -",
                     env);
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  const nlohmann::json doc = json_of(run);
  EXPECT_EQ(doc["gpu_index"], 0);
  EXPECT_EQ(doc["gpu"]["uuid"], mig);
  EXPECT_EQ(doc["gpu"]["name"], "NVIDIA A100-SXM4-40GB MIG 2g.10gb");
  const nlohmann::json* r = row(doc, "train", "bf16");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ((*r)["status"], "ok");
  EXPECT_TRUE((*r)["energy_j"].is_null());
  EXPECT_THAT(doc["warnings"].dump(), HasSubstr("GPU 0 MIG 2g.10gb (GI 5 CI 0) is a MIG instance"));
  EXPECT_EQ(slurp(device_log), mig + "\n");
  EXPECT_THAT(slurp(args_log), ::testing::Not(HasSubstr("--device")));

  // The GPU itself has three instances: bench runs on one, and says which there are.
  CliRun several = bench("--gpu 0 --model vit_b16 --task train --mode bf16 --guard off", env);
  EXPECT_EQ(several.exit_code, kExitUsage) << several.err;
  EXPECT_THAT(several.err, HasSubstr("bench runs on one GPU or MIG instance"));
  EXPECT_THAT(several.err, HasSubstr(mig));
}

}  // namespace
}  // namespace gpuscope
