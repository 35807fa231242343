// The launch variables of a data-parallel rank (torchrun's, srun's) and the lines a rank prints.
#include "distributed/launch_env.h"

#include <gtest/gtest.h>

#include <chrono>
#include <fstream>
#include <map>
#include <string>
#include <vector>

#include "distributed/launcher.h"

namespace gpuscope::workloads {
namespace {

EnvLookup env_of(std::map<std::string, std::string> values) {
  return [values](std::string_view name) -> std::optional<std::string> {
    const auto it = values.find(std::string(name));
    if (it == values.end()) return std::nullopt;
    return it->second;
  };
}

LaunchEnv read_ok(std::map<std::string, std::string> values) {
  auto env = read_launch_env(env_of(std::move(values)));
  EXPECT_TRUE(std::holds_alternative<LaunchEnv>(env)) << std::get<std::string>(env);
  return std::holds_alternative<LaunchEnv>(env) ? std::get<LaunchEnv>(env) : LaunchEnv{};
}

std::string read_error(std::map<std::string, std::string> values) {
  auto env = read_launch_env(env_of(std::move(values)));
  EXPECT_TRUE(std::holds_alternative<std::string>(env));
  return std::holds_alternative<std::string>(env) ? std::get<std::string>(env) : "";
}

TEST(LaunchEnv, NoVariablesIsOneProcess) {
  const LaunchEnv env = read_ok({});
  EXPECT_EQ(env.world_size, 1);
  EXPECT_EQ(env.rank, 0);
  EXPECT_FALSE(env.distributed());
  EXPECT_EQ(env.launcher, "none");
}

TEST(LaunchEnv, TorchrunVariables) {
  const LaunchEnv env = read_ok({{"RANK", "3"},
                                 {"WORLD_SIZE", "4"},
                                 {"LOCAL_RANK", "1"},
                                 {"MASTER_ADDR", "node7"},
                                 {"MASTER_PORT", "12345"}});
  EXPECT_EQ(env.rank, 3);
  EXPECT_EQ(env.world_size, 4);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.master_addr, "node7");
  EXPECT_EQ(env.master_port, 12345);
  EXPECT_EQ(env.launcher, "env");
  EXPECT_TRUE(env.distributed());
}

TEST(LaunchEnv, DefaultsForLocalRankAddressAndPort) {
  const LaunchEnv env = read_ok({{"RANK", "1"}, {"WORLD_SIZE", "2"}});
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.master_addr, "127.0.0.1");
  EXPECT_EQ(env.master_port, kDefaultMasterPort);
}

