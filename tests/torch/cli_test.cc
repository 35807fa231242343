// The gpuscope-torch program end to end on the CPU: what a parent process sees on stdout and as
// the exit status.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <sys/wait.h>
#include <unistd.h>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "input/files.h"

namespace {

using nlohmann::json;

struct Ran {
  int exit_code = -1;
  std::string out;
  std::vector<json> lines() const {
    std::vector<json> parsed;
    std::istringstream stream(out);
    for (std::string line; std::getline(stream, line);) parsed.push_back(json::parse(line));
    return parsed;
  }
};

// Runs gpuscope-torch ARGS with the environment assignments ENV ("NAME=value ...") before it.
Ran run(const std::string& args, const std::string& env = "") {
  Ran ran;
  const std::string command = env + (env.empty() ? "" : " ") + std::string(GPUSCOPE_TORCH_BIN) +
                              " " + args + " 2>/dev/null";
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return ran;
  std::array<char, 4096> buffer;
  size_t n = 0;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) ran.out.append(buffer.data(), n);
  const int status = pclose(pipe);
  ran.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return ran;
}

TEST(TorchCli, HelpListsModelsModesAndSwitches) {
  const Ran ran = run("--help");
  EXPECT_EQ(ran.exit_code, 0);
  for (const char* word :
       {"vit_b16",  "resnet50",       "gpt2",       "fp32",          "tf32",
        "amp_fp16", "amp_bf16",       "fp16",       "bf16",          "fp8",
        "--graphs", "--fused-adamw",  "--batch",    "--input",       "--loader-workers",
        "--pinned", "--non-blocking", "--data",     "--guard-steps", "--make-images",
        "guard",    "--grad-comm",    "--grad-sync"}) {
    EXPECT_NE(ran.out.find(word), std::string::npos) << word;
  }
}

TEST(TorchCli, TrainsGpt2OnTheCpu) {
  const Ran ran =
      run("--device cpu --model gpt2 --seq-len 8 --batch 1 --warmup 0 --windows 2 --steps 1 "
          "--mode bf16");
  ASSERT_EQ(ran.exit_code, 0) << ran.out;
  const auto lines = ran.lines();
  ASSERT_GE(lines.size(), 5u);
  EXPECT_EQ(lines.front()["type"], "start");
  EXPECT_EQ(lines.front()["device"]["type"], "cpu");
  EXPECT_EQ(lines[1]["type"], "window");
  EXPECT_EQ(lines[2]["type"], "window");
  EXPECT_EQ(lines[3]["type"], "result");
  EXPECT_EQ(lines[3]["loss"]["values"].size(), 2u);
  EXPECT_EQ(lines.back()["type"], "done");
  EXPECT_TRUE(lines.back()["ok"].get<bool>());
  for (const auto& line : lines) EXPECT_EQ(line["v"], 1);
}

TEST(TorchCli, UnsupportedModeIsASkippedRow) {
  const Ran ran = run("--device cpu --model gpt2 --seq-len 8 --batch 1 --mode tf32");
  EXPECT_EQ(ran.exit_code, 3);
  const auto lines = ran.lines();
  ASSERT_GE(lines.size(), 3u);
  EXPECT_EQ(lines[1]["type"], "skipped");
  EXPECT_EQ(lines[1]["code"], "not_supported");
  EXPECT_EQ(lines.back()["exit_code"], 3);
}

// Each bad argument: exit 2, an error line (its message word for word where given), done.
TEST(TorchCli, BadArgumentsExitTwoWithAnErrorLine) {
  const std::pair<const char*, const char*> cases[] = {
      {"--mode int4", nullptr},
      {"--grad-comm fp16", "--grad-comm expects fp32 or bf16, got 'fp16'"},
  };
  for (const auto& [args, message] : cases) {
    SCOPED_TRACE(args);
    const Ran ran = run(args);
    EXPECT_EQ(ran.exit_code, 2);
    const auto lines = ran.lines();
    ASSERT_EQ(lines.size(), 2u);
    EXPECT_EQ(lines[0]["type"], "error");
    EXPECT_EQ(lines[0]["code"], "invalid_argument");
    if (message != nullptr) {
      EXPECT_EQ(lines[0]["message"], message);
    }
    EXPECT_EQ(lines[1]["type"], "done");
  }
}

TEST(TorchCli, JpegInputOnGeneratedImagesSkipsACorruptFile) {
  const std::string dir = testing::TempDir() + "gpuscope_torch_cli_images";
  gpuscope::workloads::remove_tree(dir);
  const Ran made = run("--make-images " + dir + " --image-count 6 --image-classes 2");
  if (made.exit_code == 3) GTEST_SKIP() << "built without libjpeg: " << made.out;
  ASSERT_EQ(made.exit_code, 0) << made.out;
  EXPECT_EQ(made.lines().front()["type"], "images");
  std::ofstream(dir + "/class_0/corrupt.jpg") << "not a jpeg";

  const Ran ran =
      run("--device cpu --model resnet50 --image-size 32 --batch 7 --mode fp32 "
          "--warmup 0 --windows 1 --steps 2 --input jpeg --loader-workers 2 --data " +
          dir);
  ASSERT_EQ(ran.exit_code, 0) << ran.out;
  const auto lines = ran.lines();
  EXPECT_EQ(lines.front()["options"]["input"], "jpeg");
  EXPECT_EQ(lines.front()["options"]["data"], dir);
  EXPECT_EQ(lines.front()["options"]["loader_workers"], 2);
  const auto& result = lines[lines.size() - 2];
  ASSERT_EQ(result["type"], "result");
  EXPECT_EQ(result["loader_batches"], 2);
  EXPECT_EQ(result["unreadable_files"], 1);
  EXPECT_EQ(result["h2d_bytes"], 2 * (7 * 3 * 32 * 32 * 4 + 7 * 8));
  gpuscope::workloads::remove_tree(dir);
}

