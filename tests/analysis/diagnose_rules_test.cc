#include "analysis/diagnose_rules.h"

#include "analysis/observe.h"
#include "trace/summary_json.h"
#include "trace/timeline_fixture.h"

#include <gtest/gtest.h>

#include <algorithm>

namespace gpuscope::analysis::detail {
namespace {

// A healthy step: 15 ms, the GPU busy 13 ms, bf16 GEMMs on tensor cores, a fused optimizer,
// 10 of 80 GiB in use, SM activity 80 %, clocks at their maximum, the GPU to itself.
Observations healthy_step() {
  Observations o;
  o.subject = "pid 100";
  o.gpu = 0;
  o.steps = 20;
  o.step_s = o.traced_step_s = 15e-3;
  o.busy_s = 13e-3;
  o.kernels = 360;
  o.kernel_s = 13e-3;
  o.mean_kernel_s = o.kernel_s / o.kernels;
  o.idle_short_s = 1.5e-3;
  o.idle_long_s = 0.5e-3;
  o.matmul_s = o.matmul_tensor_s = 8e-3;
  o.conv_s = 7e-3;
  o.fused_optimizer_kernels = 2;
  GpuObservations g;
  g.gpu = 0;
  g.used_by_command = true;
  g.seconds = 5;
  g.sm_activity = 0.8;
  g.tensor_activity = 0.3;
  g.memory_peak_bytes = 10.0 * (1 << 30);
  g.memory_total_bytes = 80.0 * (1 << 30);
  g.sm_clock_mean_hz = g.sm_clock_max_hz = 1980e6;
  o.telemetry = g;
  return o;
}

std::vector<Finding> rules(const Observations& o) {
  return run_rules(o);
}

bool any_major(const std::vector<Finding>& f) {
  for (const Finding& x : f)
    if (is_major(x)) return true;
  return false;
}

// As the H100's no-tensor-cores loop (session 8, live): the host marks a step every 2.74 ms
// while the GPU spends 32.7 ms on the work each step launched (matched by launch), 93 % of it in
// fp32 GEMMs without tensor cores, which run after the host's span.
TEST(DiagnoseRules, AHostFarAheadOfItsGpuStillShowsFp32Matmuls) {
  trace::detail::Timeline timeline;
  trace::detail::TraceSummary summary;
  for (int i = 0; i < 8; ++i) {
    trace::detail::StepStats st;
    st.start_ns = i * 2'740'000;
    st.end_ns = (i + 1) * 2'740'000;
    st.wall_s = 2.74e-3;
    st.gpu_busy_s = st.kernel_s = 32.7e-3;
    st.kernels = 60;
    summary.steps.push_back(st);
  }
  summary.step_median_s = 2.74e-3;
  summary.gpu_busy_s = 0.027;  // what ran inside the host's span
  summary.kernels = 480;
  summary.kernel_s = 0.261;
  summary.kernel_time = {{"gemm", "fp32", false, 184, 0.2445},
                         {"optimizer", "unknown", false, 64, 0.0113}};
  const Observations o = observe(timeline, summary, std::nullopt, std::nullopt);
  EXPECT_NEAR(o.step_s, 32.7e-3, 1e-9) << "a step is never shorter than its GPU work";
  EXPECT_NEAR(o.matmul_fp32_s, 0.2445 / 8, 1e-9);
  const auto found = rules(o);
  ASSERT_FALSE(found.empty());
  EXPECT_EQ(found.front().id, "no_tensor_cores");

  // The host not ahead: the marked step and the host's span stand (nothing ran there here).
  summary.step_median_s = 40e-3;
  const Observations paced = observe(timeline, summary, std::nullopt, std::nullopt);
  EXPECT_NEAR(paced.step_s, 40e-3, 1e-9);
  EXPECT_EQ(paced.matmul_fp32_s, 0);
}

TEST(DiagnoseRules, AHealthyStepHasNoMajorFinding) {
  Observations o = healthy_step();
  EXPECT_FALSE(any_major(rules(o)));
  Finding h = healthy(o);
  EXPECT_EQ(h.id, "healthy");
  EXPECT_EQ(h.severity, Severity::info);
  EXPECT_FALSE(h.evidence.empty());
  EXPECT_NE(h.fix.find("torch.compile"), std::string::npos);
}

TEST(DiagnoseRules, InputBoundWhenTheGpuIdlesWaitingForData) {
  Observations o = healthy_step();
  o.step_s = o.traced_step_s = 60e-3;
  o.data_wait_s = o.data_wait_idle_s = 46e-3;
  o.idle_long_s = 46e-3;
  auto f = rules(o);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f.front().id, "input_bound");
  EXPECT_NE(f.front().fix.find("num_workers"), std::string::npos);
  ASSERT_TRUE(f.front().expected_speedup);
  // Up to 60 / 14 ms: all of the wait gone.
  EXPECT_NEAR(f.front().expected_speedup->high, 60.0 / 14.0, 1e-9);
  EXPECT_NEAR(f.front().expected_speedup->low, 60.0 / 37.0, 1e-9);
}

TEST(DiagnoseRules, InputBoundWithBusyWorkersAsksForMoreOrCheaperSamples) {
  Observations o = healthy_step();
  o.step_s = 60e-3;
  o.data_wait_idle_s = 40e-3;
  o.worker_processes = 4;
  o.worker_cpu_s = 40;
  o.run_wall_s = 10;
  auto f = input_bound(o);
  ASSERT_TRUE(f);
  EXPECT_NE(f->fix.find("4 loader workers"), std::string::npos);
}

TEST(DiagnoseRules, PageableCopies) {
  Observations o = healthy_step();
  o.pageable_h2d_copies = 2;
  o.pageable_h2d_bytes = 77e6;
  o.pageable_h2d_s = 6e-3;
  auto f = pageable_copies(o);
  ASSERT_TRUE(f);
  EXPECT_NE(f->fix.find("non_blocking=True"), std::string::npos);
  EXPECT_NE(f->fix.find("pin_memory=True"), std::string::npos);
  EXPECT_NEAR(f->expected_speedup->high, 15.0 / 9.0, 1e-9);
  o.pageable_h2d_s = 0.1e-3;  // 0.7 % of the step: not worth a finding
  EXPECT_FALSE(pageable_copies(o));
}

TEST(DiagnoseRules, SyncEveryStepCountsTheIdleAfterEachWait) {
  Observations o = healthy_step();
  o.syncs = 2;
  o.small_d2h_copies = 2;
  o.idle_after_sync_s = 1.5e-3;
  auto f = sync_every_step(o);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->severity, Severity::warning);
  // At least the idle right after the waits; at most all the step's idle (2 ms): with no wait
  // the host runs ahead and the GPU's queue stays full.
  EXPECT_NEAR(f->expected_speedup->low, 15.0 / 13.5, 1e-9);
  EXPECT_NEAR(f->expected_speedup->high, 15.0 / 13.0, 1e-9);
  EXPECT_NE(f->fix.find(".item()"), std::string::npos);
  o.idle_after_sync_s = 0.1e-3;  // a wait that costs nothing: worth knowing only
  EXPECT_EQ(sync_every_step(o)->severity, Severity::info);
  o.syncs = 0.2;  // one every five steps: not every step
  EXPECT_FALSE(sync_every_step(o));
  // Two a step on average, all in one step of three (a burst of reads every N steps that a
  // short window caught): not every step either.
  o.syncs = 2;
  o.wait_step_share = 1.0 / 3;
  EXPECT_FALSE(sync_every_step(o));
  o.wait_step_share = 0.75;
  const auto busy = sync_every_step(o);
  ASSERT_TRUE(busy);
  const auto share = std::find_if(busy->evidence.begin(), busy->evidence.end(),
                                  [](const Evidence& e) { return e.what == "steps with a wait"; });
  ASSERT_NE(share, busy->evidence.end());
  EXPECT_DOUBLE_EQ(share->value, 75);
}

