// Whole burns in this process: the fake NVML for telemetry and the scripted fake worker
// (fake_worker.cc) for the workers. Covers MIG (one worker per instance with its UUID), a
// crashed worker among healthy ones, a wrong result, Ctrl-C, a hanging worker, a missing one.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <stdlib.h>
#include <sys/stat.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "../support/fake_nvml_fixture.h"
#include "burn_test_util.h"
#include "gpuscope/burn.h"
#include "gpuscope/exit_codes.h"
#include "gpuscope/info.h"

namespace gpuscope::burn {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;

constexpr const char* kMig1 = "MIG-1f2e3d4c-5b6a-5978-8695-a4b3c2d1e0f9";
constexpr const char* kMig2 = "MIG-2a3b4c5d-6e7f-5a8b-9c0d-1e2f3a4b5c6d";
constexpr const char* kMig3 = "MIG-3c4d5e6f-7a8b-5c9d-0e1f-2a3b4c5d6e7f";
constexpr const char* kH100 = "GPU-3f6b2c1d-8a4e-4f1b-9c2d-5e7a8b9c0d1e";

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A fixture script with its pauses shortened, so a whole run takes a fraction of a second.
std::string fast(const std::string& fixture) {
  std::string text = slurp(testing::burn_fixture(fixture));
  text = std::regex_replace(text, std::regex("#sleep 1\n"), "#sleep 0.05\n");
  return std::regex_replace(text, std::regex("#sleep 0\\.[35]\n"), "#sleep 0.02\n");
}

// A worker that measures bf16 for three short windows and finishes.
const char* kBf16Script = R"(
{"v":1,"type":"device","name":"NVIDIA A100-SXM4-40GB MIG 3g.20gb","uuid":"MIG-x","pci_bus_id":"0000:07:00.0","compute_capability":"8.0","sm_count":42,"total_memory_bytes":20937965568}
#sleep 0.05
{"v":1,"type":"gemm_window","precision":"bf16","window":0,"gemms":100,"flop":1.0e14,"seconds":0.8,"elapsed_seconds":0.05,"flop_per_second":1.25e14,"mismatches":0,"nan_count":0,"inf_count":0}
{"v":1,"type":"progress","precision":"bf16","elapsed_seconds":0.05,"fraction":0.3}
#sleep 0.05
{"v":1,"type":"gemm_window","precision":"bf16","window":1,"gemms":100,"flop":1.0e14,"seconds":0.8,"elapsed_seconds":0.1,"flop_per_second":1.25e14,"mismatches":0,"nan_count":0,"inf_count":0}
{"v":1,"type":"gemm_result","precision":"bf16","n":8192,"partial":false,"windows":2,"flop_per_second":{"median":1.25e14,"min":1.25e14,"max":1.25e14},"verification":{"gemms_checked":200,"mismatches":0,"nan_count":0,"inf_count":0,"reference_tiles_checked":2,"reference_tiles_failed":0,"ok":true},"fault_injected":false,"ok":true}
{"v":1,"type":"done","ok":true,"interrupted":false,"exit_code":0}
)";

class BurnRun : public gpuscope::testing::FakeNvmlTest {
 protected:
  void SetUp() override {
    FakeNvmlTest::SetUp();
    const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
    dir_ = ::testing::TempDir() + "/burn_run_" + info->name();
    std::string command = "rm -rf '" + dir_ + "'";
    ASSERT_EQ(std::system(command.c_str()), 0);
    ASSERT_EQ(mkdir(dir_.c_str(), 0755), 0);
    setenv("GPUSCOPE_FAKE_WORKER_DIR", dir_.c_str(), 1);
  }
  void TearDown() override {
    unsetenv("GPUSCOPE_FAKE_WORKER_DIR");
    FakeNvmlTest::TearDown();
  }

  // The script a worker plays; `visible` is its CUDA_VISIBLE_DEVICES, or "default".
  void script(const std::string& visible, const std::string& text) {
    std::ofstream(dir_ + "/" + visible + ".jsonl") << text;
  }
  // What the worker for `visible` was started with: its arguments, then CUDA_VISIBLE_DEVICES.
  std::string args_of(const std::string& visible) { return slurp(dir_ + "/" + visible + ".args"); }

  Result<Report> burn(const std::string& scenario, Options options) {
    load(scenario);
    session_ = open();
    auto info = collect_info(*session_, CudaInventory{}, InfoOptions{options.gpu});
    if (!info.ok()) return info.status();
    auto p = plan(*info, options.gpu);
    if (!p.ok()) return p.status();
    if (options.worker.empty()) options.worker = GPUSCOPE_FAKE_BURN_WORKER;
    options.sample_interval_seconds = 0.02;
    return run(*session_, *info, *p, options,
               [this](const Progress& progress) { progress_.push_back(progress); });
  }

  std::string dir_;
  std::unique_ptr<nvml::Session> session_;
  std::vector<Progress> progress_;
};

Options bf16_only() {
  Options o;
  o.precisions = {Precision::bf16};
  o.memory = false;
  o.host_link = false;
  return o;
}

