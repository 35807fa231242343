// The real worker binary, run without a usable GPU: CUDA_VISIBLE_DEVICES is emptied for the
// child, so this holds on GPU machines too. It must exit 3 with a clear `error` line.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <nlohmann/json.hpp>

#include <array>
#include <cstdio>
#include <sstream>
#include <string>
#include <vector>

namespace {

struct WorkerRun {
  int exit_code = -1;
  std::vector<nlohmann::json> lines;
};

WorkerRun run_worker(const std::string& args) {
  const std::string command =
      "env CUDA_VISIBLE_DEVICES= '" GPUSCOPE_BURN_WORKER_BIN "' " + args + " 2>/dev/null";
  WorkerRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  std::string output;
  std::array<char, 4096> buffer{};
  while (std::size_t n = std::fread(buffer.data(), 1, buffer.size(), pipe)) {
    output.append(buffer.data(), n);
  }
  const int status = pclose(pipe);
  run.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  std::istringstream stream(output);
  for (std::string line; std::getline(stream, line);) {
    run.lines.push_back(nlohmann::json::parse(line));  // every stdout line is one JSON object
  }
  return run;
}

TEST(BurnWorkerRun, NoDeviceExitsThreeWithErrorLine) {
  const WorkerRun run = run_worker("--precision bf16 --duration 1");
  EXPECT_EQ(run.exit_code, 3);
  ASSERT_FALSE(run.lines.empty());
  const nlohmann::json& error = run.lines.front();
  EXPECT_EQ(error["type"], "error");
  EXPECT_EQ(error["v"], 1);
  const std::string code = error["code"];
  EXPECT_TRUE(code == "no_device" || code == "no_driver") << code;
  EXPECT_NE(error["message"].get<std::string>().find("CUDA"), std::string::npos);
  EXPECT_EQ(run.lines.back()["type"], "done");
  EXPECT_EQ(run.lines.back()["exit_code"], 3);
}

TEST(BurnWorkerRun, BadArgumentsExitTwo) {
  const WorkerRun run = run_worker("--size 1000");
  EXPECT_EQ(run.exit_code, 2);
  ASSERT_EQ(run.lines.size(), 1u);
  EXPECT_EQ(run.lines[0]["type"], "error");
  EXPECT_EQ(run.lines[0]["code"], "invalid_argument");
}

}  // namespace