// 470 tiny kernels a step, the GPU idle in short gaps between them (launch_bound.py on the H100).
Observations launch_bound_step() {
  Observations o = healthy_step();
  o.step_s = 18e-3;
  o.busy_s = 1.6e-3;
  o.kernels = 470;
  o.kernel_s = 1.5e-3;
  o.mean_kernel_s = o.kernel_s / o.kernels;
  o.idle_short_s = 16e-3;
  return o;
}

TEST(DiagnoseRules, LaunchBoundNeedsShortKernelsAndShortGaps) {
  Observations o = launch_bound_step();
  auto f = rules(o);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f.front().id, "launch_bound");
  EXPECT_NE(f.front().fix.find("reduce-overhead"), std::string::npos);
  EXPECT_NE(f.front().fix.find("larger batch (memory allows about 7x)"), std::string::npos);
  // The idle in short gaps, capped by the step's true idle (16.4 ms).
  EXPECT_NEAR(f.front().expected_speedup->high, 18.0 / 2.0, 1e-9);
  // Long kernels with gaps between them are not launch-bound.
  o.mean_kernel_s = 200e-6;
  EXPECT_FALSE(launch_bound(o));
}

TEST(DiagnoseRules, ASyncEveryStepComesBeforeLaunchBound) {
  // The GPU idles between kernels after each wait: the host cannot run ahead.
  Observations o = healthy_step();
  o.step_s = o.traced_step_s = 18.6e-3;
  o.busy_s = 10.9e-3;
  o.idle_short_s = 7.6e-3;
  o.syncs = 2;
  o.idle_after_sync_s = 0.8e-3;
  auto f = rules(o);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f.front().id, "sync_every_step");
  for (const Finding& x : f) EXPECT_NE(x.id, "launch_bound");
}

TEST(DiagnoseRules, InALightTraceASmallCopyToTheHostEveryStepStandsForTheWait) {
  // No synchronization records (--light): the launch-bound signature with a loss read back
  // every step is a wait every step (the copy stands for it), with less confidence.
  Observations o = launch_bound_step();
  o.syncs_recorded = false;
  o.syncs = 0;
  EXPECT_TRUE(launch_bound(o));  // no copy back: the signature stands
  o.small_d2h_copies = 1;
  EXPECT_FALSE(launch_bound(o));
  auto f = rules(o);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f.front().id, "sync_every_step");
  EXPECT_EQ(f.front().confidence, Confidence::medium);
  o.syncs_recorded = true;  // a full trace that saw no wait: launch-bound after all
  EXPECT_TRUE(launch_bound(o));
}

