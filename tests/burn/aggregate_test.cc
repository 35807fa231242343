// From a worker's stream, its exit and its GPU's telemetry to rows per precision, memory and
// host-link tables, and the target's outcome; and the exit code of a whole burn.
#include "burn/aggregate.h"

#include <fmt/format.h>
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

#include "burn_test_util.h"
#include "gpuscope/exit_codes.h"

namespace gpuscope::burn::detail {
namespace {

using testing::burn_fixture;
using ::testing::HasSubstr;
using testing::read_script;

constexpr double kBf16Peak = 989.4e12;

Target h100_target() {
  Target t;
  t.gpu_name = "NVIDIA H100 80GB HBM3";
  t.name = t.gpu_name;
  t.gpu_uuid = "GPU-3f6b2c1d-8a4e-4f1b-9c2d-5e7a8b9c0d1e";
  PeakRates peak;
  peak.model = "H100 SXM5 80GB";
  peak.flops_per_s = {
      {Precision::fp64, 66.9e12}, {Precision::bf16, kBf16Peak}, {Precision::fp8, 1978.9e12}};
  peak.memory_bandwidth_bytes_per_s = 3.35e12;
  t.peak = peak;
  return t;
}

// One sample a second over [0, 12]: 500 W (690 W from t = 8 on), an energy counter integrating
// it, temperature 30 + 2t, the power-cap bit and its time counter set between t = 9 and 10.
// GPM (SM 90 %, tensor 75 %) over each second.
TargetTelemetry telemetry(bool energy_counter = true) {
  using telemetry::Metric;
  TargetTelemetry g;
  double energy = 1e6;
  for (int i = 0; i <= 12; ++i) {
    telemetry::GpuSample s;
    s.t_s = i;
    const double power = i >= 8 ? 690.0 : 500.0;
    s.values.set(Metric::power_w, power);
    if (i > 0) energy += 0.5 * (power + (i - 1 >= 8 ? 690.0 : 500.0));
    if (energy_counter) s.values.set(Metric::energy_j, energy);
    s.values.set(Metric::temperature_c, 30 + 2 * i);
    s.values.set(Metric::sm_clock_hz, 1980e6);
    s.values.set(Metric::clock_event_reasons, i == 9 ? 0x4 : 0x0);
    s.values.set(Metric::throttle_sw_power_cap_s, i >= 10 ? 0.4 : 0.0);
    s.values.set(Metric::throttle_hw_thermal_s, 0.0);
    if (i > 0) {
      s.gpm_interval_s = 1.0;
      s.values.set(Metric::sm_activity, 0.9);
      s.values.set(Metric::tensor_activity, 0.75);
    }
    g.samples.push_back(s);
  }
  return g;
}

// A precision's span, as the aggregation takes it.
struct Span {
  double start = 0, end = 0;
  double seconds() const { return end - start; }
};

WorkerRun passed_run() {
  WorkerRun run;
  run.stream = read_script(burn_fixture("h100_worker_handmade.jsonl"));
  run.exit = ProcessExit{0, std::nullopt, false, 11.0};
  return run;
}

AggregateContext context(std::vector<Precision> precisions = {Precision::fp64, Precision::bf16,
                                                              Precision::fp8, Precision::int8}) {
  AggregateContext c;
  c.precisions = std::move(precisions);
  return c;
}

const PrecisionRow& row(const TargetResult& r, Precision p) {
  for (const PrecisionRow& x : r.gemm) {
    if (x.precision == p) return x;
  }
  throw std::runtime_error("no row");
}

Span bf16_span(const WorkerStream& s) {
  std::vector<const WindowLine*> w;
  for (const WindowLine& x : s.windows) {
    if (x.precision == Precision::bf16) w.push_back(&x);
  }
  return {w.front()->received_at - w.front()->elapsed_seconds, w.back()->received_at};
}

TEST(BurnAggregate, APassedRunHasARowPerPlannedPrecision) {
  const WorkerRun run = passed_run();
  const TargetTelemetry g = telemetry();
  const TargetResult r = aggregate_target(h100_target(), run, &g, context());
  EXPECT_EQ(r.outcome, Outcome::passed) << r.failure;
  EXPECT_EQ(r.worker_exit_code, 0);
  ASSERT_EQ(r.gemm.size(), 4u);
  ASSERT_TRUE(r.device);
  EXPECT_EQ(r.device->sm_count, 132);

  const PrecisionRow& bf16 = row(r, Precision::bf16);
  EXPECT_EQ(bf16.status, RowStatus::measured);
  EXPECT_FALSE(bf16.partial);
  EXPECT_EQ(bf16.windows, 3);
  EXPECT_EQ(bf16.n, 8192);
  EXPECT_DOUBLE_EQ(*bf16.flop_per_second_median, 767.2e12);
  EXPECT_DOUBLE_EQ(*bf16.flop_per_second_min, 765.9e12);
  EXPECT_DOUBLE_EQ(*bf16.flop_per_second_max, 768.4e12);
  EXPECT_DOUBLE_EQ(*bf16.fraction_of_peak, 767.2e12 / kBf16Peak);
  EXPECT_EQ(bf16.errors.total(), 0u);
  EXPECT_GT(bf16.errors.gemms_checked, 0u);
  EXPECT_TRUE(bf16.verified);
  EXPECT_EQ(bf16.algorithm, "algo 66 tile 18 stages 20 NN CUBLAS_COMPUTE_32F");

  const PrecisionRow& int8 = row(r, Precision::int8);
  EXPECT_EQ(int8.status, RowStatus::not_run);
  EXPECT_EQ(int8.note, "the worker did not get to it");
  EXPECT_FALSE(int8.flop_per_second_median);
}

TEST(BurnAggregate, TelemetryIsTakenOverEachPrecisionsSpan) {
  const WorkerRun run = passed_run();
  const TargetTelemetry g = telemetry();
  const TargetResult r = aggregate_target(h100_target(), run, &g, context());
  const PrecisionRow& bf16 = row(r, Precision::bf16);
  const Span span = bf16_span(run.stream);
  EXPECT_NEAR(bf16.span_seconds, span.seconds(), 1e-12);
  EXPECT_NEAR(span.seconds(), 3.0, 0.1);
  EXPECT_NEAR(*bf16.power_average_w, 500.0, 1e-9);
  EXPECT_NEAR(*bf16.energy_j, 500.0 * span.seconds(), 1e-6);
  EXPECT_EQ(bf16.energy_source, "energy_counter");
  double flop = 0;
  for (const WindowLine& w : run.stream.windows) {
    if (w.precision == Precision::bf16) flop += w.flop;
  }
  EXPECT_NEAR(*bf16.flop_per_joule, flop / *bf16.energy_j, 1e-3);
  EXPECT_DOUBLE_EQ(*bf16.temperature_max_c, 30 + 2 * 7);  // the last sample inside: t = 7
  EXPECT_DOUBLE_EQ(*bf16.sm_clock_average_hz, 1980e6);
  EXPECT_NEAR(*bf16.sm_activity, 0.9, 1e-12);
  EXPECT_NEAR(*bf16.tensor_activity, 0.75, 1e-12);
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();

  // fp8 ran at 690 W (after a ramp from 500 W between the samples at t = 7 and 8) while the
  // power cap held the clocks for 0.4 s (counter).
  const PrecisionRow& fp8 = row(r, Precision::fp8);
  EXPECT_GT(*fp8.power_average_w, 650.0);
  EXPECT_LT(*fp8.power_average_w, 690.0);
  ASSERT_FALSE(fp8.throttle.empty());
  std::map<std::string, burn::ThrottleTime> by_reason;
  for (const auto& t : fp8.throttle) by_reason[t.reason] = t;
  EXPECT_NEAR(by_reason.at("sw_power_cap").seconds, 0.4, 1e-9);
  EXPECT_FALSE(by_reason.at("sw_power_cap").estimated);
  EXPECT_DOUBLE_EQ(by_reason.at("hw_thermal_slowdown").seconds, 0.0);
  // No counter for these: estimated from the sampled masks (none had their bit).
  EXPECT_TRUE(by_reason.at("hw_slowdown").estimated);
  EXPECT_DOUBLE_EQ(by_reason.at("hw_slowdown").seconds, 0.0);
  EXPECT_TRUE(by_reason.at("sw_thermal_slowdown").estimated);
}

TEST(BurnAggregate, MemoryAndHostLinkRowsArePassedOnWithTheirShareOfPeak) {
  const TargetTelemetry g = telemetry();
  const TargetResult r = aggregate_target(h100_target(), passed_run(), &g, context());
  ASSERT_EQ(r.memory.size(), 4u);
  EXPECT_EQ(r.memory[0].kernel, "copy");
  EXPECT_DOUBLE_EQ(*r.memory[0].fraction_of_peak, 3.01e12 / 3.35e12);
  EXPECT_EQ(r.host_link.size(), 18u);
  EXPECT_EQ(r.overlap.size(), 2u);
  EXPECT_DOUBLE_EQ(r.overlap[0].efficiency, 0.98);
}

TEST(BurnAggregate, WithoutAnEnergyCounterPowerIsIntegrated) {
  const TargetTelemetry g = telemetry(/*energy_counter=*/false);
  const TargetResult r = aggregate_target(h100_target(), passed_run(), &g, context());
  const PrecisionRow& bf16 = row(r, Precision::bf16);
  EXPECT_EQ(bf16.energy_source, "power_samples");
  EXPECT_NEAR(*bf16.power_average_w, 500.0, 1e-9);
  EXPECT_TRUE(bf16.flop_per_joule);
}

// A worker that sent one window of two GEMMs in 3 ms, `elapsed_s` into its run, received at
// `at` s, with `nan_count` NaNs, and nothing after it.
WorkerRun one_window_run(const char* precision, double elapsed_s, int nan_count, double at) {
  WorkerRun run;
  const Status added = add_line(
      run.stream,
      fmt::format(R"({{"v":1,"type":"gemm_window","precision":"{}","window":0,"gemms":2,)"
                  R"("flop":2.2e12,"seconds":0.003,"elapsed_seconds":{},)"
                  R"("flop_per_second":7.3e14,"mismatches":0,"nan_count":{},"inf_count":0}})",
                  precision, elapsed_s, nan_count),
      at);
  EXPECT_TRUE(added.ok()) << added.to_string();
  return run;
}

TEST(BurnAggregate, ASpanTooShortForTheSensorsGivesNoEnergy) {
  WorkerRun run = one_window_run("bf16", 0.3, 0, 5.0);
  run.exit = ProcessExit{0, std::nullopt, false, 6};
  const TargetTelemetry g = telemetry();
  const TargetResult r = aggregate_target(h100_target(), run, &g, context({Precision::bf16}));
  const PrecisionRow& bf16 = r.gemm[0];
  EXPECT_FALSE(bf16.energy_j);
  EXPECT_FALSE(bf16.flop_per_joule);
  EXPECT_NEAR(*bf16.power_average_w, 500.0, 1e-9);
  ASSERT_FALSE(r.warnings.empty());
  EXPECT_THAT(r.warnings[0], HasSubstr("too short to measure energy"));
  EXPECT_TRUE(bf16.partial);              // no gemm_result arrived
  EXPECT_EQ(r.outcome, Outcome::failed);  // exit 0 without a done line
  EXPECT_THAT(r.failure, HasSubstr("without its final 'done' line"));
}

TEST(BurnAggregate, AWrongResultFailsTheTargetWithTheWorkersMessage) {
  WorkerRun run;
  run.stream = read_script(burn_fixture("worker_verification_failure_handmade.jsonl"));
  run.exit = ProcessExit{1, std::nullopt, false, 5};
  const TargetResult r = aggregate_target(h100_target(), run, nullptr, context({Precision::bf16}));
  EXPECT_EQ(r.outcome, Outcome::verification_failed);
  EXPECT_THAT(r.failure, HasSubstr("bf16 GEMM verification failed on NVIDIA H100 80GB HBM3"));
  const PrecisionRow& bf16 = r.gemm[0];
  EXPECT_EQ(bf16.status, RowStatus::measured);
  EXPECT_EQ(bf16.errors.mismatches, 1u);
  EXPECT_FALSE(bf16.verified);
  EXPECT_FALSE(bf16.temperature_max_c);  // no telemetry given
}

TEST(BurnAggregate, WrongCountsAloneAlsoFailTheTarget) {
  WorkerRun run = one_window_run("fp16", 1.0, 2, 2.0);
  run.exit = ProcessExit{std::nullopt, SIGKILL, false, 3};
  const TargetResult r = aggregate_target(h100_target(), run, nullptr, context({Precision::fp16}));
  EXPECT_EQ(r.outcome, Outcome::verification_failed);
  EXPECT_THAT(r.failure, HasSubstr("fp16 GEMM results were wrong: 0 mismatching elements, 2 NaN"));
}

// The stream of the handmade fixture up to (and without) the line that starts with `stop`.
WorkerRun truncated_run(const std::string& stop_after_precision_windows) {
  WorkerRun run;
  const WorkerStream full = read_script(burn_fixture("h100_worker_handmade.jsonl"));
  run.stream.device = full.device;
  for (const WindowLine& w : full.windows) {
    run.stream.windows.push_back(w);
    if (precision_name(w.precision) == stop_after_precision_windows && w.index == 1) break;
  }
  for (const ResultLine& res : full.results) {
    if (precision_name(res.precision) == stop_after_precision_windows) break;
    run.stream.results.push_back(res);
  }
  return run;
}

TEST(BurnAggregate, AKilledWorkerFailsItsTargetAndKeepsWhatItMeasured) {
  WorkerRun run = truncated_run("bf16");
  run.exit = ProcessExit{std::nullopt, SIGKILL, false, 6};
  run.stderr_tail = {"gpuscope-burn-worker: bf16 n=8192 for 3 s ..."};
  const TargetResult r = aggregate_target(h100_target(), run, nullptr, context());
  EXPECT_EQ(r.outcome, Outcome::failed);
  EXPECT_EQ(r.failure,
            "the worker was killed by signal 9 (SIGKILL); its last message: gpuscope-burn-worker: "
            "bf16 n=8192 for 3 s ...");
  EXPECT_EQ(r.worker_signal, SIGKILL);
  EXPECT_EQ(row(r, Precision::fp64).status, RowStatus::measured);
  EXPECT_FALSE(row(r, Precision::fp64).partial);
  const PrecisionRow& bf16 = row(r, Precision::bf16);
  EXPECT_EQ(bf16.status, RowStatus::measured);
  EXPECT_TRUE(bf16.partial);
  EXPECT_EQ(bf16.windows, 2);
  EXPECT_EQ(bf16.note, "the worker stopped before its result");
  EXPECT_EQ(row(r, Precision::fp8).status, RowStatus::not_run);
  EXPECT_EQ(r.stderr_tail.size(), 1u);
}

TEST(BurnAggregate, ACrashIsCalledACrash) {
  WorkerRun run = truncated_run("fp64");
  run.exit = ProcessExit{std::nullopt, SIGSEGV, false, 2};
  const TargetResult r = aggregate_target(h100_target(), run, nullptr, context());
  EXPECT_EQ(r.outcome, Outcome::failed);
  EXPECT_EQ(r.failure, "the worker crashed (killed by signal 11 (SIGSEGV))");
}

TEST(BurnAggregate, ATimeoutIsSaidSo) {
  WorkerRun run = truncated_run("fp64");
  run.exit = ProcessExit{std::nullopt, SIGTERM, true, 30};
  const TargetResult r = aggregate_target(h100_target(), run, nullptr, context());
  EXPECT_EQ(r.outcome, Outcome::failed);
  EXPECT_THAT(r.failure, HasSubstr("the worker timed out after 30 s"));
}

TEST(BurnAggregate, AnInterruptedWorkerKeepsItsPartialResults) {
  WorkerRun run = truncated_run("bf16");
  ASSERT_TRUE(add_line(run.stream,
                       R"({"v":1,"type":"gemm_result","precision":"bf16","n":8192,)"
                       R"("partial":true,"windows":2,"flop_per_second":{"median":7.6e14},)"
                       R"("verification":{"gemms_checked":1400,"mismatches":0,"nan_count":0,)"
                       R"("inf_count":0,"reference_tiles_checked":2,"reference_tiles_failed":0,)"
                       R"("ok":true},"fault_injected":false,"ok":true})",
                       9)
                  .ok());
  ASSERT_TRUE(add_line(run.stream,
                       R"({"v":1,"type":"done","ok":true,"interrupted":true,"exit_code":130})", 9)
                  .ok());
  run.exit = ProcessExit{130, std::nullopt, false, 9};
  AggregateContext c = context();
  c.interrupted = true;
  const TargetResult r = aggregate_target(h100_target(), run, nullptr, c);
  EXPECT_EQ(r.outcome, Outcome::interrupted);
  EXPECT_TRUE(r.failure.empty());
  const PrecisionRow& bf16 = row(r, Precision::bf16);
  EXPECT_TRUE(bf16.partial);
  EXPECT_TRUE(bf16.verified);
  EXPECT_EQ(row(r, Precision::fp8).note, "interrupted before it ran");

  // A worker killed after the interrupt (a second Ctrl-C) is interrupted too, not failed.
  run.exit = ProcessExit{std::nullopt, SIGINT, false, 9};
  EXPECT_EQ(aggregate_target(h100_target(), run, nullptr, c).outcome, Outcome::interrupted);
  c.interrupted = false;  // ... but killed by someone else, it failed
  EXPECT_EQ(aggregate_target(h100_target(), run, nullptr, c).outcome, Outcome::failed);
}

TEST(BurnAggregate, SkippedPrecisionsAreRowsWithTheReason) {
  WorkerRun run;
  ASSERT_TRUE(add_line(run.stream,
                       R"({"v":1,"type":"skipped","what":"fp8","code":"not_supported",)"
                       R"("reason":"fp8 needs compute capability 8.9 or newer"})",
                       1)
                  .ok());
  ASSERT_TRUE(add_line(run.stream,
                       R"({"v":1,"type":"skipped","what":"host_link","code":"out_of_memory",)"
                       R"("reason":"no pinned memory"})",
                       1)
                  .ok());
  ASSERT_TRUE(add_line(run.stream,
                       R"({"v":1,"type":"done","ok":true,"interrupted":false,"exit_code":0})", 2)
                  .ok());
  run.exit = ProcessExit{0, std::nullopt, false, 2};
  const TargetResult r = aggregate_target(h100_target(), run, nullptr, context({Precision::fp8}));
  EXPECT_EQ(r.outcome, Outcome::passed);
  EXPECT_EQ(r.gemm[0].status, RowStatus::skipped);
  EXPECT_EQ(r.gemm[0].note, "fp8 needs compute capability 8.9 or newer");
  ASSERT_EQ(r.skipped.size(), 1u);  // precisions are in their rows
  EXPECT_EQ(r.skipped[0].what, "host_link");
}

TEST(BurnAggregate, AWorkerErrorNamesItsCode) {
  WorkerRun run;
  ASSERT_TRUE(add_line(run.stream,
                       R"({"v":1,"type":"error","code":"gpu_lost","message":"an illegal memory )"
                       R"(access was encountered","precision":"tf32"})",
                       1)
                  .ok());
  run.exit = ProcessExit{5, std::nullopt, false, 2};
  const TargetResult r = aggregate_target(h100_target(), run, nullptr, context({Precision::tf32}));
  EXPECT_EQ(r.outcome, Outcome::failed);
  EXPECT_EQ(r.failure, "an illegal memory access was encountered (gpu_lost, worker exit code 5)");
  EXPECT_EQ(r.gemm[0].status, RowStatus::failed);
  Report report;
  report.targets = {r};
  EXPECT_EQ(exit_code(report), kExitGpuLost);
}

