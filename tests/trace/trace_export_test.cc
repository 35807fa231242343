#include "trace/trace_export.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <sstream>
#include <vector>

#include "gpuscope/trace.h"
#include "support/cli_run.h"
#include "trace/summary_json.h"
#include "trace/timeline_build.h"
#include "trace/timeline_fixture.h"

namespace gpuscope::trace::detail {
namespace {

using nlohmann::json;

// The Trace Event format's rules the viewers depend on: required fields per phase, and slices of
// one track that nest or are disjoint (a partial overlap draws wrongly in Perfetto).
void expect_valid_trace(const json& doc) {
  ASSERT_TRUE(doc.is_object());
  ASSERT_TRUE(doc["traceEvents"].is_array());
  std::map<std::pair<std::int64_t, std::int64_t>, std::vector<std::pair<double, double>>> tracks;
  for (const json& e : doc["traceEvents"]) {
    ASSERT_TRUE(e.contains("ph") && e.contains("pid") && e.contains("tid") && e.contains("name"))
        << e;
    const std::string ph = e["ph"];
    if (ph == "M") continue;
    ASSERT_TRUE(e["ts"].is_number()) << e;
    if (ph == "X") {
      ASSERT_TRUE(e["dur"].is_number()) << e;
      ASSERT_GE(e["dur"].get<double>(), 0) << e;
      tracks[{e["pid"], e["tid"]}].push_back(
          {e["ts"], e["ts"].get<double>() + e["dur"].get<double>()});
    } else if (ph == "C") {
      for (const auto& [k, v] : e["args"].items()) EXPECT_TRUE(v.is_number()) << e;
    } else {
      EXPECT_TRUE(ph == "i") << e;
    }
  }
  for (auto& [track, slices] : tracks) {
    std::sort(slices.begin(), slices.end());
    std::vector<double> open;  // ends of the enclosing slices
    for (const auto& [start, end] : slices) {
      while (!open.empty() && open.back() <= start + 1e-6) open.pop_back();
      if (!open.empty()) {
        EXPECT_LE(end, open.back() + 1e-6)
            << "partial overlap on track " << track.first << "/" << track.second;
      }
      open.push_back(end);
    }
  }
}

TEST(TraceExport, AStarvedLoopBecomesAValidTraceWithEveryTrack) {
  Timeline t = starved_loop(6, true);
  TraceSummary s = summarize(t, {}, {});
  std::vector<CounterSample> counters = {
      {t.gpu.front().start_ns, 0, {{"sm_active", 0.3}, {"power_w", 310}}}};
  ExportOptions o;
  o.metadata = {{"command", "python3 train.py"}};
  std::ostringstream out;
  ExportCounts counts = export_chrome_trace(t, s, counters, o, out);
  json doc = json::parse(out.str());
  expect_valid_trace(doc);
  EXPECT_EQ(counts.dropped, 0u);
  int steps = 0, kernels = 0, copies = 0, waits = 0, api = 0, counters_seen = 0;
  bool gpu_named = false;
  for (const json& e : doc["traceEvents"]) {
    const std::string cat = e.value("cat", "");
    steps += cat == "step" ? 1 : 0;
    kernels += cat == "kernel" ? 1 : 0;
    copies += cat == "memcpy" ? 1 : 0;
    waits += cat == "data_wait" ? 1 : 0;
    api += cat == "cuda_api" ? 1 : 0;
    counters_seen += e["ph"] == "C" ? 1 : 0;
    if (e["name"] == "process_name" && e["args"]["name"] == "GPU 0") gpu_named = true;
    if (cat == "memcpy") {
      EXPECT_EQ(e["name"], "HtoD pageable 64.0 MiB");
    }
  }
  EXPECT_EQ(steps, 5);
  EXPECT_EQ(kernels, 24);
  EXPECT_EQ(copies, 6);
  EXPECT_EQ(waits, 6);
  EXPECT_EQ(api, 24);
  EXPECT_EQ(counters_seen, 2);
  EXPECT_TRUE(gpu_named);
  EXPECT_EQ(doc["metadata"]["command"], "python3 train.py");
}

TEST(TraceExport, TheCapKeepsStepsAndSaysWhatWasDropped) {
  Timeline t = starved_loop(6, true);
  TraceSummary s = summarize(t, {}, {});
  ExportOptions o;
  o.limits.max_events = 10;
  std::ostringstream out;
  ExportCounts counts = export_chrome_trace(t, s, {}, o, out);
  json doc = json::parse(out.str());
  expect_valid_trace(doc);
  EXPECT_EQ(counts.written, 10u);
  EXPECT_GT(counts.dropped, 0u);
  int steps = 0;
  for (const json& e : doc["traceEvents"]) steps += e.value("cat", "") == "step" ? 1 : 0;
  EXPECT_EQ(steps, 5);
  EXPECT_GT(doc["metadata"]["dropped_events"]["kernel"].get<int>(), 0);
}

// A real recording, labelled: bench/trace_examples/smoke_train.py (a small conv/FFT loop with a
// DataLoader, pageable and pinned copies, a .item() and a CUDA-graph replay per step), 200 steps,
// traced on the lent H100 80GB HBM3 (driver 580.159.04, torch 2.11.0+cu130) on 2026-11-25 by
// bench/trace_device.sh with GPUSCOPE_TRACE_SKIP_STEPS=50 GPUSCOPE_TRACE_STEPS=20.
// program_steps.json is the program's own per-step host timing of the same run. (Recorded before
// CUPTI's API records were switched to kernel thread ids: their tids are pthread ids here.)
constexpr const char* kH100Window = GPUSCOPE_TEST_FIXTURES "/trace/h100_smoke_window";

TEST(TraceOnH100Recording, TheWindowsStepsMatchTheProgramsOwnTiming) {
  auto processes = read_trace_dir(kH100Window);
  ASSERT_TRUE(processes.ok()) << processes.status().message();
  ASSERT_EQ(processes->size(), 1u);
  const ProcessTrace& p = processes->front();
  EXPECT_EQ(p.cupti.status, "ok");
  EXPECT_TRUE(p.ended);

  Timeline t = build_timeline(*processes, static_cast<pid_t>(p.header.pid));
  TraceSummary s = summarize(t, {}, {});
  EXPECT_EQ(s.step_source, StepSource::marks);
  ASSERT_EQ(s.steps.size(), 20u);
  EXPECT_EQ(s.all_step_s.size(), 199u);
  EXPECT_EQ(s.first_traced_step + 1, 50u);  // the interval after mark 49 is step 50

  // The program timed each step itself (host clock around the loop body): the traced steps'
  // median agrees within 2 %.
  const auto own = json::parse(testing::slurp(std::string(kH100Window) + "/program_steps.json"));
  std::vector<double> own_window, traced;
  for (std::size_t k = 50; k < 70; ++k) own_window.push_back(own["step_s"][k].get<double>());
  for (const StepStats& st : s.steps) traced.push_back(st.wall_s);
  std::sort(own_window.begin(), own_window.end());
  std::sort(traced.begin(), traced.end());
  const double own_median = (own_window[9] + own_window[10]) / 2;
  const double traced_median = (traced[9] + traced[10]) / 2;
  EXPECT_NEAR(traced_median / own_median, 1.0, 0.02) << traced_median << " vs " << own_median;

  // What the loop does each step, as the trace saw it.
  EXPECT_GT(s.kernels, 1000u);
  EXPECT_EQ(s.copies["host_to_device pageable"].count, 20u);
  EXPECT_EQ(s.copies["host_to_device pinned"].count, 40u);
  EXPECT_EQ(s.copies["device_to_host pinned"].count, 20u);
  EXPECT_GE(s.syncs, 40u);  // an event and a stream synchronize per step at least
  EXPECT_GT(s.data_wait_s, 0.0);
  EXPECT_GT(s.graph_kernels, 0u);
  EXPECT_GT(s.gpu_busy_share, 0.0);
  EXPECT_LT(s.gpu_busy_share, 1.0);

  std::ostringstream out;
  ExportCounts counts = export_chrome_trace(t, s, {}, {}, out);
  EXPECT_EQ(counts.dropped, 0u);
  expect_valid_trace(json::parse(out.str()));
}

// A real recording, labelled: bench/trace_examples/compiled_train.py --compile-mode
// reduce-overhead (torch.compile with CUDA graphs, fused AdamW, 10 steps of warm-up then 100),
// traced on the lent H100 80GB HBM3 (driver 580.159.04, torch 2.11.0+cu130) on 2026-11-26 by
// `gpuscope trace --skip-steps 30 --steps 30` (session 12, call 7), then trimmed by
// tests/fixtures/diagnose/trim.py --steps 8 to the window's last 8 steps (its records of steps
// 22-29). Its host passed a step mark every 2.8-3.2 ms while its GPU ran a step in 6.1 ms, and the
// trimmed window opens on GPU work queued before it, unrecorded. program_steps.json is the
// program's own output: a CUDA event after each timed step.
constexpr const char* kH100Graphs = GPUSCOPE_TEST_FIXTURES "/trace/h100_compiled_graphs";

TEST(TraceOnH100Recording, AHostThatOutrunsItsGpuGetsTheGpusStepTimes) {
  auto processes = read_trace_dir(kH100Graphs);
  ASSERT_TRUE(processes.ok()) << processes.status().message();
  const ProcessTrace& p = processes->front();
  ASSERT_EQ(p.window.first_step, 21u);  // the trim's window: steps 22-29 traced
  Timeline t = build_timeline(*processes, static_cast<pid_t>(p.header.pid));
  TraceSummary s = summarize(t, {}, {});
  ASSERT_EQ(s.steps.size(), 8u);
  // Step 22 + k of the run is the program's timed step 12 + k (after its 10 of warm-up).
  const auto own = json::parse(testing::slurp(std::string(kH100Graphs) + "/program_steps.json"));
  std::vector<double> own_window;
  for (std::size_t k = 12; k < 20; ++k) own_window.push_back(own["step_times_s"][k].get<double>());
  std::sort(own_window.begin(), own_window.end());
  const double own_median = (own_window[3] + own_window[4]) / 2;
  ASSERT_TRUE(s.step_median_s.has_value());
  EXPECT_NEAR(*s.step_median_s / own_median, 1.0, 0.02) << *s.step_median_s << " vs " << own_median;
  for (const StepStats& st : s.steps) {
    EXPECT_GT(st.wall_s, 0.9 * own_median);  // not the host's 3 ms
    EXPECT_LT(st.wall_s, 1.2 * own_median);  // the first one not carrying the queued work
    EXPECT_EQ(st.kernels, 150u);
  }
  EXPECT_GT(s.gpu_busy_share, 0.9);
  EXPECT_GT(s.graph_kernels, 0u);
}

// A real recording, labelled: gpuscope-torch --model gpt2 --mode amp_bf16 --batch 8
// --world-size 2 --graphs off (data parallel, the copy-engine all-reduce with AdamW sharded),
// traced on the lent 2x H200 (NV18, driver 580.159.04, torch 2.11.0+cu130) on 2026-11-27 by
// `bash bench/multi_device.sh checks` (session 18, call 1: `gpuscope trace --skip-steps 15
// --steps 6`), then trimmed by tests/fixtures/diagnose/trim.py --steps 4 (summary.json without
// its timeline_sample). Each rank copies its chunk of every gradient bucket to the other GPU and
// its updated parameters back: peer copies, no NCCL kernel, in every step.
constexpr const char* kH200CopyEngine = GPUSCOPE_TEST_FIXTURES "/trace/h200x2_torch_copy_engine";

TEST(TraceOnH200Recording, ACopyEngineAllReducesPeerCopiesAreItsCommunication) {
  auto processes = read_trace_dir(kH200CopyEngine);
  ASSERT_TRUE(processes.ok()) << processes.status().message();
  ASSERT_EQ(processes->size(), 2u);
  for (const ProcessTrace& p : *processes) {
    const Timeline t = build_timeline({p}, static_cast<pid_t>(p.header.pid));
    const TraceSummary s = summarize(t, {}, {});
    ASSERT_EQ(s.steps.size(), 4u);
    EXPECT_EQ(s.communication_kernels, 0u);
    // 13 buckets, each a chunk and a flag out for the reduce-scatter and again for the
    // all-gather: 52 peer copies a step.
    EXPECT_EQ(s.communication_copies, 4u * 52);
    EXPECT_EQ(s.communication_copies, s.copies.at("peer").count);
    EXPECT_NEAR(s.communication_s, s.copies.at("peer").seconds, 1e-12);
    EXPECT_NEAR(s.communication_by_op.at("peer_copy"), s.communication_s, 1e-12);
    // Overlapped with the backward but for the last bucket's round trip.
    EXPECT_GT(s.communication_exposed_s, 0.0);
    EXPECT_LT(s.communication_exposed_s, 0.5 * s.communication_s);
    const nlohmann::json j = summary_to_json(s, t, {});
    EXPECT_EQ(j["gpu"]["communication"]["peer_copies"], 4u * 52);
    std::ostringstream console;
    print_summary_json(j, console);
    EXPECT_NE(console.str().find("Communication between GPUs: "), std::string::npos);
    EXPECT_NE(console.str().find(" in 208 peer copies, "), std::string::npos) << console.str();
  }
}

}  // namespace
}  // namespace gpuscope::trace::detail