TEST(DiagnoseRules, TheOptimizerChainsGapsAreNotLaunchBound) {
  // 430 elementwise kernels after the backward, 9 ms on the GPU while traced (5 ms untraced),
  // 2 ms of it kernels: the short gaps are the chain's.
  Observations o = healthy_step();
  o.step_s = 18.9e-3;
  o.traced_step_s = 34e-3;
  o.busy_s = 11e-3;
  o.idle_short_s = 6e-3;
  o.optimizer_chain_kernels = 430;
  o.optimizer_chain_span_s = 9e-3;
  o.optimizer_chain_kernel_s = 2e-3;
  auto f = rules(o);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f.front().id, "unfused_optimizer");
  for (const Finding& x : f) EXPECT_NE(x.id, "launch_bound");
  // The chain's span without tracing's cost: 9 ms x 18.9 / 34.
  const double span = 9e-3 * 18.9 / 34;
  EXPECT_NEAR(f.front().expected_speedup->high, 18.9e-3 / (18.9e-3 - (span - 0.5e-3)), 1e-9);
}

TEST(DiagnoseRules, TracingsHostCostIsNotBlamedOnTheProgram) {
  // Traced, the step took 21 ms; untraced 15 ms with 13 ms busy: the 6 ms more of short gaps
  // in the window are tracing's.
  Observations o = healthy_step();
  o.traced_step_s = 21e-3;
  o.idle_short_s = 8e-3;
  EXPECT_FALSE(launch_bound(o));
  EXPECT_FALSE(any_major(rules(o)));
}

TEST(DiagnoseRules, NoTensorCoresUsesTheRatesGiven) {
  Observations o = healthy_step();
  o.step_s = 40e-3;
  o.busy_s = 38e-3;
  o.matmul_s = o.matmul_fp32_s = 30e-3;
  o.matmul_tensor_s = 0;
  o.rates = {66.9e12, 494.7e12, 989.4e12, "datasheet (H100 SXM5 80GB)"};
  auto f = rules(o);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f.front().id, "no_tensor_cores");
  EXPECT_NE(f.front().fix.find("torch.autocast"), std::string::npos);
  EXPECT_NE(f.front().fix.find("set_float32_matmul_precision(\"high\")"), std::string::npos);
  EXPECT_NEAR(f.front().expected_speedup->high, 40.0 / (40.0 - 30.0 * (1 - 66.9 / 989.4)), 1e-9);
}

TEST(DiagnoseRules, SmallBatchWhenBusyButUnderfilledWithMemoryToSpare) {
  Observations o = healthy_step();
  o.telemetry->sm_activity = 0.25;
  o.telemetry->memory_peak_bytes = 4.0 * (1 << 30);
  EXPECT_FALSE(small_batch(o));  // kernels of 36 us: SM activity alone is not enough
  o.kernels = 870;
  o.mean_kernel_s = o.kernel_s / o.kernels;  // 15 us
  auto f = small_batch(o);
  ASSERT_TRUE(f);
  // 18x fits, but SM activity while busy (0.25 / 0.867) caps the gain at about 3.5x.
  EXPECT_NEAR(f->expected_speedup->high, (13.0 / 15.0) / 0.25, 1e-9);
  EXPECT_NE(f->fix.find("18x"), std::string::npos);
  o.telemetry->memory_peak_bytes = 50.0 * (1 << 30);  // no room for a larger batch
  EXPECT_FALSE(small_batch(o));
}

// ResNet-18 at batch 8 on the H100 (bench/diagnose_fixtures/flaws.py): the GPU idles between
// short kernels, yet its convolutions are longer than a launch and 60x the memory is free.
Observations batch_of_eight() {
  Observations o = healthy_step();
  o.step_s = 12.3e-3;
  o.traced_step_s = 14e-3;
  o.busy_s = 1.1e-3;
  o.kernels = 326;
  o.kernel_s = 1.0e-3;
  o.mean_kernel_s = o.kernel_s / o.kernels;
  o.idle_short_s = 11e-3;
  o.matmul_s = o.matmul_tensor_s = 0.77e-3;
  o.matmul_kernels = 71;  // 10.8 us each
  o.telemetry->memory_peak_bytes = 1.2 * (1 << 30);
  return o;
}

TEST(DiagnoseRules, ABatchTooSmallOnAnIdleGpuIsSmallBatchNotLaunchBound) {
  Observations o = batch_of_eight();
  auto f = rules(o);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f.front().id, "small_batch");
  for (const Finding& x : f) EXPECT_NE(x.id, "launch_bound");
  // From a GPU whose work grows with the batch (busy all the step: 12.3 / 1.1 ms) to the kernels
  // first filling the SMs they leave idle; without SM activity, to what memory allows (60x).
  // (The healthy step's SM activity fills every SM while busy.)
  EXPECT_NEAR(f.front().expected_speedup->low, 12.3 / 1.1, 1e-9);
  EXPECT_NEAR(f.front().expected_speedup->high, 12.3 / 1.1, 1e-9);
  o.telemetry->sm_activity = 0.3 * 1.1 / 12.3;  // 30 % of the SMs while busy
  EXPECT_NEAR(rules(o).front().expected_speedup->high, 12.3 / 1.1 / 0.3, 1e-6);
  o.telemetry->sm_activity.reset();
  EXPECT_NEAR(rules(o).front().expected_speedup->high, 60.0, 1e-6);
  EXPECT_NE(f.front().fix.find("60x"), std::string::npos);
  // Matrix kernels of 3 us: tiny whatever the batch, launch-bound.
  o.matmul_kernels = 260;  // 3 us each
  f = rules(o);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f.front().id, "launch_bound");
  // Without memory to spare it is launch-bound too.
  o = batch_of_eight();
  o.telemetry->memory_peak_bytes = 30.0 * (1 << 30);
  EXPECT_EQ(rules(o).front().id, "launch_bound");
}

