// `gpuscope burn` end to end: the real binary with NVML replaced by the fake library and the
// worker by the scripted fake worker (GPUSCOPE_BURN_WORKER), checked on exit codes, stdout and
// stderr.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "burn_test_util.h"
#include "gpuscope/exit_codes.h"
#include "gpuscope/store.h"
#include "support/cli_run.h"
#include "support/matchers.h"
#include "support/stored_runs.h"

namespace gpuscope {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr const char* kH100 = "GPU-3f6b2c1d-8a4e-4f1b-9c2d-5e7a8b9c0d1e";

using testing::CliRun;
using testing::HasAllSubstrs;
using testing::run_captured;
using testing::slurp;

std::string fast(const std::string& fixture) {
  std::string text = slurp(burn::testing::burn_fixture(fixture));
  text = std::regex_replace(text, std::regex("#sleep 1\n"), "#sleep 0.05\n");
  return std::regex_replace(text, std::regex("#sleep 0\\.[35]\n"), "#sleep 0.02\n");
}

class CliBurn : public ::testing::Test {
 protected:
  void SetUp() override { dir_ = testing::test_scratch_dir("cli_burn"); }

  void script(const std::string& visible, const std::string& text) {
    std::ofstream(dir_ + "/" + visible + ".jsonl") << text;
  }

  // Runs gpuscope with `args`, the fake NVML playing `scenario` and the fake worker.
  CliRun gpuscope(const std::string& scenario, const std::string& args,
                  const std::string& extra_env = "") {
    const std::string env = testing::fake_nvml_env("nvml/" + scenario) +
                            " GPUSCOPE_BURN_WORKER=" + GPUSCOPE_FAKE_BURN_WORKER +
                            " GPUSCOPE_FAKE_WORKER_DIR=" + dir_ +
                            " CUDA_VISIBLE_DEVICES= " + extra_env;
    return run_captured("env " + env + " " + GPUSCOPE_BIN + " burn --sample-interval 0.05 " + args,
                        dir_ + "/std");
  }

  std::string dir_;
};

const char* kBf16Script = R"(
{"v":1,"type":"device","name":"NVIDIA A100-SXM4-40GB MIG","uuid":"MIG-x","compute_capability":"8.0","sm_count":42,"total_memory_bytes":20937965568}
#sleep 0.05
{"v":1,"type":"gemm_window","precision":"bf16","window":0,"gemms":100,"flop":1.0e14,"seconds":0.8,"elapsed_seconds":0.05,"flop_per_second":1.25e14,"mismatches":0,"nan_count":0,"inf_count":0}
#sleep 0.05
{"v":1,"type":"gemm_result","precision":"bf16","n":8192,"partial":false,"windows":1,"flop_per_second":{"median":1.25e14},"verification":{"gemms_checked":100,"mismatches":0,"nan_count":0,"inf_count":0,"reference_tiles_checked":1,"reference_tiles_failed":0,"ok":true},"fault_injected":false,"ok":true}
{"v":1,"type":"done","ok":true,"interrupted":false,"exit_code":0}
)";

TEST_F(CliBurn, NoDriverIsTheSameMessageAndExitCodeAsInfo) {
  CliRun run =
      gpuscope("no_driver.json", "", "GPUSCOPE_NVML_LIBRARY=/nonexistent/libnvidia-ml.so.1");
  EXPECT_EQ(run.exit_code, kExitNoGpu);
  EXPECT_THAT(run.err, HasSubstr("no NVIDIA driver"));
  EXPECT_EQ(run.out, "");
  run = gpuscope("no_gpu.json", "--json");
  EXPECT_EQ(run.exit_code, kExitNoGpu);
  auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["kind"], "gpuscope.burn");
  EXPECT_EQ(j["error"]["code"], "no_device");
}