TEST(BurnAggregate, AWorkerThatNeverStartedFails) {
  WorkerRun run;
  run.start_status = Status(Code::not_found, "cannot run '/x/worker': no such file");
  const TargetResult r = aggregate_target(h100_target(), run, nullptr, context());
  EXPECT_EQ(r.outcome, Outcome::failed);
  EXPECT_EQ(r.failure, "the worker did not start: cannot run '/x/worker': no such file");
}

TEST(BurnAggregate, MigInstancesShareTheGpusPowerAndHaveTheirOwnGpm) {
  Target t = h100_target();
  t.mig = MigPlacement{2, 0, "MIG-2", "3g.40gb"};
  t.name = "NVIDIA H100 80GB HBM3 MIG 3g.40gb";
  t.sm_count = 60u;
  // The instance's view: its own GPM (tensor 50 % over the whole run), the GPU's power.
  TargetTelemetry g = telemetry();
  for (telemetry::GpuSample& s : g.samples) {
    s.gpm_interval_s.reset();
    s.values.set(telemetry::Metric::sm_activity, std::nullopt);
    s.values.set(telemetry::Metric::tensor_activity, std::nullopt);
  }
  g.samples.back().gpm_interval_s = 12;
  g.samples.back().values.set(telemetry::Metric::tensor_activity, 0.5);
  g.problems.push_back("power: permission_denied");
  AggregateContext c = context({Precision::bf16});
  c.targets_on_gpu = 2;
  const TargetResult r = aggregate_target(t, passed_run(), &g, c);
  const PrecisionRow& bf16 = r.gemm[0];
  EXPECT_NEAR(*bf16.power_average_w, 500, 1e-9);
  EXPECT_FALSE(bf16.energy_j);
  EXPECT_FALSE(bf16.flop_per_joule);
  EXPECT_DOUBLE_EQ(*bf16.tensor_activity, 0.5);
  EXPECT_FALSE(r.memory[0].fraction_of_peak);
  ASSERT_EQ(r.warnings.size(), 2u);
  EXPECT_THAT(r.warnings[0], HasSubstr("shared by 2 MIG instances"));
  EXPECT_EQ(r.warnings[1], "telemetry: power: permission_denied");
}