TEST(TorchCli, JpegInputProblemsAreClearLines) {
  const Ran gpt2 = run("--device cpu --model gpt2 --input jpeg --data /tmp");
  EXPECT_EQ(gpt2.exit_code, 3);
  EXPECT_EQ(gpt2.lines()[1]["type"], "skipped");
  EXPECT_EQ(gpt2.lines()[1]["code"], "not_supported");

  const Ran no_data = run("--device cpu --model resnet50 --input jpeg");
  const auto lines = no_data.lines();
  ASSERT_GE(lines.size(), 3u);
  if (lines[1]["type"] == "skipped") return;  // built without libjpeg
  EXPECT_EQ(no_data.exit_code, 2);
  EXPECT_EQ(lines[1]["type"], "error");
  EXPECT_EQ(lines[1]["code"], "invalid_argument");
  EXPECT_NE(lines[1]["message"].get<std::string>().find("--data"), std::string::npos);

  const Ran missing =
      run("--device cpu --model resnet50 --input jpeg --data /nonexistent/gpuscope-images");
  EXPECT_EQ(missing.exit_code, 2);
  EXPECT_NE(missing.lines()[1]["message"].get<std::string>().find("no such directory"),
            std::string::npos);

  // Every file corrupt: the run fails with an error naming one, instead of training on nothing.
  const std::string dir = testing::TempDir() + "gpuscope_torch_cli_corrupt";
  gpuscope::workloads::remove_tree(dir);
  ASSERT_EQ(gpuscope::workloads::make_directories(dir + "/class_0"), "");
  std::ofstream(dir + "/class_0/junk.jpg") << "junk";
  const Ran corrupt =
      run("--device cpu --model resnet50 --image-size 32 --batch 2 --mode fp32 "
          "--warmup 0 --windows 1 --steps 1 --input jpeg --data " +
          dir);
  gpuscope::workloads::remove_tree(dir);
  EXPECT_EQ(corrupt.exit_code, 6);
  const auto corrupt_lines = corrupt.lines();
  ASSERT_GE(corrupt_lines.size(), 3u);
  const auto& error = corrupt_lines[corrupt_lines.size() - 2];
  EXPECT_EQ(error["type"], "error");
  EXPECT_NE(error["message"].get<std::string>().find("junk.jpg"), std::string::npos);
}

TEST(TorchCli, DescribePrintsTheCatalogue) {
  const Ran ran = run("--describe");
  EXPECT_EQ(ran.exit_code, 0);
  const auto lines = ran.lines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["models"].size(), 3u);
}

// Two copies of a shared trial (gpuscope bench --share): the test plays copy 0 with the marks
// it leaves, gpuscope-torch is copy 1. Its windows wait for copy 0's warm mark, and after them
// it keeps stepping until copy 0 is done too.
TEST(TorchCli, ASharedCopyTimesItsWindowsOnlyTogetherWithTheOthers) {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("torch-share-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  const std::string go = (dir / "go").string();
  std::ofstream(go).put('\n');
  const auto exists = [&](const std::string& name) { return fs::exists(go + "." + name); };
  const auto wait_for = [&](const std::string& name) {
    for (int i = 0; i < 1200 && !exists(name); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(50));
    }
    return exists(name);
  };
  std::atomic<bool> finished{false};
  Ran ran;
  std::thread copy([&] {
    ran =
        run("--device cpu --model gpt2 --seq-len 8 --batch 1 --warmup 1 --windows 2 --steps 1 "
            "--mode bf16",
            "GPUSCOPE_SHARE_GO_FILE=" + go + " GPUSCOPE_SHARE_COPY=1 GPUSCOPE_SHARE_COPIES=2");
    finished = true;
  });
  EXPECT_TRUE(wait_for("warm.1"));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(exists("done.1")) << "timed its windows before copy 0 was warm";
  std::ofstream(go + ".warm.0").put('\n');
  EXPECT_TRUE(wait_for("done.1"));
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  EXPECT_FALSE(finished) << "left before copy 0 had timed its windows";
  std::ofstream(go + ".done.0").put('\n');
  copy.join();
  gpuscope::workloads::remove_tree(dir.string());  // libtorch's own std::filesystem lacks it
  ASSERT_EQ(ran.exit_code, 0) << ran.out;
  const auto lines = ran.lines();
  int windows = 0;
  for (const auto& line : lines) windows += line["type"] == "window";
  EXPECT_EQ(windows, 2);
  EXPECT_EQ(lines.back()["type"], "done");
}

}  // namespace