TEST_F(CliBurn, PrintsTheTablesAndPasses) {
  script("default", fast("h100_worker_handmade.jsonl"));
  CliRun run = gpuscope("h100_sxm.json", "--precision fp64,bf16,fp8 --duration 3");
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(
      run.out,
      HasAllSubstrs({"GPU 0  NVIDIA H100 80GB HBM3  " + std::string(kH100) + "  [passed]",
                     "precision  TFLOP/s  % of peak  errors  max °C  throttled (s)  "
                     "avg W  TFLOP/J",
                     "bf16       767.2    77.5%      0",
                     "Device memory bandwidth (bytes read + bytes written, both counted)",
                     "pinned    h2d            6.1    48.2   54.7", "Result: passed (1 device"}));
  // Progress goes to stderr, a line per phase when stderr is not a terminal.
  EXPECT_THAT(run.err, HasAllSubstrs({"gpuscope: burn ", "GPU 0 bf16 2/5"}));
  EXPECT_THAT(run.err, Not(HasSubstr("\r")));
  EXPECT_EQ(slurp(dir_ + "/" + kH100 + ".args"),
            "--precision\nfp64,bf16,fp8\n--duration\n3\n--memory\n--host-link\n"
            "CUDA_VISIBLE_DEVICES=" +
                std::string(kH100) + "\n");
}

TEST_F(CliBurn, PassesTheOptionsToTheWorker) {
  script("default", kBf16Script);
  CliRun run = gpuscope("h100_sxm.json",
                        "--precision bf16 --duration 0.5 --size 4096 --memory-fraction 0.5 "
                        "--no-memory --no-host-link");
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_EQ(slurp(dir_ + "/" + kH100 + ".args"),
            "--precision\nbf16\n--duration\n0.5\n--size\n4096\n--memory-fraction\n0.5\n"
            "CUDA_VISIBLE_DEVICES=" +
                std::string(kH100) + "\n");
}

TEST_F(CliBurn, JsonHasTheSchemaVersionAndTheResults) {
  script("default", fast("h100_worker_handmade.jsonl"));
  CliRun run = gpuscope("h100_sxm.json", "--precision fp64,bf16,fp8 --json");
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  auto j = nlohmann::json::parse(run.out);
  EXPECT_EQ(j["schema_version"], 1);
  EXPECT_EQ(j["ok"], true);
  EXPECT_EQ(j["targets"][0]["gemm"][1]["precision"], "bf16");
  EXPECT_EQ(j["targets"][0]["gemm"][1]["flop_per_s"]["median"], 767.2e12);
  EXPECT_EQ(j["targets"][0]["memory"].size(), 4u);
}

TEST_F(CliBurn, StoreRecordsEachRunWithItsResults) {
  script("default", fast("h100_worker_handmade.jsonl"));
  const std::string db = dir_ + "/results.db";
  for (int i = 0; i < 2; ++i) {
    CliRun run = gpuscope("h100_sxm.json", "--precision fp64,bf16,fp8 --store " + db);
    ASSERT_EQ(run.exit_code, kExitOk) << run.err;
    EXPECT_THAT(run.err,
                HasSubstr("gpuscope: burn run " + std::to_string(i + 1) + " written to " + db));
    EXPECT_THAT(run.out, HasSubstr("Result: passed"));  // the console output is unchanged
  }
  const std::vector<store::RunData> runs = testing::stored_runs(db);
  ASSERT_EQ(runs.size(), 2u);
  const store::RunData& run = runs.front();
  EXPECT_EQ(run.run.kind, "burn");
  EXPECT_THAT(run.run.command_line, HasSubstr("burn --sample-interval 0.05 --precision"));
  ASSERT_TRUE(run.run.ended_unix_s.has_value());
  EXPECT_GE(*run.run.ended_unix_s, run.run.started_unix_s);
  EXPECT_GT(run.run.started_unix_s, 1.7e9);
  ASSERT_EQ(run.run.gpus.size(), 1u);
  EXPECT_EQ(run.run.gpus[0].uuid, kH100);
  bool bf16 = false;
  for (const store::Measurement& m : run.measurements) {
    if (m.name == store::names::kGemmFlopPerS && m.tags.value("precision", "") == "bf16" &&
        m.tags.value("stat", "") == "median") {
      bf16 = m.value == 767.2e12;
    }
  }
  EXPECT_TRUE(bf16) << "the bf16 GEMM rate is not in the store";
}

TEST_F(CliBurn, AStoreThatCannotBeOpenedFailsBeforeTheBurn) {
  script("default", fast("h100_worker_handmade.jsonl"));
  std::ofstream(dir_ + "/not_a_store.db") << "plain text, not SQLite\n";
  CliRun run = gpuscope("h100_sxm.json", "--precision bf16 --store " + dir_ + "/not_a_store.db");
  EXPECT_EQ(run.exit_code, kExitError) << run.err;
  EXPECT_THAT(run.err, HasSubstr("is not a gpuscope results store"));
  EXPECT_FALSE(std::ifstream(dir_ + "/" + kH100 + ".args").good()) << "the worker ran";
  EXPECT_EQ(slurp(dir_ + "/not_a_store.db"), "plain text, not SQLite\n");
}