const PrecisionRow& row(const TargetResult& r, Precision p) {
  for (const PrecisionRow& x : r.gemm) {
    if (x.precision == p) return x;
  }
  throw std::runtime_error("no row");
}

TEST_F(BurnRun, AWholeGpuPassesWithTelemetry) {
  script("default", fast("h100_worker_handmade.jsonl"));
  Options o;
  o.precisions = {Precision::fp64, Precision::bf16, Precision::fp8};
  o.duration_seconds = 3;
  auto report = burn("h100_sxm.json", o);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  EXPECT_EQ(exit_code(*report), kExitOk);
  EXPECT_FALSE(report->interrupted);
  ASSERT_EQ(report->targets.size(), 1u);
  const TargetResult& t = report->targets[0];
  EXPECT_EQ(t.outcome, Outcome::passed) << t.failure;
  const PrecisionRow& bf16 = row(t, Precision::bf16);
  EXPECT_EQ(bf16.status, RowStatus::measured);
  EXPECT_DOUBLE_EQ(*bf16.flop_per_second_median, 767.2e12);
  EXPECT_TRUE(bf16.fraction_of_peak);
  EXPECT_TRUE(bf16.temperature_max_c);  // sampled from the fake NVML while it ran
  EXPECT_TRUE(bf16.power_average_w);
  EXPECT_FALSE(bf16.throttle.empty());
  EXPECT_EQ(t.memory.size(), 4u);
  EXPECT_EQ(t.host_link.size(), 18u);
  EXPECT_EQ(args_of(kH100),
            "--precision\nfp64,bf16,fp8\n--duration\n3\n--memory\n--host-link\n"
            "CUDA_VISIBLE_DEVICES=GPU-3f6b2c1d-8a4e-4f1b-9c2d-5e7a8b9c0d1e\n");
  EXPECT_EQ(report->worker, GPUSCOPE_FAKE_BURN_WORKER);
}

TEST_F(BurnRun, ReportsProgressWhileTheWorkersRun) {
  script("default", fast("h100_worker_handmade.jsonl"));
  Options o;
  o.precisions = {Precision::fp64, Precision::bf16, Precision::fp8};
  ASSERT_TRUE(burn("h100_sxm.json", o).ok());
  ASSERT_GE(progress_.size(), 2u);
  std::set<std::string> phases;
  for (const Progress& p : progress_) phases.insert(p.targets.at(0).phase);
  EXPECT_THAT(phases, Contains("bf16"));
  const TargetProgress& last = progress_.back().targets.at(0);
  EXPECT_TRUE(last.finished);
  EXPECT_FALSE(last.failed);
  EXPECT_EQ(last.steps, 5);  // three precisions, memory, host link
}

TEST_F(BurnRun, MigRunsOneWorkerPerInstanceWithItsUuid) {
  script("default", kBf16Script);
  auto report = burn("a100_mig.json", bf16_only());
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  EXPECT_EQ(exit_code(*report), kExitOk);
  ASSERT_EQ(report->targets.size(), 3u);
  for (const char* uuid : {kMig1, kMig2, kMig3}) {
    EXPECT_THAT(args_of(uuid), HasSubstr(std::string("CUDA_VISIBLE_DEVICES=") + uuid + "\n"));
  }
  EXPECT_EQ(report->targets[0].target.label(), "GPU 0 MIG 3g.20gb (GI 1 CI 0)");
  EXPECT_EQ(report->targets[2].target.mig->profile, "1g.5gb");
  for (const TargetResult& t : report->targets) {
    EXPECT_EQ(t.outcome, Outcome::passed) << t.target.label() << ": " << t.failure;
    EXPECT_DOUBLE_EQ(*t.gemm.at(0).flop_per_second_median, 1.25e14);
    EXPECT_THAT(t.warnings, Contains(HasSubstr("shared by 3 MIG instances")));
  }
}

TEST_F(BurnRun, OneMigInstanceSelectedByUuid) {
  script("default", kBf16Script);
  Options o = bf16_only();
  o.gpu = kMig2;
  auto report = burn("a100_mig.json", o);
  ASSERT_TRUE(report.ok()) << report.status().to_string();
  ASSERT_EQ(report->targets.size(), 1u);
  EXPECT_EQ(report->targets[0].target.uuid(), kMig2);
}

TEST_F(BurnRun, ACrashedWorkerFailsItsInstanceAndTheOthersStillReport) {
  script("default", kBf16Script);
  script(kMig2, std::string(kBf16Script).substr(0, std::string(kBf16Script).find("#sleep")) +
                    "#stderr gpuscope-burn-worker: bf16 n=8192 for 10 s ...\n#kill SEGV\n");
  auto report = burn("a100_mig.json", bf16_only());
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(exit_code(*report), kExitError);
  EXPECT_EQ(report->targets[0].outcome, Outcome::passed);
  EXPECT_EQ(report->targets[2].outcome, Outcome::passed);
  const TargetResult& crashed = report->targets[1];
  EXPECT_EQ(crashed.outcome, Outcome::failed);
  EXPECT_EQ(crashed.failure,
            "the worker crashed (killed by signal 11 (SIGSEGV)); its last message: "
            "gpuscope-burn-worker: bf16 n=8192 for 10 s ...");
  EXPECT_EQ(crashed.worker_signal, SIGSEGV);
}