TEST(BurnAggregate, BadWorkerLinesBecomeAWarning) {
  WorkerRun run = passed_run();
  (void)add_line(run.stream, "Segmentation fault (core dumped)", 3);
  const TargetResult r = aggregate_target(h100_target(), run, nullptr, context());
  ASSERT_EQ(r.warnings.size(), 1u);
  EXPECT_THAT(r.warnings[0], HasSubstr("1 worker output line was not understood"));
}

// The worker's stream recorded on the H100 (bf16, 2 s, memory, host link up to 16 MiB).
TEST(BurnAggregate, TheRecordedH100StreamPasses) {
  WorkerRun run;
  run.stream = read_script(burn_fixture("h100_worker_recorded_2026-11-22.jsonl"));
  run.exit = ProcessExit{0, std::nullopt, false, 20};
  const TargetResult r = aggregate_target(h100_target(), run, nullptr, context({Precision::bf16}));
  EXPECT_EQ(r.outcome, Outcome::passed) << r.failure;
  EXPECT_TRUE(r.warnings.empty()) << r.warnings.front();
  const PrecisionRow& bf16 = r.gemm[0];
  EXPECT_EQ(bf16.status, RowStatus::measured);
  EXPECT_TRUE(bf16.verified);
  EXPECT_EQ(bf16.windows, 2);
  EXPECT_NEAR(*bf16.flop_per_second_median, 706.45e12, 0.5e12);
  EXPECT_NEAR(*bf16.fraction_of_peak, 706.45e12 / kBf16Peak, 0.001);
  EXPECT_EQ(r.memory.size(), 4u);
  EXPECT_FALSE(r.host_link.empty());
  EXPECT_EQ(r.overlap.size(), 2u);
}

