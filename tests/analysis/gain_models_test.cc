#include "analysis/gain_models.h"

#include <gtest/gtest.h>

namespace gpuscope::analysis::detail {
namespace {

TEST(GainModels, TimeSavedIsStepOverWhatRemains) {
  GainRange g = time_saved(0.010, 0.002, 0.005);
  EXPECT_DOUBLE_EQ(g.low, 0.010 / 0.008);
  EXPECT_DOUBLE_EQ(g.high, 2.0);
  // Never more than 95 % of a step saved, never a slow-down.
  g = time_saved(0.010, -1, 1);
  EXPECT_DOUBLE_EQ(g.low, 1.0);
  EXPECT_NEAR(g.high, 20.0, 1e-9);
  g = time_saved(0, 1, 1);
  EXPECT_DOUBLE_EQ(g.high, 1.0);
}

TEST(GainModels, TensorCoresFollowAmdahlWithTheRatesPerPrecision) {
  // H100 SXM datasheet: fp32 66.9, tf32 494.7, bf16 989.4 TFLOP/s. 70 % of a 10 ms step in fp32
  // GEMMs: TF32 at half its ratio (3.7x) saves 7 (1 - 1/3.7) ms, bf16 (14.8x) 7 (1 - 1/14.8) ms.
  GainRange g = tensor_core_gain(0.010, 0.007, 0, 66.9e12, 494.7e12, 989.4e12);
  EXPECT_NEAR(g.low, 0.010 / (0.010 - 0.007 * (1 - 66.9 / (0.5 * 494.7))), 1e-9);
  EXPECT_NEAR(g.high, 0.010 / (0.010 - 0.007 * (1 - 66.9 / 989.4)), 1e-9);
  EXPECT_GT(g.low, 2.0);
  EXPECT_LT(g.high, 3.0);
  // AMP's bf16 activations halve the memory-bound kernels' time too (the high end only).
  GainRange amp = tensor_core_gain(0.010, 0.007, 0.002, 66.9e12, 494.7e12, 989.4e12);
  EXPECT_DOUBLE_EQ(amp.low, g.low);
  EXPECT_NEAR(amp.high, 0.010 / (0.010 - 0.007 * (1 - 66.9 / 989.4) - 0.001), 1e-9);
  // A GPU whose tensor path is no faster gains nothing.
  g = tensor_core_gain(0.010, 0.007, 0, 1e12, 1e12, 1e12);
  EXPECT_DOUBLE_EQ(g.low, 1.0);
  EXPECT_DOUBLE_EQ(g.high, 1.0);
}

TEST(GainModels, ClocksGainOnlyInTheBusyShareAtTheLowEnd) {
  GainRange g = clock_gain(1500e6, 1980e6, 0.5);
  EXPECT_DOUBLE_EQ(g.high, 1.32);
  EXPECT_DOUBLE_EQ(g.low, 1.16);
  g = clock_gain(1980e6, 1980e6, 1.0);
  EXPECT_DOUBLE_EQ(g.high, 1.0);
}

TEST(GainModels, BatchGainIsCappedByMemoryAndBySmActivity) {
  GainRange g = batch_gain(8, 0.25);  // 4x before the SMs are full
  EXPECT_DOUBLE_EQ(g.high, 4.0);
  EXPECT_DOUBLE_EQ(g.low, 1.75);
  g = batch_gain(1.5, 0.1);  // memory allows only 1.5x
  EXPECT_DOUBLE_EQ(g.high, 1.5);
}

TEST(GainModels, FusedOptimizerSavesTheChainsSpanLessTheFusedKernel) {
  // 4 ms of chain on the GPU, 2 ms of it kernels: fused takes 0.5-1 ms.
  GainRange g = fused_optimizer_gain(0.020, 0.004, 0.002);
  EXPECT_DOUBLE_EQ(g.low, 0.020 / 0.017);
  EXPECT_DOUBLE_EQ(g.high, 0.020 / 0.0165);
}

}  // namespace
}  // namespace gpuscope::analysis::detail
