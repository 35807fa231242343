// The worker's JSON-lines protocol: version pinned, field names, errors naming the device.
#include "capability/burn_json.h"

#include <gtest/gtest.h>

#include <limits>

namespace gpuscope::capability {
namespace {

DeviceInfo h100() {
  DeviceInfo d;
  d.name = "NVIDIA H100 80GB HBM3";
  d.uuid = "GPU-01234567-89ab-cdef-0123-456789abcdef";
  d.pci_bus_id = "0000:41:00.0";
  d.cc_major = 9;
  d.cc_minor = 0;
  d.sm_count = 132;
  d.l2_cache_bytes = 50ull << 20;
  return d;
}

TEST(BurnJson, ProtocolVersionIsPinned) {
  // Changing a field's meaning means bumping this, and the parent's parser with it.
  EXPECT_EQ(kBurnProtocolVersion, 1);
  const auto j = done_json(true, false, 0);
  EXPECT_EQ(j["v"], 1);
  EXPECT_EQ(j["type"], "done");
  EXPECT_EQ(j["exit_code"], 0);
}

TEST(BurnJson, Device) {
  const auto j = device_json(h100());
  EXPECT_EQ(j["type"], "device");
  EXPECT_EQ(j["compute_capability"], "9.0");
  EXPECT_EQ(j["sm_count"], 132);
  EXPECT_EQ(j["l2_cache_bytes"], 50ull << 20);
  EXPECT_TRUE(j["sm_clock_max_hz"].is_null());  // absent data is null, never 0
}

TEST(BurnJson, WindowCarriesSecondsFlopAndTflops) {
  GemmWindow w;
  w.index = 3;
  w.gemms = 700;
  w.flop = 700 * 1099511627776.0;
  w.gemm_seconds = 1.0;
  w.wall_seconds = 1.07;
  const auto j = gemm_window_json(Precision::bf16, w);
  EXPECT_EQ(j["type"], "gemm_window");
  EXPECT_EQ(j["precision"], "bf16");
  EXPECT_EQ(j["window"], 3);
  EXPECT_DOUBLE_EQ(j["seconds"].get<double>(), 1.0);
  EXPECT_NEAR(j["tflops"].get<double>(), 769.658, 1e-3);
  EXPECT_DOUBLE_EQ(j["flop"].get<double>(), w.flop);
}

TEST(BurnJson, ResultSummarizesAndVerifies) {
  GemmBurnResult r;
  r.precision = Precision::fp8;
  r.n = 8192;
  r.flop_per_second = summarize({1.40e15, 1.44e15, 1.42e15});
  r.windows.resize(3);
  r.algorithm.layout = "TN";
  r.verification.gemms_checked = 4000;
  const auto ok = gemm_result_json(r);
  EXPECT_EQ(ok["type"], "gemm_result");
  EXPECT_EQ(ok["precision"], "fp8");
  EXPECT_EQ(ok["windows"], 3);
  EXPECT_DOUBLE_EQ(ok["tflops"]["median"].get<double>(), 1420.0);
  EXPECT_DOUBLE_EQ(ok["tflops"]["max"].get<double>(), 1440.0);
  EXPECT_EQ(ok["algorithm"]["layout"], "TN");
  EXPECT_EQ(ok["verification"]["ok"], true);
  EXPECT_EQ(ok["ok"], true);
  EXPECT_EQ(ok["partial"], false);

  r.verification.mismatches = 1;
  r.fault_injected = true;
  const auto bad = gemm_result_json(r);
  EXPECT_EQ(bad["verification"]["mismatches"], 1);
  EXPECT_EQ(bad["ok"], false);
  EXPECT_EQ(bad["fault_injected"], true);
}

TEST(BurnJson, ErrorNamesTheDevice) {
  const DeviceInfo d = h100();
  const auto j = error_json("verification_failed", "1 mismatching element", &d, Precision::bf16);
  EXPECT_EQ(j["type"], "error");
  EXPECT_EQ(j["code"], "verification_failed");
  EXPECT_EQ(j["device"]["uuid"], d.uuid);
  EXPECT_EQ(j["device"]["label"],
            "NVIDIA H100 80GB HBM3 (GPU-01234567-89ab-cdef-0123-456789abcdef, 0000:41:00.0)");
  EXPECT_EQ(j["precision"], "bf16");
  const auto no_device = error_json("no_device", "none", nullptr, std::nullopt);
  EXPECT_FALSE(no_device.contains("device"));
  EXPECT_FALSE(no_device.contains("precision"));
}

TEST(BurnJson, SkippedMemoryLinkOverlap) {
  const auto s = skipped_json("fp8", Status(Code::not_supported, "needs 8.9"));
  EXPECT_EQ(s["type"], "skipped");
  EXPECT_EQ(s["what"], "fp8");
  EXPECT_EQ(s["code"], "not_supported");
  EXPECT_EQ(s["reason"], "needs 8.9");

  MemoryBandwidthResult m;
  m.kernel = MemoryKernel::copy;
  m.buffer_bytes = m.bytes_read = m.bytes_written = 1ull << 30;
  m.median_seconds = 1e-3;
  const auto mj = memory_bw_json(m);
  EXPECT_EQ(mj["kernel"], "copy");
  EXPECT_EQ(mj["bytes_counted"], 2ull << 30);

  HostLinkResult h;
  h.direction = CopyDirection::bidirectional;
  h.memory = HostMemory::pageable;
  h.size_bytes = 4096;
  h.bytes_moved = 8192;
  h.timing = "host_clock";
  const auto hj = host_link_json(h);
  EXPECT_EQ(hj["direction"], "bidirectional");
  EXPECT_EQ(hj["memory"], "pageable");
  EXPECT_EQ(hj["timing"], "host_clock");

  OverlapResult o;
  o.memory = HostMemory::pinned;
  o.copy_seconds = o.compute_seconds = o.both_seconds = 1;
  EXPECT_DOUBLE_EQ(overlap_json(o)["efficiency"].get<double>(), 1.0);
}

TEST(BurnJson, LinesAreSingleLine) {
  GemmBurnResult r;
  r.verification.reference_max_error = std::numeric_limits<double>::infinity();
  const std::string line = gemm_result_json(r).dump();
  EXPECT_EQ(line.find('\n'), std::string::npos);
  EXPECT_NE(line.find("\"reference_max_error\":null"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::capability

namespace gpuscope::capability {
namespace {

TEST(Interconnect, BusBandwidthIsNcclTestsDefinition) {
  // busbw = algbw * 2(n-1)/n: 2 GPUs carry the buffer once, 8 GPUs 1.75 times.
  EXPECT_DOUBLE_EQ(all_reduce_bus_bandwidth(100e9, 2), 100e9);
  EXPECT_DOUBLE_EQ(all_reduce_bus_bandwidth(100e9, 8), 175e9);
  EXPECT_DOUBLE_EQ(all_reduce_bus_bandwidth(100e9, 1), 0);
}

TEST(Interconnect, LinesCarryBandwidths) {
  AllReduceResult a;
  a.gpus = 2;
  a.bytes = 1 << 20;
  a.seconds = 1e-5;
  a.algorithm_bandwidth = 1.048576e11;
  a.bus_bandwidth = 1.048576e11;
  const BurnJson j = all_reduce_json(a);
  EXPECT_EQ(j["type"], "all_reduce");
  EXPECT_EQ(j["gpus"], 2);
  EXPECT_DOUBLE_EQ(j["bus_bandwidth"].get<double>(), 1.048576e11);
  PeerCopyResult p;
  p.source = 1;
  p.destination = 0;
  p.peer_access = true;
  p.bandwidth = 3e11;
  const BurnJson k = peer_copy_json(p);
  EXPECT_EQ(k["type"], "peer_copy");
  EXPECT_EQ(k["source"], 1);
  EXPECT_TRUE(k["peer_access"].get<bool>());
  EXPECT_DOUBLE_EQ(k["bytes_per_second"].get<double>(), 3e11);
}

}  // namespace
}  // namespace gpuscope::capability
