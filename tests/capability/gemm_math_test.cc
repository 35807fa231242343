// FLOP counting, window statistics, overlap efficiency, the per-precision GEMM table and the
// memory plan.
#include <gtest/gtest.h>

#include "capability/gemm_plan.h"
#include "capability/gemm_spec.h"
#include "gpuscope/capability.h"

namespace gpuscope::capability {
namespace {

TEST(GemmFlop, TwoNCubed) {
  EXPECT_EQ(gemm_flop(8192, 8192, 8192), 1099511627776.0);
  EXPECT_EQ(gemm_flop(2, 3, 4), 48.0);
}

TEST(Summarize, OddEvenAndEmpty) {
  const WindowSummary odd = summarize({5, 1, 3});
  EXPECT_EQ(odd.count, 3);
  EXPECT_EQ(odd.median, 3);
  EXPECT_EQ(odd.min, 1);
  EXPECT_EQ(odd.max, 5);
  EXPECT_EQ(odd.mean, 3);
  const WindowSummary even = summarize({4, 1, 3, 100});
  EXPECT_EQ(even.median, 3.5);
  EXPECT_EQ(even.max, 100);
  const WindowSummary none = summarize({});
  EXPECT_EQ(none.count, 0);
  EXPECT_EQ(none.median, 0);
}

TEST(GemmWindowRate, UsesGemmTimeNotWall) {
  GemmWindow w;
  w.flop = 2e12;
  w.gemm_seconds = 2;
  w.wall_seconds = 4;
  EXPECT_EQ(w.flop_per_second(), 1e12);
  EXPECT_EQ(GemmWindow{}.flop_per_second(), 0);
}

TEST(OverlapEfficiency, FullNoneAndPartial) {
  OverlapResult r;
  r.copy_seconds = 1;
  r.compute_seconds = 1;
  r.both_seconds = 1;
  EXPECT_DOUBLE_EQ(r.efficiency(), 1.0);
  r.both_seconds = 2;
  EXPECT_DOUBLE_EQ(r.efficiency(), 0.0);
  r.both_seconds = 1.5;
  EXPECT_DOUBLE_EQ(r.efficiency(), 0.5);
}

TEST(BandwidthResults, CountBytesAsDocumented) {
  MemoryBandwidthResult copy;
  copy.kernel = MemoryKernel::copy;
  copy.bytes_read = copy.bytes_written = 1000;
  copy.median_seconds = 1e-6;
  EXPECT_EQ(copy.bytes_counted(), 2000u);
  EXPECT_DOUBLE_EQ(copy.bytes_per_second(), 2e9);
  HostLinkResult link;
  link.bytes_moved = 2 << 20;
  link.median_seconds = 1e-3;
  EXPECT_DOUBLE_EQ(link.bytes_per_second(), 2097152e3);
}

using detail::ElementType;
using detail::gemm_spec;

TEST(GemmSpec, TypesAndLayouts) {
  EXPECT_EQ(gemm_spec(Precision::fp64).input, ElementType::f64);
  EXPECT_EQ(gemm_spec(Precision::tf32).input, ElementType::f32);
  EXPECT_EQ(gemm_spec(Precision::tf32).compute_type, "CUBLAS_COMPUTE_32F_FAST_TF32");
  EXPECT_EQ(gemm_spec(Precision::fp32).compute_type, "CUBLAS_COMPUTE_32F");
  EXPECT_EQ(gemm_spec(Precision::fp8).input, ElementType::e4m3);
  EXPECT_EQ(gemm_spec(Precision::fp8).output, ElementType::bf16);
  EXPECT_TRUE(gemm_spec(Precision::fp8).transpose_a);
  EXPECT_NE(gemm_spec(Precision::fp8).a_scale, 1.0f);
  EXPECT_EQ(gemm_spec(Precision::int8).output, ElementType::i32);
  EXPECT_TRUE(gemm_spec(Precision::int8).transpose_a);
  EXPECT_FALSE(gemm_spec(Precision::bf16).transpose_a);
  for (Precision p : kAllPrecisions) EXPECT_EQ(gemm_spec(p).precision, p);
}

TEST(GemmSpec, Int8RangeCannotOverflow) {
  const auto& spec = gemm_spec(Precision::int8);
  for (int n : {64, 8192, 65536, 1 << 20}) {
    const double r = detail::input_range(spec, n);
    EXPECT_GE(r, 1.0);
    EXPECT_LE(r, 127.0);
    EXPECT_LT(static_cast<double>(n) * r * r, 2147483647.0) << n;
  }
  EXPECT_EQ(detail::input_range(spec, 8192), 127.0);
}

TEST(GemmSpec, Fp8NeedsAdaOrHopper) {
  EXPECT_FALSE(detail::precision_support_for(Precision::fp8, 8, 0).supported);
  EXPECT_FALSE(detail::precision_support_for(Precision::fp8, 8, 6).supported);
  EXPECT_NE(detail::precision_support_for(Precision::fp8, 8, 6).reason.find("8.9"),
            std::string::npos);
  EXPECT_TRUE(detail::precision_support_for(Precision::fp8, 8, 9).supported);
  EXPECT_TRUE(detail::precision_support_for(Precision::fp8, 9, 0).supported);
  EXPECT_TRUE(detail::precision_support_for(Precision::bf16, 8, 0).supported);
  EXPECT_FALSE(detail::precision_support_for(Precision::bf16, 7, 5).supported);
}

TEST(GemmPlan, RotatesEnoughInputsToDefeatL2) {
  const std::uint64_t l2 = 50ull << 20;
  auto plan = detail::plan_gemm_memory(gemm_spec(Precision::bf16), 8192, l2, 80ull << 30, 0);
  ASSERT_TRUE(plan.ok());
  EXPECT_EQ(plan->operand_bytes, 128ull << 20);
  EXPECT_EQ(plan->input_sets, 2);  // 512 MiB of inputs > 3 x 50 MiB
  EXPECT_EQ(plan->work_slots, 1);  // 1.1e12 FLOP per GEMM already
  auto small = detail::plan_gemm_memory(gemm_spec(Precision::bf16), 1024, l2, 80ull << 30, 0);
  ASSERT_TRUE(small.ok());
  EXPECT_GE(static_cast<double>(small->input_sets) * 2 * static_cast<double>(small->operand_bytes),
            3.0 * static_cast<double>(l2));
  EXPECT_EQ(small->work_slots, 16);
}

TEST(GemmPlan, ShrinksToTheBudgetThenFails) {
  const auto& spec = gemm_spec(Precision::fp64);  // 512 MiB per matrix at n = 8192
  const std::uint64_t l2 = 50ull << 20;
  auto roomy = detail::plan_gemm_memory(spec, 8192, l2, 64ull << 30, 32ull << 20);
  ASSERT_TRUE(roomy.ok());
  EXPECT_EQ(roomy->input_sets, 2);
  EXPECT_LE(roomy->total_bytes, 64ull << 30);
  auto tight = detail::plan_gemm_memory(spec, 8192, l2, 3ull << 30, 32ull << 20);
  ASSERT_TRUE(tight.ok());
  EXPECT_EQ(tight->input_sets, 1);
  EXPECT_EQ(tight->work_slots, 1);
  EXPECT_EQ(tight->total_bytes, 4 * (512ull << 20) + (32ull << 20));
  auto none = detail::plan_gemm_memory(spec, 8192, l2, 2ull << 30, 32ull << 20);
  EXPECT_EQ(none.code(), Code::out_of_memory);
}

}  // namespace
}  // namespace gpuscope::capability