TEST_F(CliBurn, AWrongResultExitsOneAndNamesTheGpu) {
  script("default", fast("worker_verification_failure_handmade.jsonl"));
  CliRun run = gpuscope("h100_sxm.json", "--precision bf16 --inject-fault");
  EXPECT_EQ(run.exit_code, kExitCheckFailed);
  EXPECT_THAT(run.err, HasSubstr("gpuscope: error: GPU 0 (NVIDIA H100 80GB HBM3, " +
                                 std::string(kH100) + "): bf16 GEMM verification failed"));
  EXPECT_THAT(run.out, HasAllSubstrs({"[FAILED: wrong results]", "Result: FAILED"}));
  EXPECT_THAT(slurp(dir_ + "/" + kH100 + ".args"), HasSubstr("--inject-fault\n"));
}

TEST_F(CliBurn, RunsOneWorkerPerMigInstance) {
  script("default", kBf16Script);
  CliRun run = gpuscope("a100_mig.json", "--precision bf16 --no-memory --no-host-link");
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(run.out,
              HasAllSubstrs({"GPU 0 MIG 3g.20gb (GI 1 CI 0)  NVIDIA A100-SXM4-40GB MIG "
                             "3g.20gb  MIG-1f2e3d4c-5b6a-5978-8695-a4b3c2d1e0f9  [passed]",
                             "GPU 0 MIG 2g.10gb (GI 5 CI 0)", "GPU 0 MIG 1g.5gb (GI 13 CI 0)",
                             "Result: passed (3 devices"}));
  for (const char* uuid :
       {"MIG-1f2e3d4c-5b6a-5978-8695-a4b3c2d1e0f9", "MIG-2a3b4c5d-6e7f-5a8b-9c0d-1e2f3a4b5c6d",
        "MIG-3c4d5e6f-7a8b-5c9d-0e1f-2a3b4c5d6e7f"}) {
    EXPECT_THAT(slurp(dir_ + "/" + uuid + ".args"),
                HasSubstr("CUDA_VISIBLE_DEVICES=" + std::string(uuid)));
  }
}

TEST_F(CliBurn, AKilledWorkerFailsItsGpuAndTheOthersAreStillPrinted) {
  script("default", kBf16Script);
  script(
      "MIG-2a3b4c5d-6e7f-5a8b-9c0d-1e2f3a4b5c6d",
      R"({"v":1,"type":"device","name":"MIG","uuid":"MIG-x","compute_capability":"8.0","sm_count":28,"total_memory_bytes":1})"
      "\n#kill KILL\n");
  CliRun run = gpuscope("a100_mig.json", "--precision bf16 --no-memory --no-host-link");
  EXPECT_EQ(run.exit_code, kExitError);
  EXPECT_THAT(run.err, HasSubstr("gpuscope: error: GPU 0 MIG 2g.10gb (GI 5 CI 0) (NVIDIA "
                                 "A100-SXM4-40GB MIG 2g.10gb, MIG-2a3b4c5d-6e7f-5a8b-9c0d-"
                                 "1e2f3a4b5c6d): the worker was killed by signal 9 (SIGKILL)"));
  EXPECT_THAT(run.out, HasAllSubstrs({"GPU 0 MIG 3g.20gb (GI 1 CI 0)  NVIDIA A100-SXM4-40GB MIG "
                                      "3g.20gb  MIG-1f2e3d4c-5b6a-5978-8695-a4b3c2d1e0f9  [passed]",
                                      "bf16       125.0"}));
}

constexpr const char* kTwoGpus = "../telemetry/two_gpus.json";
constexpr const char* kBothGpus =
    "GPU-00000000-1111-2222-3333-444444444444,GPU-55555555-6666-7777-8888-999999999999";