TEST(LaunchEnv, SlurmVariablesWhenWorldSizeIsAbsent) {
  const LaunchEnv env =
      read_ok({{"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}, {"SLURM_LOCALID", "1"}});
  EXPECT_EQ(env.rank, 5);
  EXPECT_EQ(env.world_size, 8);
  EXPECT_EQ(env.local_rank, 1);
  EXPECT_EQ(env.launcher, "slurm");
  // torchrun's variables win over Slurm's (torchrun inside an allocation).
  EXPECT_EQ(
      read_ok({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"SLURM_PROCID", "5"}, {"SLURM_NTASKS", "8"}})
          .world_size,
      2);
}

TEST(LaunchEnv, BadValuesNameTheVariable) {
  EXPECT_NE(read_error({{"WORLD_SIZE", "2"}}).find("RANK"), std::string::npos);
  EXPECT_NE(read_error({{"RANK", "2"}, {"WORLD_SIZE", "2"}}).find("outside"), std::string::npos);
  EXPECT_NE(read_error({{"RANK", "x"}, {"WORLD_SIZE", "2"}}).find("RANK"), std::string::npos);
  EXPECT_NE(read_error({{"RANK", "0"}, {"WORLD_SIZE", "0"}}).find("WORLD_SIZE"), std::string::npos);
  EXPECT_NE(read_error({{"RANK", "0"}, {"WORLD_SIZE", "2"}, {"MASTER_PORT", "70000"}})
                .find("MASTER_PORT"),
            std::string::npos);
}

TEST(Launcher, RankFieldGoesAfterTheVersion) {
  EXPECT_EQ(with_rank(R"({"v":1,"type":"start"})", 2), R"({"v":1,"rank":2,"type":"start"})");
  EXPECT_EQ(with_rank(R"({"type":"x"})", 0), R"({"rank":0,"type":"x"})");
  EXPECT_EQ(with_rank("not json", 1), "not json");
  // A rank's own lines carry their rank already: not a second time.
  EXPECT_EQ(with_rank(R"({"v":1,"rank":3,"type":"skipped"})", 3),
            R"({"v":1,"rank":3,"type":"skipped"})");
}

TEST(Launcher, FreePortIsUsable) {
  const int port = free_port();
  EXPECT_GT(port, 0);
  EXPECT_LE(port, 65535);
}

// The store's port comes from below the kernel's ephemeral range, where no connection is given
// it meanwhile; with no room there, from the kernel.
TEST(Launcher, FreePortIsBelowTheEphemeralRange) {
  const std::string dir = ::testing::TempDir();
  const std::string standard = dir + "/port_range_standard", full = dir + "/port_range_full",
                    broken = dir + "/port_range_broken";
  std::ofstream(standard) << "32768\t60999\n";
  std::ofstream(full) << "1024\t65535\n";
  std::ofstream(broken) << "not a range\n";
  EXPECT_EQ(ephemeral_ports(standard), std::make_pair(32768, 60999));
  EXPECT_EQ(ephemeral_ports(broken), std::make_pair(32768, 60999));
  EXPECT_EQ(ephemeral_ports(dir + "/missing"), std::make_pair(32768, 60999));
  for (int i = 0; i < 20; ++i) {
    const int port = free_port(standard);
    EXPECT_GE(port, 10000);
    EXPECT_LT(port, 32768);
  }
  const int any = free_port(full);
  EXPECT_GT(any, 0);
  EXPECT_LE(any, 65535);
}

// A rank killed while the other waits for it in a collective that does not fail (NCCL spins
// until its timeout, 300 s by default): the other is stopped after the grace, as torchrun stops
// its other workers, and both ends are reported.
TEST(Launcher, ARankThatDiesStopsTheOthersAfterTheGrace) {
  LaunchPlan plan;  // the grace gpuscope-torch's own launcher uses
  plan.program = "/bin/sh";
  plan.args = {"-c", "if [ \"$RANK\" = 1 ]; then kill -9 $$; fi; exec sleep 120"};
  plan.world_size = 2;
  std::vector<std::string> lines;
  const auto start = std::chrono::steady_clock::now();
  const int exit_code = launch_ranks(plan, [&](const std::string& line) { lines.push_back(line); });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_NE(exit_code, 0);
  EXPECT_GE(seconds, static_cast<double>(plan.grace.count()) - 0.5) << "no time to report";
  EXPECT_LT(seconds, 20.0) << "rank 0 was left waiting";
  std::string all;
  for (const std::string& line : lines) all += line + "\n";
  EXPECT_NE(all.find("\"rank\":1,\"type\":\"error\",\"code\":\"rank_failed\""), std::string::npos)
      << all;
  EXPECT_NE(all.find("signal 9"), std::string::npos) << all;
  EXPECT_NE(all.find("rank 0 (pid"), std::string::npos) << all;
  EXPECT_NE(all.find("was stopped (signal 15) after rank 1 had ended"), std::string::npos) << all;
}

// Rank 0's lines are relayed as the job's, but its error lines name it, as every other rank's
// do (a stall watchdog on rank 0 ends the job with one).
TEST(Launcher, EveryRanksErrorLinesNameTheirRank) {
  LaunchPlan plan;
  plan.program = "/bin/sh";
  plan.args = {"-c",
               "echo '{\"v\":1,\"type\":\"window\",\"n\":'$RANK'}'; "
               "echo '{\"v\":1,\"type\":\"error\",\"code\":\"collective_timeout\"}'; exit 1"};
  plan.world_size = 2;
  plan.grace = std::chrono::seconds(1);
  std::vector<std::string> lines;
  EXPECT_NE(launch_ranks(plan, [&](const std::string& line) { lines.push_back(line); }), 0);
  std::string all;
  for (const std::string& line : lines) all += line + "\n";
  EXPECT_NE(all.find(R"({"v":1,"type":"window","n":0})"), std::string::npos) << all;
  EXPECT_EQ(all.find(R"("n":1)"), std::string::npos) << "rank 1's other lines are not relayed";
  for (const int rank : {0, 1}) {
    EXPECT_NE(all.find(R"({"v":1,"rank":)" + std::to_string(rank) +
                       R"(,"type":"error","code":"collective_timeout"})"),
              std::string::npos)
        << all;
  }
}

// More ranks than GPUs: rank 1 finds no device and is skipped (exit 3), as it does on a machine
// with fewer GPUs than --world-size (2xH200, session 15: ranks 0 and 1 waited in the rendezvous
// for more than 400 s). The others are stopped; the job is skipped, with the rank's reason.
TEST(Launcher, ARankSkippedForWantOfAGpuStopsTheOthers) {
  LaunchPlan plan;
  plan.program = "/bin/sh";
  plan.args = {"-c",
               "if [ \"$RANK\" = 1 ]; then echo '{\"v\":1,\"rank\":1,\"type\":\"skipped\","
               "\"code\":\"no_device\",\"reason\":\"there is no CUDA device 1 (1 visible)\"}'; "
               "exit " +
                   std::to_string(kTorchExitSkipped) + "; fi; exec sleep 120"};
  plan.world_size = 2;
  plan.grace = std::chrono::seconds(1);
  std::vector<std::string> lines;
  const auto start = std::chrono::steady_clock::now();
  const int exit_code = launch_ranks(plan, [&](const std::string& line) { lines.push_back(line); });
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(exit_code, kTorchExitSkipped);
  EXPECT_LT(seconds, 15.0) << "rank 0 was left waiting for rank 1";
  std::string all;
  for (const std::string& line : lines) all += line + "\n";
  EXPECT_NE(all.find(R"({"v":1,"rank":1,"type":"skipped","code":"no_device")"), std::string::npos)
      << all;
  EXPECT_NE(all.find("rank 0 (pid"), std::string::npos) << all;
  EXPECT_NE(all.find("was stopped (signal 15) after rank 1 had ended"), std::string::npos) << all;
}

}  // namespace
}  // namespace gpuscope::workloads