TEST_F(BurnRun, AWrongResultFailsTheRunAndNamesTheGpu) {
  script("default", fast("worker_verification_failure_handmade.jsonl"));
  Options o = bf16_only();
  o.inject_fault = true;
  auto report = burn("h100_sxm.json", o);
  ASSERT_TRUE(report.ok());
  EXPECT_EQ(exit_code(*report), kExitCheckFailed);
  const TargetResult& t = report->targets[0];
  EXPECT_EQ(t.outcome, Outcome::verification_failed);
  EXPECT_THAT(t.failure, HasSubstr("NVIDIA H100 80GB HBM3 (GPU-3f6b2c1d"));
  EXPECT_EQ(t.worker_exit_code, 1);
  EXPECT_THAT(args_of(kH100), HasSubstr("--inject-fault\n"));
}

// A worker sends SIGINT to this process, as a Ctrl-C would; run() forwards it to every worker,
// which stop and report partial results.
TEST_F(BurnRun, CtrlCStopsEveryWorkerAndKeepsWhatWasMeasured) {
  const std::string head = R"(
{"v":1,"type":"device","name":"MIG","uuid":"MIG-x","compute_capability":"8.0","sm_count":42,"total_memory_bytes":1}
{"v":1,"type":"gemm_window","precision":"bf16","window":0,"gemms":100,"flop":1.0e14,"seconds":0.8,"elapsed_seconds":0.05,"flop_per_second":1.25e14,"mismatches":0,"nan_count":0,"inf_count":0}
)";
  const std::string tail = R"(#wait-interrupt
{"v":1,"type":"gemm_result","precision":"bf16","n":8192,"partial":true,"windows":1,"flop_per_second":{"median":1.25e14},"verification":{"gemms_checked":100,"mismatches":0,"nan_count":0,"inf_count":0,"reference_tiles_checked":1,"reference_tiles_failed":0,"ok":true},"fault_injected":false,"ok":true}
{"v":1,"type":"done","ok":true,"interrupted":true,"exit_code":130}
#exit 130
)";
  script("default", head + tail);
  script(kMig3, head + "#sleep 0.3\n#interrupt-parent\n" + tail);
  Options o = bf16_only();
  o.precisions = {Precision::bf16, Precision::fp8};
  auto report = burn("a100_mig.json", o);
  ASSERT_TRUE(report.ok());
  EXPECT_TRUE(report->interrupted);
  EXPECT_EQ(exit_code(*report), kExitInterrupted);
  for (const TargetResult& t : report->targets) {
    EXPECT_EQ(t.outcome, Outcome::interrupted) << t.target.label() << ": " << t.failure;
    EXPECT_EQ(t.worker_exit_code, 130);
    EXPECT_TRUE(row(t, Precision::bf16).partial);
    EXPECT_EQ(row(t, Precision::fp8).note, "interrupted before it ran");
  }
  struct sigaction current {};
  sigaction(SIGINT, nullptr, &current);
  EXPECT_EQ(current.sa_handler, SIG_DFL);  // run() gave the handler back
}

TEST_F(BurnRun, AHangingWorkerIsKilledAtItsTimeout) {
  script(
      "default",
      R"({"v":1,"type":"device","name":"H100","uuid":"GPU-x","compute_capability":"9.0","sm_count":132,"total_memory_bytes":1})"
      "\n#hang\n");
  Options o = bf16_only();
  o.worker_timeout_seconds = 0.3;
  auto report = burn("h100_sxm.json", o);
  ASSERT_TRUE(report.ok());
  const TargetResult& t = report->targets[0];
  EXPECT_EQ(t.outcome, Outcome::failed);
  EXPECT_THAT(t.failure, HasSubstr("the worker timed out after"));
  EXPECT_EQ(exit_code(*report), kExitError);
}

TEST_F(BurnRun, AMissingWorkerIsAnInstallationError) {
  Options o = bf16_only();
  o.worker = "/nonexistent/gpuscope-burn-worker";
  auto report = burn("h100_sxm.json", o);
  EXPECT_EQ(report.code(), Code::io_error);
  EXPECT_THAT(report.status().message(), HasSubstr("/nonexistent/gpuscope-burn-worker"));
}

TEST_F(BurnRun, AWorkerWithoutAScriptFailsWithItsErrorLine) {
  auto report = burn("h100_sxm.json", bf16_only());  // no script in the folder
  ASSERT_TRUE(report.ok());
  const TargetResult& t = report->targets[0];
  EXPECT_EQ(t.outcome, Outcome::failed);
  EXPECT_THAT(t.failure, HasSubstr("fake worker: no script"));
  EXPECT_THAT(t.failure, HasSubstr("(internal, worker exit code 6)"));
}

}  // namespace
}  // namespace gpuscope::burn