const char* kInterconnectScript = R"(
{"v":1,"type":"device","name":"NVIDIA H100 80GB HBM3","uuid":"GPU-00000000-1111-2222-3333-444444444444","compute_capability":"9.0","sm_count":132,"total_memory_bytes":85017493504}
{"v":1,"type":"all_reduce","gpus":2,"bytes":1048576,"iterations":200,"seconds":2.37e-05,"algorithm_bandwidth":4.42e10,"bus_bandwidth":4.42e10}
{"v":1,"type":"all_reduce","gpus":2,"bytes":1073741824,"iterations":20,"seconds":3.233e-03,"algorithm_bandwidth":3.321e11,"bus_bandwidth":3.321e11}
{"v":1,"type":"peer_copy","source":0,"destination":1,"peer_access":true,"bytes":268435456,"seconds":6.85e-04,"bytes_per_second":3.918e11}
{"v":1,"type":"peer_copy","source":1,"destination":0,"peer_access":false,"bytes":268435456,"seconds":1.0e-02,"bytes_per_second":2.68e10}
{"v":1,"type":"done","ok":true,"interrupted":false,"exit_code":0}
)";

TEST_F(CliBurn, TwoWholeGpusAlsoMeasureTheLinksBetweenThem) {
  script("default", kBf16Script);
  script(kBothGpus, kInterconnectScript);
  CliRun run = gpuscope(kTwoGpus, "--precision bf16 --no-memory --no-host-link");
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  // The link line from NVML (the fake's scenario): 12 of GPU 0's 18 NVLinks go to GPU 1.
  EXPECT_THAT(run.out, HasAllSubstrs({"Interconnect: 2 GPUs together (GPU 0, GPU 1)",
                                      "  GPU 0 <-> GPU 1: NV12 (12 NVLinks, PCIe SYS)",
                                      "    1024 MiB           332.1           332.1",
                                      "copy GPU 0 -> GPU 1: 391.8 GB/s (peer to peer)",
                                      "copy GPU 1 -> GPU 0: 26.8 GB/s (staged by the driver)"}));
  // One worker sees both GPUs, in plan order.
  EXPECT_EQ(slurp(dir_ + "/" + kBothGpus + ".args"),
            std::string("--interconnect\nCUDA_VISIBLE_DEVICES=") + kBothGpus + "\n");

  run = gpuscope(kTwoGpus, "--precision bf16 --no-memory --no-host-link --json");
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  const auto j = nlohmann::json::parse(run.out);
  const auto& ic = j.at("interconnect");
  EXPECT_TRUE(ic["ok"].get<bool>());
  EXPECT_EQ(ic["gpus"], nlohmann::json::array({"GPU 0", "GPU 1"}));
  ASSERT_EQ(ic["all_reduce"].size(), 2u);
  EXPECT_EQ(ic["all_reduce"][1]["bytes"], 1073741824);
  EXPECT_DOUBLE_EQ(ic["all_reduce"][1]["bus_bytes_per_second"].get<double>(), 3.321e11);
  EXPECT_EQ(ic["peer_copies"][0]["source"], "GPU 0");
  EXPECT_EQ(ic["peer_copies"][1]["peer_access"], false);
  ASSERT_EQ(ic["links"].size(), 1u);
  EXPECT_EQ(ic["links"][0]["label"], "NV12");
  EXPECT_EQ(ic["links"][0]["nvlinks"], 12);
  EXPECT_EQ(ic["links"][0]["pcie_path"], "SYS");
}

TEST_F(CliBurn, TheInterconnectIsSkippedOnRequestAndItsFailureIsSaidNotFatal) {
  script("default", kBf16Script);
  script(kBothGpus, kInterconnectScript);
  CliRun run = gpuscope(kTwoGpus, "--precision bf16 --no-memory --no-host-link --no-interconnect");
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_THAT(run.out, Not(HasSubstr("Interconnect")));
  EXPECT_FALSE(std::ifstream(dir_ + "/" + kBothGpus + ".args").good());

  script(
      kBothGpus,
      R"({"v":1,"type":"all_reduce","gpus":2,"bytes":1048576,"iterations":200,"seconds":2.37e-05,"algorithm_bandwidth":4.42e10,"bus_bandwidth":4.42e10})"
      "\n#kill KILL\n");
  run = gpuscope(kTwoGpus, "--precision bf16 --no-memory --no-host-link");
  EXPECT_EQ(run.exit_code, kExitOk) << "the GPUs passed; the links' test is said" << run.err;
  EXPECT_THAT(run.out,
              HasAllSubstrs({"       1 MiB            44.2",
                             "problem: the interconnect worker ended: killed by signal 9"}));
}

