// libgpuscope_inject.so in real processes (no GPU: NVTX only, and the CUDA entry point failing
// soft): a test program (nvtx_app.cc) runs with NVTX_INJECTION64_PATH and GPUSCOPE_TRACE_DIR set,
// and the reader (gpuscope/trace.h) reads what it recorded.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <string>
#include <vector>

#include "gpuscope/trace.h"
#include "support/cli_run.h"

namespace gpuscope::trace {
namespace {

using testing::CliRun;

struct Traced {
  CliRun run;
  std::vector<ProcessTrace> traces;
  std::string dir;
};

// Runs nvtx_app ARGS with the library and reads the run folder back (unless `read` is false).
Traced run_app(const std::string& name, const std::string& args, const std::string& env = "",
               bool read = true) {
  Traced traced;
  traced.dir = testing::scratch_dir("inject") + "/" + std::to_string(getpid()) + "-" + name;
  std::filesystem::remove_all(traced.dir);
  std::filesystem::create_directories(traced.dir);
  const std::string command = "env GPUSCOPE_TRACE_DIR=" + traced.dir +
                              " NVTX_INJECTION64_PATH=" GPUSCOPE_INJECT_LIB " " + env + " " +
                              GPUSCOPE_NVTX_APP " " + args;
  traced.run = testing::run_captured(command, traced.dir + "/run");
  if (!read) return traced;
  auto traces = read_trace_dir(traced.dir);
  EXPECT_TRUE(traces.ok()) << traces.status().to_string();
  if (traces.ok()) traced.traces = std::move(traces).value();
  return traced;
}

const NvtxMark* find_mark(const ProcessTrace& t, std::string_view name) {
  for (const auto& m : t.marks) {
    if (t.name(m.name) == name) return &m;
  }
  return nullptr;
}

const NvtxRange* find_range(const ProcessTrace& t, std::string_view name) {
  for (const auto& r : t.ranges) {
    if (t.name(r.name) == name) return &r;
  }
  return nullptr;
}

const ThreadInfo* find_thread(const ProcessTrace& t, std::string_view nvtx_name) {
  for (const auto& th : t.threads) {
    if (th.nvtx_name == nvtx_name) return &th;
  }
  return nullptr;
}

bool killed_by(const CliRun& run, int sig) {
  return run.exit_code == -1 || run.exit_code == 128 + sig;
}

TEST(InjectionProcess, RecordsTwoThreadsAndAForkChildEachInItsOwnFile) {
  const Traced t = run_app("threads", "threads-fork");
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  ASSERT_EQ(t.traces.size(), 2u);
  const bool first_is_parent = t.traces[1].header.ppid == t.traces[0].header.pid;
  const ProcessTrace& parent = t.traces[first_is_parent ? 0 : 1];
  const ProcessTrace& child = t.traces[first_is_parent ? 1 : 0];
  EXPECT_EQ(child.header.ppid, parent.header.pid);
  EXPECT_EQ(child.header.started_by, "fork");
  EXPECT_EQ(parent.header.started_by, "nvtx");
  EXPECT_EQ(parent.header.clock, "CLOCK_MONOTONIC");
  EXPECT_FALSE(parent.header.cmdline.empty());

  // The parent: marks (odd bytes survive as valid JSON), nesting, domain, payload, threads.
  EXPECT_TRUE(parent.ended);
  EXPECT_FALSE(parent.truncated);
  EXPECT_EQ(parent.malformed_lines, 0u);
  ASSERT_NE(find_mark(parent, "hello"), nullptr);
  EXPECT_NE(find_mark(parent, "wide \u00e9"), nullptr);
  EXPECT_NE(find_mark(parent, "odd \uFFFD\x01 \"quoted\""), nullptr);
  EXPECT_NE(find_mark(parent, "after-fork"), nullptr);
  const NvtxRange* outer = find_range(parent, "outer");
  const NvtxRange* inner = find_range(parent, "inner");
  ASSERT_TRUE(outer && inner);
  EXPECT_EQ(outer->depth, 0u);
  EXPECT_EQ(inner->depth, 1u);
  EXPECT_EQ(inner->tid, outer->tid);
  EXPECT_LE(outer->start_ns, inner->start_ns);
  EXPECT_GE(outer->end_ns, inner->end_ns);
  EXPECT_LE(inner->start_ns, find_mark(parent, "hello")->ts_ns);

  const ThreadInfo* main_thread = find_thread(parent, "main-thread");
  const ThreadInfo* worker = find_thread(parent, "worker-thread");
  ASSERT_TRUE(main_thread && worker);
  EXPECT_EQ(main_thread->tid, outer->tid);
  const NvtxRange* work = find_range(parent, "work");
  ASSERT_NE(work, nullptr);
  EXPECT_EQ(work->tid, worker->tid);
  EXPECT_EQ(work->depth, 0u);
  EXPECT_EQ(find_mark(parent, "from-worker")->tid, worker->tid);
  const NvtxRange* cross = find_range(parent, "cross-thread");
  ASSERT_NE(cross, nullptr);
  EXPECT_EQ(cross->tid, main_thread->tid);
  EXPECT_EQ(cross->end_tid, worker->tid);
  EXPECT_FALSE(cross->depth.has_value());

  const NvtxRange* registered = find_range(parent, "registered-range");
  const NvtxMark* registered_mark = find_mark(parent, "registered-range");
  ASSERT_TRUE(registered && registered_mark);
  EXPECT_NE(registered->domain, 0u);
  EXPECT_EQ(parent.name(parent.domains.at(registered->domain)), "my-domain");
  EXPECT_EQ(registered->depth, 0u);  // stacks are per domain: "outer" was popped, but even so
  EXPECT_EQ(registered_mark->payload, 7.0);

  ASSERT_EQ(parent.steps.size(), 3u);
  EXPECT_EQ(parent.steps[2].n, 2u);
  EXPECT_EQ(find_mark(parent, "gpuscope.step"), nullptr);  // steps are not plain marks
  EXPECT_EQ(parent.forks_ns.size(), 1u);
  EXPECT_EQ(parent.window.begin_reason, "always");
  EXPECT_EQ(parent.window.end_reason, "exit");
  EXPECT_EQ(parent.cupti.status, "not_loaded");

  // The child: only what it recorded itself.
  EXPECT_TRUE(child.ended);
  EXPECT_NE(find_mark(child, "child-mark"), nullptr);
  const NvtxRange* child_range = find_range(child, "child-range");
  ASSERT_NE(child_range, nullptr);
  EXPECT_EQ(child_range->depth, 0u);
  EXPECT_EQ(find_mark(child, "hello"), nullptr);
  EXPECT_EQ(find_mark(child, "after-fork"), nullptr);
}

TEST(InjectionProcess, StepWindowCoversTheConfiguredSteps) {
  const Traced t =
      run_app("window", "steps 10", "GPUSCOPE_TRACE_SKIP_STEPS=2 GPUSCOPE_TRACE_STEPS=3");
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  ASSERT_EQ(t.traces.size(), 1u);
  const ProcessTrace& p = t.traces[0];
  EXPECT_EQ(p.header.window.skip_steps, 2u);
  EXPECT_EQ(p.header.window.steps, 3u);
  EXPECT_EQ(p.window.first_step, 2u);
  EXPECT_EQ(p.window.end_step, 5u);
  EXPECT_EQ(p.window.begin_reason, "steps");
  EXPECT_EQ(p.window.end_reason, "steps");
  ASSERT_EQ(p.steps.size(), 10u);
  EXPECT_EQ(*p.window.begin_ns, p.steps[1].ts_ns);  // opened by the mark ending step 1
  EXPECT_EQ(*p.window.end_ns, p.steps[4].ts_ns);
  const auto data_waits = std::count_if(p.ranges.begin(), p.ranges.end(), [&](const NvtxRange& r) {
    return p.name(r.name) == "gpuscope.data_wait" && r.depth == 1u;
  });
  EXPECT_EQ(data_waits, 10);
}

TEST(InjectionProcess, AFloodOfRecordsKeepsMemoryBounded) {
  constexpr long kMarks = 200000;  // about 10 MB of records
  const Traced t = run_app("flood", "flood " + std::to_string(kMarks), "", /*read=*/false);
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  long before = 0, after = 0;
  ASSERT_EQ(
      std::sscanf(t.run.out.c_str(), "peak_kb_before %ld\npeak_kb_after %ld", &before, &after), 2);
#if defined(__SANITIZE_ADDRESS__)
  constexpr long kBoundKb = 16 * 1024;  // ASan's quarantine holds freed buffers a while
#else
  constexpr long kBoundKb = 4 * 1024;
#endif
  EXPECT_LT(after - before, kBoundKb) << "peak memory grew by " << after - before << " kB";
  // Every mark reached the file (counted without the reader: 10 MB is slow to parse in Debug).
  size_t marks = 0, files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(t.dir)) {
    if (entry.path().extension() != ".jsonl") continue;
    ++files;
    const std::string text = testing::slurp(entry.path().string());
    for (size_t pos = 0; (pos = text.find("{\"t\":\"mark\"", pos)) != std::string::npos; ++pos) {
      ++marks;
    }
    EXPECT_NE(text.find("{\"t\":\"end\""), std::string::npos);
  }
  EXPECT_EQ(files, 1u);
  EXPECT_EQ(marks, static_cast<size_t>(kMarks) + 1);
}

TEST(InjectionProcess, TheSizeCapDropsRecordsAndCountsThem) {
  constexpr uint64_t kCap = 64 * 1024;
  const Traced t = run_app("cap", "flood 20000", "GPUSCOPE_TRACE_MAX_BYTES=65536");
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  ASSERT_EQ(t.traces.size(), 1u);
  const ProcessTrace& p = t.traces[0];
  EXPECT_LE(std::filesystem::file_size(p.path), kCap + 1024);  // + the closing lines
  EXPECT_TRUE(p.ended);
  ASSERT_TRUE(p.dropped_by_kind.contains("mark"));
  EXPECT_EQ(p.marks.size() + p.dropped_by_kind.at("mark"), 20001u);
  EXPECT_GT(p.dropped_by_kind.at("mark"), 10000u);
}

TEST(InjectionProcess, SigtermFlushesAndTheDefaultActionStillKills) {
  // No periodic flush in the test's time: what is in the file came through the signal path.
  const Traced t = run_app("term", "sigterm", "GPUSCOPE_TRACE_FLUSH_MS=60000");
  EXPECT_TRUE(killed_by(t.run, SIGTERM)) << t.run.exit_code;
  EXPECT_EQ(t.run.out.find("survived"), std::string::npos);
  ASSERT_EQ(t.traces.size(), 1u);
  const ProcessTrace& p = t.traces[0];
  EXPECT_NE(find_mark(p, "before-term"), nullptr);
  EXPECT_EQ(p.signals, std::vector<int>{SIGTERM});
  EXPECT_TRUE(p.truncated);
  EXPECT_EQ(p.window.end_reason, "signal");
}

TEST(InjectionProcess, SigtermReachesTheProgramsOwnHandler) {
  const Traced t = run_app("term-own", "sigterm-own", "GPUSCOPE_TRACE_FLUSH_MS=60000");
  EXPECT_EQ(t.run.exit_code, 42);
  EXPECT_EQ(t.run.out, "handled\n");
  ASSERT_EQ(t.traces.size(), 1u);
  EXPECT_NE(find_mark(t.traces[0], "before-term"), nullptr);
  EXPECT_EQ(t.traces[0].signals, std::vector<int>{SIGTERM});
}

TEST(InjectionProcess, SigkillKeepsWhatThePeriodicFlushWrote) {
  const Traced t = run_app("kill", "sigkill");  // the default flush period, 500 ms
  EXPECT_TRUE(killed_by(t.run, SIGKILL)) << t.run.exit_code;
  ASSERT_EQ(t.traces.size(), 1u);
  EXPECT_TRUE(t.traces[0].truncated);
  EXPECT_FALSE(t.traces[0].ended);
  EXPECT_NE(find_mark(t.traces[0], "before-kill"), nullptr);  // written 1 s before the kill
}

TEST(InjectionProcess, AForkBeforeAnyRecordGivesEachProcessItsFile) {
  const Traced t = run_app("fork-first", "fork-first");
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  ASSERT_EQ(t.traces.size(), 2u);
  int parents = 0, children = 0;
  for (const auto& p : t.traces) {
    EXPECT_TRUE(p.ended);
    EXPECT_EQ(p.header.started_by, "nvtx");
    parents += find_mark(p, "in-parent") != nullptr;
    children += find_mark(p, "in-child") != nullptr;
  }
  EXPECT_EQ(parents, 1);
  EXPECT_EQ(children, 1);
}

TEST(InjectionProcess, AForkChildThatRecordsNothingLeavesNoFile) {
  const Traced t = run_app("fork-silent", "fork-silent");
  ASSERT_EQ(t.run.exit_code, 0) << t.run.err;
  ASSERT_EQ(t.traces.size(), 1u);
  EXPECT_NE(find_mark(t.traces[0], "parent-only"), nullptr);
  EXPECT_EQ(t.traces[0].forks_ns.size(), 1u);
}

TEST(InjectionProcess, AProgramWithoutCudaOrNvtxRunsUnchanged) {
  const std::string dir =
      testing::scratch_dir("inject") + "/" + std::to_string(getpid()) + "-plain";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const CliRun bare = testing::run_captured(GPUSCOPE_NVTX_APP " plain", dir + "/bare");
  const CliRun loaded = testing::run_captured(
      // Under ASan (the asan preset) a preloaded library comes before ASan's runtime: allowed.
      "env GPUSCOPE_TRACE_DIR=" + dir + " ASAN_OPTIONS=${ASAN_OPTIONS}:verify_asan_link_order=0" +
          " LD_PRELOAD=" GPUSCOPE_INJECT_LIB " CUDA_INJECTION64_PATH=" GPUSCOPE_INJECT_LIB
          " NVTX_INJECTION64_PATH=" GPUSCOPE_INJECT_LIB " " GPUSCOPE_NVTX_APP " plain",
      dir + "/loaded");
  EXPECT_EQ(bare.exit_code, 3);
  EXPECT_EQ(loaded.exit_code, bare.exit_code);
  EXPECT_EQ(loaded.out, bare.out);
  EXPECT_EQ(loaded.err, bare.err);
  auto traces = read_trace_dir(dir);
  ASSERT_TRUE(traces.ok());
  EXPECT_TRUE(traces->empty());  // loaded but never entered: no file
}

TEST(InjectionProcess, WithoutARunFolderNothingIsRecorded) {
  const std::string dir =
      testing::scratch_dir("inject") + "/" + std::to_string(getpid()) + "-nodir";
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  const CliRun run = testing::run_captured(
      "cd " + dir +
          " && env -u GPUSCOPE_TRACE_DIR NVTX_INJECTION64_PATH=" GPUSCOPE_INJECT_LIB
          " " GPUSCOPE_NVTX_APP " threads-fork",
      dir + "/run");
  EXPECT_EQ(run.exit_code, 0) << run.err;
  auto traces = read_trace_dir(dir);
  ASSERT_TRUE(traces.ok());
  EXPECT_TRUE(traces->empty());
}

TEST(InjectionProcess, CudaEntryPointWithoutADriverSaysCuptiIsUnavailable) {
  const Traced t = run_app("cuda-init", "cuda-init " GPUSCOPE_INJECT_LIB);
  ASSERT_EQ(t.run.exit_code, 0) << t.run.out << t.run.err;
  EXPECT_NE(t.run.out.find("InitializeInjection returned 1"), std::string::npos);
  ASSERT_EQ(t.traces.size(), 1u);
  const ProcessTrace& p = t.traces[0];
  EXPECT_EQ(p.header.started_by, "cuda");
  EXPECT_EQ(p.cupti.status, "unavailable");
  EXPECT_NE(p.cupti.reason.find("driver"), std::string::npos) << p.cupti.reason;
  EXPECT_NE(find_mark(p, "after-init"), nullptr);  // NVTX goes on
  EXPECT_TRUE(p.ended);
}

}  // namespace
}  // namespace gpuscope::trace
