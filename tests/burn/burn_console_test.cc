// The console tables and the progress line of `gpuscope burn`.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "gpuscope/burn_report.h"
#include "sample_report.h"

namespace gpuscope {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

std::string printed(const burn::Report& report) {
  std::ostringstream out;
  print_burn(report, out);
  return out.str();
}

TEST(BurnConsole, PrintsATablePerDeviceWithEveryColumn) {
  const std::string out = printed(burn::testing::sample_report());
  EXPECT_THAT(out,
              HasSubstr("GPU 0  NVIDIA H100 80GB HBM3  GPU-3f6b2c1d-8a4e-4f1b-9c2d-5e7a8b9c0d1e"
                        "  [passed]"));
  EXPECT_THAT(out, HasSubstr("compute capability 9.0, 132 SMs, 79.1 GiB; peak: H100 SXM5 80GB"));
  EXPECT_THAT(out, HasSubstr("precision  TFLOP/s  % of peak  errors  max °C  throttled (s)"));
  EXPECT_THAT(out, HasSubstr("avg W  TFLOP/J  SM / tensor active"));
  // TFLOP/s, % of peak, errors, max °C, throttle by reason, avg W, TFLOP/J, GPM activity.
  EXPECT_THAT(out, HasSubstr("bf16       767.2    77.5%      0       61      power cap 1.2  "
                             "650    1.150    98% / 88%"));
  EXPECT_THAT(out, HasSubstr("skipped: no cuBLASLt kernel for this layout"));
  EXPECT_THAT(out, HasSubstr("not run: interrupted before it ran"));
  EXPECT_THAT(out, Not(HasSubstr(" \n")));  // no trailing blanks
}

// int8 counts integer operations: once it ran, both rate headers say its unit.
TEST(BurnConsole, AMeasuredInt8RowNamesItsIntegerUnits) {
  burn::Report report = burn::testing::sample_report();
  burn::PrecisionRow& int8 = report.targets[0].gemm.back();
  ASSERT_EQ(int8.precision, Precision::int8);
  int8.status = burn::RowStatus::measured;
  int8.flop_per_second_median = 1.3465e15;
  int8.flop_per_joule = 2.1e12;
  const std::string out = printed(report);
  EXPECT_THAT(out, HasSubstr("TFLOP/s (int8: TOP/s)"));
  EXPECT_THAT(out, HasSubstr("TFLOP/J (int8: TOP/J)"));
}

TEST(BurnConsole, PrintsMemoryAndHostLinkTables) {
  const std::string out = printed(burn::testing::sample_report());
  EXPECT_THAT(out, HasSubstr("Device memory bandwidth (bytes read + bytes written, both counted)"));
  EXPECT_THAT(out, HasSubstr("copy    16 GiB  3014  90.0%"));
  EXPECT_THAT(out, HasSubstr("memory    direction  1 GiB"));
  EXPECT_THAT(out, HasSubstr("pinned    h2d        54.7"));
  EXPECT_THAT(out, HasSubstr("pageable  h2d        7.1"));
  EXPECT_THAT(out,
              HasSubstr("overlap efficiency (256 MiB copies; 1 = copy hidden behind "
                        "compute, 0 = serialized, below 0 = slower than serialized): pinned 0.98"));
  EXPECT_THAT(out, HasSubstr("skipped host_link: pinned buffer of 1 GiB refused"));
  EXPECT_THAT(out, HasSubstr("note: int8: span too short"));
}

TEST(BurnConsole, NamesFailingDevicesAndTheVerdict) {
  const std::string out = printed(burn::testing::sample_report());
  EXPECT_THAT(out, HasSubstr("GPU 1 MIG 3g.20gb (GI 1 CI 0)  NVIDIA A100-SXM4-40GB MIG 3g.20gb  "
                             "MIG-1f2e3d4c-5b6a-5978-8695-a4b3c2d1e0f9  [FAILED: wrong results]"));
  EXPECT_THAT(out, HasSubstr("WRONG RESULTS"));
  EXPECT_THAT(out, HasSubstr("[FAILED]\n  no peak for a MIG instance without SM counts\n  ERROR: "
                             "the worker crashed (killed by signal 11 (SIGSEGV))"));
  EXPECT_THAT(out, HasSubstr("Result: FAILED\n  GPU 1 MIG 3g.20gb (GI 1 CI 0) (NVIDIA "
                             "A100-SXM4-40GB MIG 3g.20gb, MIG-1f2e3d4c-5b6a-5978-8695-a4b3c2d1e0f9)"
                             ": bf16 GEMM verification failed"));
}

TEST(BurnConsole, SaysWhenTheRunPassedOrWasInterrupted) {
  burn::Report report = burn::testing::sample_report();
  report.targets.resize(1);
  EXPECT_THAT(printed(report), HasSubstr("Result: passed (1 device, 42 s)"));
  report.interrupted = true;
  EXPECT_THAT(printed(report), HasSubstr("Result: interrupted; the numbers above are what was "
                                         "measured before the stop"));
}

burn::Progress progress() {
  burn::Progress p;
  p.elapsed_seconds = 12.4;
  p.targets.push_back({"GPU 0", "bf16", 2, 5, 3.1, 0.31, false, false});
  p.targets.push_back({"GPU 1", "starting", 0, 5, 0, 0, false, false});
  p.targets.push_back({"GPU 2", "done", 5, 5, 0, 0, true, true});
  return p;
}

TEST(BurnProgress, FormatsOneLine) {
  EXPECT_EQ(format_progress(progress()),
            "burn 12 s  GPU 0 bf16 2/5 3 s 31%  |  GPU 1 starting  |  GPU 2 ended (failed)");
  burn::Progress stopping = progress();
  stopping.interrupted = true;
  EXPECT_THAT(format_progress(stopping), HasSubstr("burn 12 s (stopping: Ctrl-C)"));
}

TEST(BurnProgress, OnATerminalRewritesOneLine) {
  std::ostringstream out;
  BurnProgressPrinter printer(out, /*terminal=*/true, /*columns=*/30);
  printer.update(progress());
  printer.update(progress());
  printer.finish();
  EXPECT_EQ(out.str(),
            "\rburn 12 s  GPU 0 bf16 2/5 3 s\x1b[K\rburn 12 s  GPU 0 bf16 2/5 3 s\x1b[K\r\x1b[K");
}

TEST(BurnProgress, ElsewherePrintsALineWhenAPhaseChangesOrPeriodically) {
  std::ostringstream out;
  BurnProgressPrinter printer(out, /*terminal=*/false, 0, /*period_seconds=*/10);
  burn::Progress p = progress();
  printer.update(p);
  p.elapsed_seconds = 13;
  printer.update(p);  // same phases, 0.6 s later: nothing
  p.targets[0].phase = "fp8";
  printer.update(p);  // a new phase
  p.elapsed_seconds = 24;
  printer.update(p);  // 11 s later
  printer.finish();
  const std::string text = out.str();
  EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 3);
  EXPECT_THAT(text, HasSubstr("gpuscope: burn 12 s  GPU 0 bf16"));
  EXPECT_THAT(text, HasSubstr("gpuscope: burn 13 s  GPU 0 fp8"));
  EXPECT_THAT(text, Not(HasSubstr("\r")));
}

}  // namespace
}  // namespace gpuscope