TEST(DiagnoseRules, CudnnDefaultsFromLayoutTransposes) {
  Observations o = healthy_step();
  o.layout_transposes = 40;
  o.layout_transpose_s = 2e-3;
  auto f = cudnn_defaults(o);
  ASSERT_TRUE(f);
  EXPECT_NE(f->fix.find("channels_last"), std::string::npos);
  EXPECT_NE(f->fix.find("cudnn.benchmark = True"), std::string::npos);
  o.conv_s = 0;  // transposes in a model without convolutions are something else
  EXPECT_FALSE(cudnn_defaults(o));
}

TEST(DiagnoseRules, UnfusedOptimizer) {
  Observations o = healthy_step();
  o.step_s = 25e-3;
  o.optimizer_chain_kernels = 620;
  o.optimizer_chain_span_s = 8e-3;
  o.optimizer_chain_kernel_s = 3e-3;
  auto f = rules(o);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f.front().id, "unfused_optimizer");
  EXPECT_NE(f.front().fix.find("fused=True"), std::string::npos);
  o.optimizer_chain_kernels = 12;  // foreach: a dozen multi-tensor kernels
  EXPECT_FALSE(unfused_optimizer(o));
}

TEST(DiagnoseRules, ThrottledAtThePowerLimit) {
  Observations o = healthy_step();
  o.telemetry->throttle_s = {{"sw_power_cap", 3.0}, {"applications_clocks", 5.0}};
  o.telemetry->sm_clock_mean_hz = 1500e6;
  auto f = throttled(o);
  ASSERT_TRUE(f);
  EXPECT_EQ(f->title, "The GPU slows its clocks down at its power limit");
  EXPECT_NE(f->fix.find("gpuscope sweep"), std::string::npos);
  EXPECT_NEAR(f->expected_speedup->high, 1980.0 / 1500.0, 1e-9);
  o.telemetry->throttle_s = {{"hw_thermal", 4.0}};
  EXPECT_EQ(throttled(o)->title, "The GPU slows its clocks down for heat");
  o.telemetry->throttle_s = {{"sw_power_cap", 0.2}};  // 4 % of the time
  EXPECT_FALSE(throttled(o));
}

TEST(DiagnoseRules, SharedGpuAndIdleGpus) {
  Observations o = healthy_step();
  o.telemetry->others.push_back({4242, "python3", 20.0 * (1 << 30), 0.5});
  auto f = shared_gpu(o);
  ASSERT_TRUE(f);
  EXPECT_NE(f->fix.find("4242 (python3)"), std::string::npos);
  EXPECT_DOUBLE_EQ(f->expected_speedup->high, 2.0);

  std::vector<GpuObservations> gpus(4);
  for (int i = 0; i < 4; ++i) gpus[i].gpu = i;
  gpus[0].used_by_command = true;
  auto idle = idle_gpus(gpus);
  ASSERT_TRUE(idle);
  EXPECT_EQ(idle->severity, Severity::info);
  EXPECT_EQ(idle->subjects.size(), 3u);
  EXPECT_NE(idle->fix.find("--nproc_per_node=4"), std::string::npos);
  gpus[1].used_by_command = gpus[2].used_by_command = gpus[3].used_by_command = true;
  EXPECT_FALSE(idle_gpus(gpus));
}

// A GPU idle most of the step for a cause outside the rules (here: Python work in the loop body,
// no DataLoader wait, no synchronization, long kernels) is a finding, not "healthy".
TEST(DiagnoseRules, AnIdleGpuNoRuleExplainsIsNotHealthy) {
  Observations o = healthy_step();
  o.step_s = o.traced_step_s = 40e-3;  // busy 13 ms of 40
  o.idle_long_s = 26e-3;
  o.idle_short_s = 1e-3;
  o.run_wall_s = 60;
  o.main_thread_cpu_s = 57;
  auto f = rules(o);
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f.front().id, "gpu_idle");
  EXPECT_TRUE(is_major(f.front()));
  EXPECT_EQ(f.front().confidence, Confidence::low);
  EXPECT_NE(f.front().title.find("68 %"), std::string::npos) << f.front().title;
  EXPECT_NE(f.front().fix.find("loop body"), std::string::npos) << f.front().fix;
  EXPECT_NE(f.front().fix.find("py-spy"), std::string::npos);
  ASSERT_TRUE(f.front().expected_speedup);
  EXPECT_NEAR(f.front().expected_speedup->high, 40.0 / 13.0, 1e-9);
  EXPECT_NEAR(f.front().expected_speedup->low, 40.0 / 26.5, 1e-9);

  // The main thread mostly off the CPU: it waits for something that is not the GPU.
  o.main_thread_cpu_s = 12;
  f = rules(o);
  ASSERT_EQ(f.front().id, "gpu_idle");
  EXPECT_NE(f.front().fix.find("waits for something"), std::string::npos) << f.front().fix;

  // The same idle with a cause a rule names: that rule's finding alone.
  o.data_wait_s = o.data_wait_idle_s = 26e-3;
  f = rules(o);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f.front().id, "input_bound");
  for (const Finding& x : f) EXPECT_NE(x.id, "gpu_idle");

  // Busy 70 % of the step or more: no finding (the healthy step is busy 87 %).
  Observations busy = healthy_step();
  busy.step_s = busy.traced_step_s = 18e-3;  // 72 %
  busy.idle_long_s = 4.5e-3;
  EXPECT_FALSE(any_major(rules(busy)));
}

