// Several gpuscope processes on one store at the same moment (a study's steps, two monitors, a
// report reading while a bench writes): a new file is created once, every writer's run lands, and
// nobody sees a half-made store.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <string>
#include <vector>

#include "gpuscope/store.h"
#include "store_test_util.h"

namespace gpuscope::store {
namespace {

using testing::ScratchDir;

// Forks `count` children that all start together (they wait on one pipe), each running `body`;
// a child exits 0 when `body` returns an empty string, and prints the string otherwise.
template <typename Body>
std::vector<std::string> run_together(int count, Body body) {
  int go[2];
  int report[2];
  if (::pipe(go) != 0 || ::pipe(report) != 0) return {"pipe failed"};
  std::vector<pid_t> children;
  for (int i = 0; i < count; ++i) {
    pid_t pid = ::fork();
    if (pid == 0) {
      ::close(go[1]);
      char byte = 0;
      // Every child blocks here until the parent closes the write end.
      while (::read(go[0], &byte, 1) > 0) {
      }
      std::string error = body(i);
      if (!error.empty()) {
        error = "writer " + std::to_string(i) + ": " + error + "\n";
        (void)!::write(report[1], error.data(), error.size());
      }
      ::_exit(error.empty() ? 0 : 1);
    }
    children.push_back(pid);
  }
  ::close(go[0]);
  ::close(report[1]);
  ::close(go[1]);  // go
  std::vector<std::string> failures;
  for (pid_t pid : children) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!WIFEXITED(status)) failures.push_back("a writer died");
  }
  std::string text;
  char buffer[512];
  for (ssize_t n; (n = ::read(report[0], buffer, sizeof buffer)) > 0;) text.append(buffer, n);
  ::close(report[0]);
  if (!text.empty()) failures.push_back(text);
  return failures;
}

std::string write_one_run(const std::string& path, int writer) {
  auto store = Store::open(path, {});
  if (!store.ok()) return "open: " + store.status().to_string();
  RunData data = testing::sample_run();
  data.run.label = "writer " + std::to_string(writer);
  auto written = (*store)->write(data);
  return written.ok() ? "" : "write: " + written.status().to_string();
}

TEST(StoreConcurrency, WritersCreatingOneNewStoreTogetherAllLand) {
  constexpr int kWriters = 6;
  constexpr int kRounds = 25;
  for (int round = 0; round < kRounds; ++round) {
    ScratchDir dir;
    const std::string path = dir.file("shared.db");
    auto failures = run_together(kWriters, [&](int i) { return write_one_run(path, i); });
    ASSERT_TRUE(failures.empty()) << "round " << round << ":\n" << failures.front();
    auto store = Store::open(path, {.read_only = true, .max_size_bytes = std::nullopt});
    ASSERT_TRUE(store.ok()) << store.status().to_string();
    auto runs = (*store)->list_runs();
    ASSERT_TRUE(runs.ok());
    ASSERT_EQ(runs->size(), static_cast<std::size_t>(kWriters)) << "round " << round;
  }
}

TEST(StoreConcurrency, ReadersOfAStoreBeingCreatedSeeItWholeOrNotAtAll) {
  constexpr int kRounds = 25;
  for (int round = 0; round < kRounds; ++round) {
    ScratchDir dir;
    const std::string path = dir.file("shared.db");
    auto failures = run_together(4, [&](int i) -> std::string {
      if (i % 2 == 0) return write_one_run(path, i);
      // A reader racing the writers: "no store yet" is a fine answer, a damaged one is not.
      auto store = Store::open(path, {.read_only = true, .max_size_bytes = std::nullopt});
      if (store.ok() || store.status().code() == Code::not_found) return "";
      if (store.status().message().find("empty") != std::string::npos) return "";
      return "read: " + store.status().to_string();
    });
    ASSERT_TRUE(failures.empty()) << "round " << round << ":\n" << failures.front();
  }
}

}  // namespace
}  // namespace gpuscope::store
