// burn's engine on a real GPU (label gpu): every precision verifies clean at a small size, an
// injected fault is caught, memory and host-link measurements return sane numbers. Each test
// skips itself when no CUDA device is visible.
#include <gtest/gtest.h>

#include "gpuscope/capability.h"

namespace gpuscope::capability {
namespace {

bool have_device() {
  return query_device().ok();
}

GemmBurnOptions small_burn(Precision p) {
  GemmBurnOptions o;
  o.precision = p;
  o.n = 1024;
  o.duration_seconds = 0.6;
  o.window_seconds = 0.2;
  o.reference_check_interval_seconds = 0.2;
  o.algorithm_candidates = 4;
  return o;
}

TEST(CapabilityGpu, EveryPrecisionVerifiesClean) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  const DeviceInfo device = *query_device();
  for (const PrecisionSupport& s : precision_support(device)) {
    SCOPED_TRACE(std::string(precision_name(s.precision)));
    if (!s.supported) continue;
    Result<GemmBurnResult> r = run_gemm_burn(small_burn(s.precision));
    ASSERT_TRUE(r.ok()) << r.status().to_string();
    EXPECT_GE(r->windows.size(), 2u);
    EXPECT_GT(r->flop_per_second.median, 1e12);
    EXPECT_GT(r->verification.gemms_checked, 0u);
    EXPECT_GE(r->verification.reference_tiles_checked, 6);
    EXPECT_TRUE(r->verification.ok())
        << "mismatches " << r->verification.mismatches << " nan " << r->verification.nan_count
        << " inf " << r->verification.inf_count << " tiles failed "
        << r->verification.reference_tiles_failed << " max error "
        << r->verification.reference_max_error;
    EXPECT_FALSE(r->partial);
  }
}

TEST(CapabilityGpu, InjectedFaultIsDetected) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  GemmBurnOptions o = small_burn(Precision::bf16);
  o.inject_fault_after_seconds = 0.1;
  Result<GemmBurnResult> r = run_gemm_burn(o);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_TRUE(r->fault_injected);
  EXPECT_EQ(r->verification.mismatches, 1u);
  EXPECT_FALSE(r->verification.ok());
}

TEST(CapabilityGpu, StopRequestMarksPartial) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  GemmBurnOptions o = small_burn(Precision::fp16);
  int windows = 0;
  o.on_window = [&](const GemmWindow&) { ++windows; };
  o.should_stop = [&] { return windows >= 1; };
  Result<GemmBurnResult> r = run_gemm_burn(o);
  ASSERT_TRUE(r.ok()) << r.status().to_string();
  EXPECT_EQ(r->windows.size(), 1u);
  EXPECT_TRUE(r->partial);
}

TEST(CapabilityGpu, MemoryAndHostLink) {
  if (!have_device()) GTEST_SKIP() << "no CUDA device";
  MemoryBandwidthOptions m;
  m.buffer_bytes = 256ull << 20;
  m.repeats = 5;
  Result<std::vector<MemoryBandwidthResult>> bw = measure_memory_bandwidth(m);
  ASSERT_TRUE(bw.ok()) << bw.status().to_string();
  ASSERT_EQ(bw->size(), 4u);
  for (const auto& r : *bw) EXPECT_GT(r.bytes_per_second(), 1e11);

  HostLinkOptions h;
  h.max_bytes = 16ull << 20;
  Result<std::vector<HostLinkResult>> link = measure_host_link(h);
  ASSERT_TRUE(link.ok()) << link.status().to_string();
  EXPECT_EQ(link->size(), 2u * 3u * 7u);  // pinned/pageable x 3 directions x 4 KiB..16 MiB
  for (const auto& r : *link) EXPECT_GT(r.bytes_per_second(), 0);

  OverlapOptions o;
  o.copy_bytes = 64ull << 20;
  o.repeats = 3;
  Result<std::vector<OverlapResult>> overlap = measure_copy_compute_overlap(o);
  ASSERT_TRUE(overlap.ok()) << overlap.status().to_string();
  ASSERT_EQ(overlap->size(), 2u);
  EXPECT_GT((*overlap)[0].efficiency(), 0.5);  // pinned overlaps
}

}  // namespace
}  // namespace gpuscope::capability