// A host-paced step that tracing slowed by 6.3 ms: those 6.3 ms of short gaps between kernels are
// tracing's. Without them the GPU idles in one long gap (the host's own work after the step),
// which is neither launch-bound nor a batch too small.
TEST(DiagnoseRules, ShortGapsTracingOpenedAreNotLaunchBound) {
  Observations o = healthy_step();
  o.step_s = 31.5e-3;
  o.traced_step_s = 37.8e-3;
  o.busy_s = 10.8e-3;
  o.kernels = 360;
  o.mean_kernel_s = 30e-6;
  o.matmul_kernels = 100;
  o.idle_short_s = 7e-3;
  o.idle_long_s = 20e-3;
  auto f = rules(o);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f.front().id, "gpu_idle");
  for (const Finding& x : f) {
    EXPECT_NE(x.id, "launch_bound");
    EXPECT_NE(x.id, "small_batch");
  }
  // Untraced, 0.7 ms of the short gaps remain.
  EXPECT_EQ(f.front().evidence[3].what, "GPU idle in gaps under 1 ms per step");
  EXPECT_NEAR(f.front().evidence[3].value, 0.7, 1e-9);
  // The same short gaps in a step tracing did not slow are the program's own: the GPU idles
  // between kernels of 80 us GEMMs with memory to spare, a batch too small.
  o.traced_step_s = o.step_s = 20e-3;
  o.idle_long_s = 2e-3;
  f = rules(o);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f.front().id, "small_batch");
}

