#include "trace/summary.h"

#include <gtest/gtest.h>

#include <set>
#include <sstream>

#include "trace/summary_json.h"

#include "trace/timeline_fixture.h"

namespace gpuscope::trace::detail {
namespace {

TEST(TraceSummary, StepsFromMarksWithTheirBreakdown) {
  Timeline t = starved_loop(6, true);
  TraceSummary s = summarize(t, {}, {});
  EXPECT_EQ(s.step_source, StepSource::marks);
  ASSERT_EQ(s.steps.size(), 5u);  // six marks bound five whole steps
  for (const StepStats& st : s.steps) {
    EXPECT_NEAR(st.wall_s, 11e-3, 1e-9);
    EXPECT_NEAR(st.data_wait_s, 8e-3, 1e-9);
    EXPECT_NEAR(st.gpu_busy_s, 2.92e-3, 1e-9);
    EXPECT_EQ(st.kernels, 4u);
    EXPECT_EQ(st.copies, 1u);
    EXPECT_EQ(st.pageable_copies, 1u);
  }
  ASSERT_TRUE(s.step_median_s.has_value());
  EXPECT_NEAR(*s.step_median_s, 11e-3, 1e-9);
  EXPECT_NEAR(s.gpu_busy_share, 2.92 / 11.0, 1e-6);
  EXPECT_NEAR(s.data_wait_s, 5 * 8e-3, 1e-9);
  ASSERT_TRUE(s.copies.count("host_to_device pageable"));
  EXPECT_EQ(s.copies["host_to_device pageable"].count, 5u);
  EXPECT_EQ(s.copies["host_to_device pageable"].bytes, 5ull * (64 << 20));
  // Gaps: 20 us between kernels (three a step) and from the last kernel to the last mark; 8 ms
  // waiting for data from the first mark, 8.02 ms between steps. Idle and busy fill the span.
  EXPECT_EQ(s.idle[1].gaps, 16u);  // 10us-100us
  EXPECT_EQ(s.idle[3].gaps, 5u);   // 1ms-10ms
  EXPECT_NEAR(s.idle[3].seconds, 8e-3 + 4 * 8.02e-3, 1e-6);
  double idle = 0;
  for (const IdleBucket& b : s.idle) idle += b.seconds;
  EXPECT_NEAR(idle + s.gpu_busy_s, s.window_s, 1e-9);
}

// The host ran ahead of the GPU: each step's GPU work is what it launched, whenever the GPU ran
// it; nothing launched in the window's steps is left out, and nothing is counted twice.
TEST(TraceSummary, AStepOwnsTheGpuWorkItLaunchedWhenTheHostRunsAhead) {
  TraceSummary s = summarize(queued_loop(10), {}, {});
  EXPECT_EQ(s.step_source, StepSource::marks);
  ASSERT_EQ(s.steps.size(), 9u);
  for (const StepStats& st : s.steps) {
    EXPECT_NEAR(st.wall_s, 10e-3, 1e-9);
    EXPECT_EQ(st.kernels, 4u);
    EXPECT_NEAR(st.kernel_s, 10e-3, 1e-9);
    EXPECT_NEAR(st.gpu_busy_s, 10e-3, 1e-9);
  }
  EXPECT_EQ(s.kernels, 36u);
  // The GPU never idled while it ran the window's work.
  EXPECT_NEAR(s.gpu_busy_share, 1.0, 1e-6);
  double idle = 0;
  for (const IdleBucket& b : s.idle) idle += b.seconds;
  EXPECT_NEAR(idle, 0, 1e-9);
}

// A host that outruns its GPU passes its marks every 2 ms while its GPU runs a step every 6 ms:
// the steps take what the GPU took, as the program's own CUDA events time them, and the span
// they fill is the GPU's.
TEST(TraceSummary, StepsTakeWhatTheGpuTookWhenTheHostOutrunsIt) {
  TraceSummary s = summarize(outrunning_loop(12), {}, {});
  EXPECT_EQ(s.step_source, StepSource::marks);
  ASSERT_EQ(s.steps.size(), 11u);
  for (const StepStats& st : s.steps) {
    EXPECT_NEAR(st.wall_s, 6e-3, 1e-9);
    EXPECT_EQ(st.kernels, 1u);
    EXPECT_NEAR(st.gpu_busy_s, 6e-3, 1e-9);
    EXPECT_NEAR(static_cast<double>(st.end_ns - st.start_ns), 2e6, 1);  // the host's bounds
  }
  ASSERT_TRUE(s.step_median_s.has_value());
  EXPECT_NEAR(*s.step_median_s, 6e-3, 1e-9);
  EXPECT_NEAR(s.window_s, 11 * 6e-3, 1e-9);
  EXPECT_NEAR(s.gpu_busy_share, 1.0, 1e-6);
}

// The window opened just before a mark while the GPU still ran 16 ms of earlier steps' work,
// unrecorded: the first step starts when the GPU got to its work, not when the host passed the
// mark.
TEST(TraceSummary, TheFirstStepStartsWhenTheGpuGotToItsWork) {
  Timeline t = outrunning_loop(12);
  const std::int64_t mark3 = t.marks[3].at_ns;
  t.window_start_ns = mark3 - 10 * kUs;  // steps 0-3 launched before: not recorded
  std::erase_if(t.gpu, [](const GpuActivity& a) { return a.correlation <= 4; });
  std::erase_if(t.host, [](const HostInterval& h) { return h.correlation <= 4; });
  TraceSummary s = summarize(t, {}, {});
  ASSERT_EQ(s.steps.size(), 8u);
  // (The first one by 1 ns more: the host launched its work 1 ns after passing the mark.)
  for (const StepStats& st : s.steps) EXPECT_NEAR(st.wall_s, 6e-3, 2e-9);
  EXPECT_NEAR(s.gpu_busy_share, 1.0, 1e-6);
}

// A window opened on time before the program marked a step (a slow start), whose traced steps
// began at the skip: the steps before are warm-up, recorded but neither traced nor untraced.
TEST(TraceSummary, StepsRecordedBeforeTheTracedOnesAreWarmUp) {
  Timeline t = starved_loop(10, true);
  t.recording_start_ns = t.marks.front().at_ns - kMs;
  t.window_start_ns = t.marks[4].at_ns;
  t.window_end_ns = t.marks[9].at_ns;
  const TraceSummary s = summarize(t, {}, {});
  ASSERT_EQ(s.steps.size(), 5u);
  EXPECT_EQ(s.first_traced_step, 4u);
  EXPECT_EQ(s.first_recorded_step, 0u);
  const nlohmann::json j = summary_to_json(s, t, {});
  EXPECT_FALSE(j["steps"].contains("untraced_median_s")) << j["steps"].dump();
  t.recording_start_ns = t.window_start_ns;  // as a window opened at the skip
  const nlohmann::json k = summary_to_json(summarize(t, {}, {}), t, {});
  EXPECT_NEAR(k["steps"]["untraced_median_s"].get<double>(), 11e-3, 1e-9);
}

// The untraced steps before the window and after it, apart: whether tracing left a cost behind.
TEST(TraceSummary, UntracedStepsBeforeAndAfterTheWindowApart) {
  TraceSummary s;
  s.all_step_s = {10e-3, 12e-3, 10e-3, 50e-3, 50e-3, 30e-3, 31e-3, 30e-3};
  s.first_recorded_step = s.first_traced_step = 3;
  s.steps.resize(2);
  const nlohmann::json j = summary_to_json(s, Timeline{}, {});
  EXPECT_NEAR(j["steps"]["untraced_before_median_s"].get<double>(), 10e-3, 1e-12);
  EXPECT_NEAR(j["steps"]["untraced_after_median_s"].get<double>(), 30e-3, 1e-12);
  EXPECT_NEAR(j["steps"]["untraced_median_s"].get<double>(), 21e-3, 1e-12);
  // A window that ran to the end: nothing after it.
  s.steps.resize(5);
  const nlohmann::json k = summary_to_json(s, Timeline{}, {});
  EXPECT_FALSE(k["steps"].contains("untraced_after_median_s")) << k["steps"].dump();
  EXPECT_NEAR(k["steps"]["untraced_before_median_s"].get<double>(), 10e-3, 1e-12);
}

// Without launch records (a light trace) nothing says which step launched what: the steps stay
// as the host passed them.
TEST(TraceSummary, WithoutLaunchRecordsTheHostsBoundsStand) {
  TraceSummary s = summarize(outrunning_loop(12, /*launch_records=*/false), {}, {});
  ASSERT_EQ(s.steps.size(), 11u);
  for (const StepStats& st : s.steps) EXPECT_NEAR(st.wall_s, 2e-3, 1e-9);
  EXPECT_NEAR(s.window_s, 11 * 2e-3, 1e-9);
}

// How long after the window's close the GPU finished the window's work, and whether it did.
TEST(TraceSummary, TheWindowSaysWhenTheGpuCaughtUp) {
  Timeline t = queued_loop(10);
  ProcessTrace p;
  p.header.pid = 100;
  p.window.begin_ns = 999'000'000;
  p.window.end_ns = 1'100'000'000;
  p.window.gpu_end_ns = 1'135'000'000;
  p.window.gpu_end_status = "done";
  const nlohmann::json j = summary_to_json(summarize(t, {}, {}), t, {p});
  EXPECT_EQ(j["window"]["gpu_end"]["status"], "done");
  EXPECT_NEAR(j["window"]["gpu_end"]["after_close_s"].get<double>(), 0.035, 1e-9);
}

TEST(TraceSummary, KernelTimeByKindPrecisionAndTensorCores) {
  TraceSummary s = summarize(starved_loop(6, true), {}, {});
  bool bf16_tensor = false, fp32_simt = false;
  for (const KernelTime& k : s.kernel_time) {
    if (k.kind == "gemm" && k.precision == "bf16" && k.tensor_cores) bf16_tensor = true;
    if (k.kind == "gemm" && k.precision == "fp32" && !k.tensor_cores) fp32_simt = true;
  }
  EXPECT_TRUE(bf16_tensor);
  EXPECT_TRUE(fp32_simt);
  EXPECT_EQ(s.kernels, 20u);
  EXPECT_NEAR(s.mean_kernel_s, 480e-6, 1e-9);
  ASSERT_FALSE(s.top_kernels.empty());
  EXPECT_EQ(s.top_kernels.front().count, 5u);
}

// A data-parallel rank: each 10 ms step computes 7 ms on one stream while an all-reduce runs 3-5
// ms beside it on another, then a last all-reduce runs 6.5-9 ms (0.5 ms beside the computing,
// 2 ms alone). The collectives are counted apart, and the time they ran alone is exposed.
TEST(TraceSummary, CollectivesAndTheirTimeWithNothingBesideThem) {
  const char* nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
  const Timeline t = ten_ms_steps(
      6, {{"nvjet_sm90_tst_128x64_64x8_1x2_h_bz_bias_TNT", 0.1, 7}, {nccl, 3, 5}, {nccl, 6.5, 9}});
  const TraceSummary s = summarize(t, {}, {});
  ASSERT_EQ(s.steps.size(), 5u);
  EXPECT_EQ(s.communication_kernels, 10u);
  EXPECT_NEAR(s.communication_s, 5 * 4.5e-3, 1e-9);
  EXPECT_NEAR(s.communication_exposed_s, 5 * 2e-3, 1e-6);
  const nlohmann::json j = summary_to_json(s, t, {});
  EXPECT_NEAR(j["gpu"]["communication"]["exposed_s_per_step"].get<double>(), 2e-3, 1e-6);
  EXPECT_NEAR(j["gpu"]["communication"]["seconds_by_collective"]["all_reduce"].get<double>(),
              5 * 4.5e-3, 1e-9);
  std::ostringstream console;
  print_summary_json(j, console);
  EXPECT_NE(
      console.str().find("Communication between GPUs: 22.500 ms in 10 NCCL kernels, 10.000 ms"),
      std::string::npos)
      << console.str();
  // A program without collectives has no such entry.
  const Timeline starved = starved_loop(6, true);
  EXPECT_FALSE(
      summary_to_json(summarize(starved, {}, {}), starved, {})["gpu"].contains("communication"));
}

TEST(TraceSummary, WithoutMarksStepsComeFromTheKernelPeriodAtLaunchTimes) {
  Timeline t = starved_loop(8, false);
  TraceSummary s = summarize(t, {}, {});
  EXPECT_EQ(s.step_source, StepSource::kernel_period);
  ASSERT_GE(s.steps.size(), 6u);
  for (const StepStats& st : s.steps) EXPECT_NEAR(st.wall_s, 11e-3, 1e-9);
  // The boundary is the first kernel's launch (5 us before it starts), after the long gap.
  EXPECT_EQ(s.steps.front().start_ns, 1000 * kMs + 9 * kMs - 5 * kUs);
}

// starved_loop(steps) with each step in an NVTX range `name` of its own: 10 ms of every 11.
Timeline ranged_loop(int steps, const std::string& name) {
  Timeline t = starved_loop(steps, false);
  const std::uint32_t range = t.intern(name);
  for (int s = 0; s < steps; ++s) {
    const std::int64_t t0 = 1000 * kMs + s * 11 * kMs;
    t.host.push_back({HostInterval::Kind::range, 100, 100, t0, t0 + 10 * kMs, range, 0});
  }
  return t;
}

TEST(TraceSummary, AUserRangeDefinesTheSteps) {
  Timeline t = ranged_loop(4, "train_step");
  SummaryOptions o;
  o.step_range = "train_step";
  TraceSummary s = summarize(t, {}, o);
  EXPECT_EQ(s.step_source, StepSource::range);
  ASSERT_EQ(s.steps.size(), 4u);
  // The last one ends with its range and the GPU work launched in it: its third kernel ends
  // 0.48 ms after the range (the fourth was launched after the range ended).
  EXPECT_NEAR(s.steps.back().wall_s, 10.48e-3, 1e-9);
  EXPECT_NEAR(s.steps.front().wall_s, 11e-3, 1e-9);
}

// A window over whole ranges: each range inside it is a step, the last one too (it ends inside
// the window, though the next range, which would bound it, starts after).
TEST(TraceSummary, EveryRangeInsideTheWindowIsAStep) {
  Timeline t = ranged_loop(8, "gpuscope-torch step");
  t.window_start_ns = 1000 * kMs + 2 * 11 * kMs - kMs;  // steps 2..5 inside
  t.window_end_ns = 1000 * kMs + 5 * 11 * kMs + 10 * kMs + 1;
  SummaryOptions o;
  o.step_range = "gpuscope-torch step";
  TraceSummary s = summarize(t, {}, o);
  EXPECT_EQ(s.step_source, StepSource::range);
  ASSERT_EQ(s.steps.size(), 4u);
  EXPECT_NEAR(s.steps.back().wall_s, 10.48e-3, 1e-9);  // as above
}

TEST(TraceSummary, AnEmptyTimelineIsAnEmptySummary) {
  TraceSummary s = summarize(Timeline{}, {}, {});
  EXPECT_EQ(s.step_source, StepSource::none);
  EXPECT_TRUE(s.steps.empty());
  EXPECT_EQ(s.kernels, 0u);
  EXPECT_EQ(s.gpu_busy_share, 0);
}

TEST(TraceSummary, TheTimelineSampleHoldsAFewWholeStepsOfEveryTrack) {
  const Timeline t = starved_loop(10, true);
  const TraceSummary s = summarize(t, {}, {});
  const nlohmann::json j = summary_to_json(s, t, {});
  ASSERT_TRUE(j.contains("timeline_sample"));
  const nlohmann::json& sample = j["timeline_sample"];
  // Three steps from the middle of the nine traced, on times relative to the first's start.
  ASSERT_EQ(sample["steps"].size(), 3u);
  EXPECT_EQ(sample["steps"][0]["n"].get<int>(), 4);
  EXPECT_DOUBLE_EQ(sample["steps"][0]["start_s"].get<double>(), 0.0);
  EXPECT_NEAR(sample["steps"][2]["end_s"].get<double>(), 33e-3, 1e-9);
  EXPECT_EQ(sample["dropped_intervals"].get<int>(), 0);
  std::set<std::string> kinds, tracks;
  int kernels = 0;
  for (const nlohmann::json& i : sample["intervals"]) {
    kinds.insert(i["kind"].get<std::string>());
    tracks.insert(i["track"].get<std::string>());
    EXPECT_GE(i["start_s"].get<double>(), 0.0);
    EXPECT_LE(i["end_s"].get<double>(), 33e-3 + 1e-9);
    EXPECT_LE(i["start_s"].get<double>(), i["end_s"].get<double>());
    if (i["kind"] == "kernel") {
      ++kernels;
      EXPECT_FALSE(i["class"].get<std::string>().empty());
    }
  }
  EXPECT_EQ(kernels, 3 * 4);
  EXPECT_EQ(kinds, (std::set<std::string>{"kernel", "memcpy", "data_wait"}));
  EXPECT_TRUE(tracks.count("GPU 0 stream 0")) << sample.dump();
  EXPECT_TRUE(tracks.count("main thread 100")) << sample.dump();
}

TEST(TraceSummary, AnEmptyTimelineHasNoSample) {
  const Timeline t;
  const nlohmann::json j = summary_to_json(summarize(t, {}, {}), t, {});
  EXPECT_FALSE(j.contains("timeline_sample"));
}

}  // namespace
}  // namespace gpuscope::trace::detail