TEST_F(CliBurn, OneGpuOrMigInstancesHaveNoInterconnectTest) {
  script("default", kBf16Script);
  CliRun run = gpuscope("a100_mig.json", "--precision bf16 --no-memory --no-host-link --json");
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_FALSE(nlohmann::json::parse(run.out).contains("interconnect"));
}

TEST_F(CliBurn, CtrlCPrintsWhatWasMeasuredAndExits130) {
  script(
      "default",
      R"({"v":1,"type":"device","name":"NVIDIA H100 80GB HBM3","uuid":"GPU-x","compute_capability":"9.0","sm_count":132,"total_memory_bytes":1}
{"v":1,"type":"gemm_window","precision":"bf16","window":0,"gemms":100,"flop":7.67e14,"seconds":1.0,"elapsed_seconds":1.0,"flop_per_second":7.67e14,"mismatches":0,"nan_count":0,"inf_count":0}
#interrupt-parent
#wait-interrupt
{"v":1,"type":"gemm_result","precision":"bf16","n":8192,"partial":true,"windows":1,"flop_per_second":{"median":7.67e14},"verification":{"gemms_checked":100,"mismatches":0,"nan_count":0,"inf_count":0,"reference_tiles_checked":1,"reference_tiles_failed":0,"ok":true},"fault_injected":false,"ok":true}
{"v":1,"type":"done","ok":true,"interrupted":true,"exit_code":130}
#exit 130
)");
  CliRun run = gpuscope("h100_sxm.json", "--precision bf16,fp8");
  EXPECT_EQ(run.exit_code, kExitInterrupted) << run.err;
  EXPECT_THAT(run.out, HasAllSubstrs({"[interrupted]", "bf16       767.0", "partial",
                                      "fp8        not run: interrupted before it ran",
                                      "Result: interrupted"}));
  EXPECT_THAT(run.err, HasSubstr("gpuscope: interrupted; printed what was measured"));
}

TEST_F(CliBurn, AMissingWorkerIsAClearErrorWithExitCode6) {
  CliRun run = gpuscope("h100_sxm.json", "", "GPUSCOPE_BURN_WORKER=/nonexistent/worker");
  EXPECT_EQ(run.exit_code, kExitError);
  EXPECT_THAT(run.err, HasSubstr("GPUSCOPE_BURN_WORKER=/nonexistent/worker is not an executable"));
  EXPECT_EQ(run.out, "");
}

TEST_F(CliBurn, BadSelectionsAndArgumentsAreUsageErrors) {
  testing::expect_refused(
      [this](const std::string& args) { return gpuscope("h100_sxm.json", args); }, kExitUsage,
      {{"--gpu 7", "there is no GPU 7"},
       {"--precision fp7", "unknown precision 'fp7'"},
       {"--duration -1", ""}});
  testing::expect_refused(
      [this](const std::string& args) { return gpuscope("a100_mig.json", args); }, kExitUsage,
      {{"--gpu MIG-00000000-0000-0000-0000-000000000000", "no MIG instance has the UUID"}});
}

// The real worker, found next to the binary in the build tree, on this machine (no GPU visible
// to it): its GPU is marked failed with the worker's own words, and burn exits 3.
TEST_F(CliBurn, FindsTheRealWorkerInTheBuildTree) {
  const std::string bin = GPUSCOPE_BIN;
  const std::string worker =
      bin.substr(0, bin.rfind("/gpuscope/")) + "/gpuscope-burn-worker/gpuscope-burn-worker";
  if (!std::ifstream(worker)) GTEST_SKIP() << "the worker is not built: " << worker;
  const std::string out = dir_ + "/out.txt";
  const std::string command = "env -u GPUSCOPE_BURN_WORKER CUDA_VISIBLE_DEVICES= " +
                              testing::fake_nvml_env("nvml/h100_sxm.json") + " " + bin +
                              " burn --json --precision bf16 --duration 1 >" + out +
                              " 2>/dev/null </dev/null";
  const int status = std::system(command.c_str());
  auto j = nlohmann::json::parse(slurp(out));
  if (j["targets"][0]["outcome"] == "passed") GTEST_SKIP() << "this machine has a GPU";
  EXPECT_EQ(WEXITSTATUS(status), kExitNoGpu);
  EXPECT_EQ(j["worker_program"], worker);
  EXPECT_EQ(j["targets"][0]["outcome"], "failed");
  EXPECT_EQ(j["targets"][0]["worker"]["exit_code"], 3);
}

}  // namespace
}  // namespace gpuscope