// torch.cuda.empty_cache() in the loop: every 20 ms step runs 10 ms of kernels, then the host
// frees the cache (cudaFree, 1 ms, waiting for the GPU; the runtime's call and the driver's
// cuMemFree inside it both recorded) and takes it back (cudaMalloc, 0.5 ms); the next step's
// work comes at its start. Read from the records, one free and one malloc a step, and the GPU
// idle after each free.
TEST(DiagnoseRules, AFreeEveryStepIsAllocatorChurn) {
  using trace::detail::GpuActivity;
  using trace::detail::HostInterval;
  constexpr std::int64_t kMsNs = 1'000'000;
  trace::detail::Timeline t;
  t.main_pid = 100;
  const std::uint32_t mark = t.intern("gpuscope.step");
  const std::uint32_t launch = t.intern("cudaLaunchKernel");
  const std::uint32_t kernel = t.intern("nvjet_sm90_tst_128x64_64x8_1x2_h_bz_bias_TNT");
  const std::uint32_t cuda_free = t.intern("cudaFree_v3020");
  const std::uint32_t cu_free = t.intern("cuMemFree_v2");
  const std::uint32_t cuda_malloc = t.intern("cudaMalloc_v3020");
  const std::uint32_t pinned_free = t.intern("cudaFreeHost_v3020");  // not device memory
  std::uint64_t correlation = 1;
  for (int s = 0; s < 9; ++s) {
    const std::int64_t t0 = 1000 * kMsNs + s * 20 * kMsNs;
    for (int k = 0; k < 4; ++k) {
      const std::int64_t at = t0 + k * 10'000;
      t.host.push_back({HostInterval::Kind::api, 100, 100, at, at + 5'000, launch, correlation});
      GpuActivity a;
      a.kind = GpuActivity::Kind::kernel;
      a.name = kernel;
      a.start_ns = t0 + k * 2500'000 + 50'000;
      a.end_ns = a.start_ns + 2500'000;
      a.correlation = correlation++;
      t.gpu.push_back(a);
    }
    const std::int64_t free_at = t0 + 12 * kMsNs;
    t.host.push_back({HostInterval::Kind::api, 100, 100, free_at, free_at + kMsNs, cuda_free, 0});
    t.host.push_back(
        {HostInterval::Kind::api, 100, 100, free_at + 100'000, free_at + 900'000, cu_free, 0});
    t.host.push_back({HostInterval::Kind::api, 100, 100, free_at + kMsNs, free_at + kMsNs + 500'000,
                      cuda_malloc, 0});
    t.host.push_back({HostInterval::Kind::api, 100, 100, free_at + 2 * kMsNs,
                      free_at + 2 * kMsNs + 1000, pinned_free, 0});
    t.marks.push_back({100, 100, t0 + 20 * kMsNs - 1, mark});
  }
  const trace::detail::TraceSummary s = trace::detail::summarize(t, {}, {});
  ASSERT_EQ(s.steps.size(), 8u);
  const Observations o = observe(t, s, std::nullopt, std::nullopt);
  EXPECT_NEAR(o.device_frees, 1.0, 1e-9) << "the runtime's calls, not the driver's inside them too";
  EXPECT_NEAR(o.device_mallocs, 1.0, 1e-9);
  EXPECT_NEAR(o.allocator_s, 1.5e-3, 1e-9);
  // From the free's end (13 ms into the step) to the next step's first kernel (20.05 ms), after
  // 7 of the 8 frees (the last one has no work after it).
  EXPECT_NEAR(o.idle_after_free_s, 7.05e-3 * 7 / 8, 1e-6);
  const auto f = rules(o);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f.front().id, "allocator_churn");
  EXPECT_EQ(f.front().severity, Severity::warning);
  EXPECT_NE(f.front().fix.find("empty_cache"), std::string::npos);
  ASSERT_TRUE(f.front().expected_speedup);
  EXPECT_GT(f.front().expected_speedup->low, 1.3);
  for (const Finding& x : f) EXPECT_NE(x.id, "gpu_idle");

  // No free in the window (the allocator kept its memory): no finding.
  Observations kept = o;
  kept.device_frees = 0;
  for (const Finding& x : rules(kept)) EXPECT_NE(x.id, "allocator_churn");
}

TEST(DiagnoseRules, EveryFindingHasEvidenceAFixAndAGainRange) {
  Observations o = healthy_step();
  o.step_s = 100e-3;
  o.data_wait_idle_s = 20e-3;
  o.pageable_h2d_copies = 1, o.pageable_h2d_s = 5e-3;
  o.syncs = 1, o.idle_after_sync_s = 5e-3;
  o.matmul_fp32_s = 20e-3;
  o.layout_transpose_s = 5e-3;
  o.optimizer_chain_kernels = 100, o.optimizer_chain_span_s = 10e-3;
  o.device_frees = o.device_mallocs = 1, o.idle_after_free_s = 2e-3;
  for (const Finding& f : rules(o)) {
    EXPECT_FALSE(f.evidence.empty()) << f.id;
    EXPECT_FALSE(f.fix.empty()) << f.id;
    ASSERT_TRUE(f.expected_speedup) << f.id;
    EXPECT_GE(f.expected_speedup->high, f.expected_speedup->low) << f.id;
    EXPECT_GE(f.expected_speedup->low, 1.0) << f.id;
    EXPECT_TRUE(f.confidence) << f.id;
  }
}

// Two data-parallel ranks of 10 ms steps (healthy_step's GPU otherwise). Rank 0 computes for
// `compute0` ms, rank 1 for `compute1`; each overlaps a 2 ms bucket all-reduce with its backward,
// and its last all-reduce runs from the end of its computing until both ranks are in plus 1 ms:
// the faster rank waits for the slower one there.
std::vector<Observations> two_ranks(double compute0_ms, double compute1_ms, double idle1_ms = 0) {
  std::vector<Observations> ranks;
  const double both_in = std::max(compute0_ms, compute1_ms) * 1e-3;
  for (const double compute_ms : {compute0_ms, compute1_ms}) {
    Observations o = healthy_step();
    o.subject = ranks.empty() ? "rank pid 100 (GPU 0)" : "rank pid 101 (GPU 1)";
    o.gpu = static_cast<int>(ranks.size());
    o.step_s = o.traced_step_s = 10e-3;
    const double compute = compute_ms * 1e-3;
    const double last_reduce = both_in + 1e-3 - compute;
    o.comm_kernels = 2;
    o.comm_s = 2e-3 + last_reduce;
    o.comm_exposed_s = last_reduce;
    o.busy_s = compute + last_reduce;
    ranks.push_back(o);
  }
  ranks[1].busy_s -= idle1_ms * 1e-3;
  return ranks;
}

const Finding* with_id(const std::vector<Finding>& findings, const std::string& id) {
  for (const Finding& f : findings)
    if (f.id == id) return &f;
  return nullptr;
}

// Collective kernels beside computation on one stream and after it on another: only the time
// with no other GPU work beside them is exposed.
TEST(DiagnoseRules, CommunicationBesideComputationIsHiddenAndAfterItExposed) {
  const char* nccl = "ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)";
  const trace::detail::Timeline t = trace::detail::ten_ms_steps(
      9, {{"nvjet_sm90_tst_128x64_64x8_1x2_h_bz_bias_TNT", 0.1, 7, 0, 7},  // forward, backward
          {nccl, 3, 5, 0, 13},      // a bucket's all-reduce beside the backward
          {nccl, 6.5, 9, 0, 13}});  // the last one: 0.5 ms beside, 2 ms after
  const trace::detail::TraceSummary s = trace::detail::summarize(t, {}, {});
  ASSERT_EQ(s.steps.size(), 8u);
  const Observations o = observe(t, s, std::nullopt, std::nullopt);
  EXPECT_NEAR(o.comm_kernels, 2, 1e-9);
  EXPECT_NEAR(o.comm_s, 4.5e-3, 1e-6);
  EXPECT_NEAR(o.comm_exposed_s, 2e-3, 1e-6);
  EXPECT_NEAR(o.busy_s, 8.9e-3, 1e-6) << "collectives are busy time";
  const auto f = rules(o);
  const Finding* exposed = with_id(f, "exposed_communication");
  ASSERT_NE(exposed, nullptr);
  EXPECT_EQ(exposed->severity, Severity::warning);
  EXPECT_NE(exposed->fix.find("no_sync"), std::string::npos);
  ASSERT_TRUE(exposed->expected_speedup);
  EXPECT_NEAR(exposed->expected_speedup->high, 10.0 / 8.0, 0.01);
}

TEST(DiagnoseRules, CommunicationUnderFivePercentOfTheStepIsNoFinding) {
  Observations o = healthy_step();
  o.comm_kernels = 12;
  o.comm_s = 3e-3;
  o.comm_exposed_s = 0.6e-3;  // 4 % of 15 ms
  EXPECT_EQ(with_id(rules(o), "exposed_communication"), nullptr);
  o.comm_exposed_s = 0.9e-3;
  EXPECT_NE(with_id(rules(o), "exposed_communication"), nullptr);
  o.comm_wait_s = 0.4e-3;  // of which a wait for a slower rank: 0.5 ms its own
  EXPECT_EQ(with_id(rules(o), "exposed_communication"), nullptr);
}

TEST(DiagnoseRules, TheFixFollowsTheCollectiveThatTakesMostOfTheTime) {
  Observations o = healthy_step();
  o.comm_kernels = 40;
  o.comm_s = 4e-3;
  o.comm_exposed_s = 2e-3;
  const auto fix_for = [&](std::map<std::string, double> by_op) {
    o.comm_by_op_s = std::move(by_op);
    const std::vector<Finding> found = rules(o);
    const Finding* f = with_id(found, "exposed_communication");
    return f ? f->fix : std::string("(no finding)");
  };
  EXPECT_NE(fix_for({}).find("no_sync"), std::string::npos) << "all-reduces when unknown";
  EXPECT_NE(fix_for({{"all_reduce", 3.9e-3}, {"broadcast", 0.1e-3}}).find("no_sync"),
            std::string::npos);
  const std::string sharded = fix_for({{"all_gather", 2.5e-3}, {"reduce_scatter", 1.5e-3}});
  EXPECT_NE(sharded.find("forward_prefetch"), std::string::npos) << sharded;
  EXPECT_EQ(sharded.find("no_sync"), std::string::npos) << sharded;
  EXPECT_NE(fix_for({{"broadcast", 3e-3}, {"all_reduce", 1e-3}}).find("broadcast_buffers=False"),
            std::string::npos);
  EXPECT_NE(fix_for({{"send_recv", 4e-3}}).find("1F1B"), std::string::npos);
  EXPECT_NE(fix_for({{"send_recv", 4e-3}}).find("nvidia-smi topo -m"), std::string::npos);
}

// Copies between GPUs and no collective kernel (a model split across GPUs, a copy-engine
// all-reduce): communication all the same, with a fix of its own.
TEST(DiagnoseRules, ExposedCopiesBetweenGpusAreCommunication) {
  Observations o = healthy_step();
  o.comm_copies = 4;
  o.comm_s = 3e-3;
  o.comm_exposed_s = 2e-3;
  o.comm_by_op_s = {{"peer_copy", 3e-3}};
  const std::vector<Finding> found = rules(o);
  const Finding* f = with_id(found, "exposed_communication");
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(f->title, "Copies between GPUs run with no computation beside them");
  EXPECT_NE(f->fix.find("torch.distributed.pipelining"), std::string::npos) << f->fix;
  EXPECT_NE(f->fix.find("non_blocking=True"), std::string::npos) << f->fix;
  const auto copies = std::find_if(f->evidence.begin(), f->evidence.end(), [](const Evidence& e) {
    return e.what == "peer copies per step";
  });
  ASSERT_NE(copies, f->evidence.end());
  EXPECT_DOUBLE_EQ(copies->value, 4);
  o.comm_exposed_s = 0.5e-3;  // 3 % of the step
  EXPECT_EQ(with_id(rules(o), "exposed_communication"), nullptr);
}

TEST(DiagnoseRules, ASlowerRanksGpuIsNamedAndTheOthersWaitIsNotCommunication) {
  // Rank 1's GPU computes 8 ms a step, rank 0's 7 ms: rank 0 waits 1 ms in its last all-reduce.
  std::vector<Observations> ranks = two_ranks(7, 8);
  share_out_waits(ranks);
  EXPECT_NEAR(ranks[0].comm_wait_s, 1e-3, 1e-12);
  EXPECT_NEAR(ranks[1].comm_wait_s, 0, 1e-12);
  const auto imbalance = rank_imbalance(ranks);
  ASSERT_TRUE(imbalance);
  EXPECT_EQ(imbalance->id, "rank_imbalance");
  EXPECT_EQ(imbalance->subjects, std::vector<std::string>{"rank pid 101 (GPU 1)"});
  EXPECT_EQ(imbalance->gpu, 1);
  EXPECT_NE(imbalance->fix.find("computes longer"), std::string::npos) << imbalance->fix;
  ASSERT_TRUE(imbalance->expected_speedup);
  EXPECT_NEAR(imbalance->expected_speedup->high, 10.0 / 9.0, 1e-9);
  // Each rank's own exposed communication is the 1 ms the slowest one has: 10 % of the step.
  for (const Observations& o : ranks) {
    const std::vector<Finding> found = rules(o);
    const Finding* exposed = with_id(found, "exposed_communication");
    ASSERT_NE(exposed, nullptr) << o.subject;
    EXPECT_NEAR(exposed->expected_speedup->high, 10.0 / 9.0, 1e-9) << o.subject;
  }
}

// As in a live torchrun job with sequence lengths sorted across the ranks (2×H200, session 15):
// tracing slowed the faster rank's host until its GPU idled, so the others were seen waiting
// less than the slowest GPU's extra work.
TEST(DiagnoseRules, AWaitHiddenByAHostPacedRankStillCountsTheSlowestGpusExtraWork) {
  // Rank 1's GPU computes 9 ms a step; rank 0's 5 ms, idles 3 ms and waits 1 ms.
  std::vector<Observations> ranks = two_ranks(5, 9);
  ranks[0].comm_exposed_s = 2e-3;
  ranks[0].comm_s = 4e-3;
  ranks[0].busy_s = 7e-3;
  share_out_waits(ranks);
  EXPECT_NEAR(ranks[0].comm_wait_s, 1e-3, 1e-12);
  const auto imbalance = rank_imbalance(ranks);
  ASSERT_TRUE(imbalance);
  EXPECT_EQ(imbalance->subjects, std::vector<std::string>{"rank pid 101 (GPU 1)"});
  EXPECT_NE(imbalance->fix.find("computes longer"), std::string::npos) << imbalance->fix;
  EXPECT_NE(imbalance->fix.find("2.0 ms a step beyond the ranks' mean"), std::string::npos)
      << imbalance->fix;
  ASSERT_TRUE(imbalance->expected_speedup);
  // Balanced, each GPU computes 7 ms: 2 ms of the 10 ms step saved at most, half the wait at least.
  EXPECT_NEAR(imbalance->expected_speedup->high, 10.0 / 8.0, 1e-9);
  EXPECT_NEAR(imbalance->expected_speedup->low, 10.0 / 9.5, 1e-9);
}

TEST(DiagnoseRules, ARankWhoseHostDoesMoreIsToldSo) {
  // Both GPUs compute 7 ms, but rank 1's starts 1.5 ms late each step (its host logs): its GPU
  // idles longer and the other waits.
  std::vector<Observations> ranks = two_ranks(7, 8.5, 1.5);
  share_out_waits(ranks);
  const auto imbalance = rank_imbalance(ranks);
  ASSERT_TRUE(imbalance);
  EXPECT_EQ(imbalance->subjects, std::vector<std::string>{"rank pid 101 (GPU 1)"});
  EXPECT_NE(imbalance->fix.find("idles longer"), std::string::npos) << imbalance->fix;
}

TEST(DiagnoseRules, BalancedRanksOrOneProcessAreNoImbalance) {
  std::vector<Observations> ranks = two_ranks(7, 7.2);  // 0.2 ms: 2 % of the step
  share_out_waits(ranks);
  EXPECT_FALSE(rank_imbalance(ranks));
  std::vector<Observations> one = {two_ranks(7, 8)[0]};
  share_out_waits(one);
  EXPECT_EQ(one[0].comm_wait_s, 0) << "one process waits for nobody";
  EXPECT_FALSE(rank_imbalance(one));
  std::vector<Observations> no_collectives = {healthy_step(), healthy_step()};
  share_out_waits(no_collectives);
  EXPECT_FALSE(rank_imbalance(no_collectives));
}

// nn.DataParallel on two GPUs: one process; each 10 ms step runs 8 ms of kernels on GPU 0 (the
// scatter, its replica's forward and backward, the gather and the loss) and 4.5 ms on GPU 1.
TEST(DiagnoseRules, OneProcessDrivingTwoGpusIsToldToRunOnePerGpu) {
  const char* gemm = "nvjet_sm90_tst_128x64_64x8_1x2_h_bz_bias_TNT";
  const trace::detail::Timeline t =
      trace::detail::ten_ms_steps(9, {{gemm, 0.5, 8.5, 0}, {gemm, 2.0, 6.5, 1}});
  const trace::detail::TraceSummary s = trace::detail::summarize(t, {}, {});
  ASSERT_EQ(s.steps.size(), 8u);
  EXPECT_EQ(s.devices, (std::vector<int>{0, 1}));
  const Observations o = observe(t, s, std::nullopt, std::nullopt);
  ASSERT_EQ(o.device_busy_s.size(), 2u);
  EXPECT_NEAR(o.device_busy_s.at(0), 8e-3, 1e-6);
  EXPECT_NEAR(o.device_busy_s.at(1), 4.5e-3, 1e-6);
  const nlohmann::json summary = trace::detail::summary_to_json(s, t, {});
  ASSERT_EQ(summary["gpu"]["busy_by_device"].size(), 2u);
  EXPECT_NEAR(summary["gpu"]["busy_by_device"][1]["busy_share"].get<double>(), 0.45, 1e-3);
  const std::vector<Finding> found = rules(o);
  const Finding* f = with_id(found, "one_process_many_gpus");
  ASSERT_NE(f, nullptr);
  EXPECT_NE(f->fix.find("torchrun --nproc_per_node=2"), std::string::npos) << f->fix;
  ASSERT_TRUE(f->expected_speedup);
  // The GPUs idle 2 and 5.5 ms of the 10 ms step: 3.75 ms on average.
  EXPECT_NEAR(f->expected_speedup->high, 10.0 / (10.0 - 3.75), 1e-3);

  // A few stray kernels on a second GPU (under 5 % of the step) are not a second GPU in use.
  Observations stray = o;
  stray.device_busy_s[1] = 0.3e-3;
  EXPECT_EQ(with_id(rules(stray), "one_process_many_gpus"), nullptr);
}

}  // namespace
}  // namespace gpuscope::analysis::detail