TEST(BurnAggregate, MedianOfWindows) {
  EXPECT_DOUBLE_EQ(median({3, 1, 2}), 2);
  EXPECT_DOUBLE_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_DOUBLE_EQ(median({7}), 7);
}

TEST(BurnExitCode, WrongResultsComeFirstThenInterruptsThenFailures) {
  Report report;
  EXPECT_EQ(exit_code(report), kExitOk);
  TargetResult passed, failed, wrong, interrupted;
  passed.outcome = Outcome::passed;
  failed.outcome = Outcome::failed;
  failed.worker_exit_code = 2;  // a worker that refused our arguments: our bug, exit 6
  wrong.outcome = Outcome::verification_failed;
  interrupted.outcome = Outcome::interrupted;
  report.targets = {passed};
  EXPECT_EQ(exit_code(report), kExitOk);
  report.targets = {passed, failed};
  EXPECT_EQ(exit_code(report), kExitError);
  report.targets[1].worker_exit_code = 3;
  EXPECT_EQ(exit_code(report), kExitNoGpu);
  report.targets[1].worker_exit_code.reset();  // killed
  EXPECT_EQ(exit_code(report), kExitError);
  report.interrupted = true;
  EXPECT_EQ(exit_code(report), kExitInterrupted);
  report.targets.push_back(wrong);
  EXPECT_EQ(exit_code(report), kExitCheckFailed);
  report.interrupted = false;
  report.targets = {passed, interrupted};
  EXPECT_EQ(exit_code(report), kExitInterrupted);
}

}  // namespace
}  // namespace gpuscope::burn::detail
