// The CUPTI side's pieces that need no GPU: the bounded buffer pool, which API calls get a
// record, and the settings that choose how the window records.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <string>

#include "inject/api_calls.h"
#include "inject/buffer_pool.h"
#include "inject/config.h"

namespace gpuscope::inject {
namespace {

TEST(BufferPool, AFloodOfRecordsNeverHoldsMoreThanTheBound) {
  constexpr size_t kBytes = 64 * 1024, kMax = 4;
  BufferPool pool(kBytes, kMax, /*kept_free=*/2);
  // CUPTI asks for buffers much faster than anyone formats them: past the bound it gets none.
  size_t lent = 0, refused = 0;
  for (int i = 0; i < 10'000; ++i) {
    uint8_t* buffer = pool.acquire();
    if (buffer == nullptr) {
      ++refused;
      continue;
    }
    ++lent;
    std::memset(buffer, 0xab, kBytes);
    pool.fill(buffer, kBytes);
  }
  EXPECT_EQ(lent, kMax);
  EXPECT_EQ(refused, 10'000u - kMax);
  EXPECT_EQ(pool.refused(), refused);
  EXPECT_LE(pool.peak_held_bytes(), kBytes * kMax);
  EXPECT_TRUE(pool.wants_draining());
  // Formatting them frees the pool again; the memory kept is at most kept_free buffers.
  const auto filled = pool.take_filled();
  ASSERT_EQ(filled.size(), kMax);
  EXPECT_EQ(filled[0].valid_bytes, kBytes);
  for (const auto& f : filled) pool.release(f.buffer);
  EXPECT_FALSE(pool.wants_draining());
  EXPECT_EQ(pool.held_bytes(), 2 * kBytes);
  uint8_t* again = pool.acquire();
  EXPECT_NE(again, nullptr);
  pool.release(again);  // a lent buffer is CUPTI's: the pool frees only what it holds
}

TEST(BufferPool, EveryBufferHandedOutIsZeroedNewOrReused) {
  // CUPTI is told the buffers come zeroed (so it does not zero them on the program's thread).
  constexpr size_t kBytes = 4096;
  BufferPool pool(kBytes, 2, /*kept_free=*/1);
  const auto all_zero = [&](const uint8_t* buffer) {
    for (size_t i = 0; i < kBytes; ++i) {
      if (buffer[i] != 0) return false;
    }
    return true;
  };
  uint8_t* first = pool.acquire();
  ASSERT_NE(first, nullptr);
  EXPECT_TRUE(all_zero(first));
  std::memset(first, 0xab, kBytes);
  pool.fill(first, kBytes);
  for (const auto& f : pool.take_filled()) pool.release(f.buffer);
  uint8_t* reused = pool.acquire();
  ASSERT_EQ(reused, first);  // the kept one comes back
  EXPECT_TRUE(all_zero(reused));
  pool.release(reused);
}

TEST(BufferPool, FilledBuffersWaitUntilHalfThePoolIsTaken) {
  BufferPool pool(1024, 8, 2);
  for (int i = 0; i < 3; ++i) pool.fill(pool.acquire(), 100);
  EXPECT_FALSE(pool.wants_draining());
  pool.fill(pool.acquire(), 2000);  // CUPTI never says more than the buffer holds
  EXPECT_TRUE(pool.wants_draining());
  const auto filled = pool.take_filled();
  ASSERT_EQ(filled.size(), 4u);
  EXPECT_EQ(filled[3].valid_bytes, 1024u);
  EXPECT_TRUE(pool.take_filled().empty());
  for (const auto& f : filled) pool.release(f.buffer);
}

TEST(ApiCalls, RecordsLaunchesCopiesSyncsAndAllocationsOnly) {
  for (const char* name : {"cudaLaunchKernel_v7000",
                           "cudaLaunchKernelExC_v11060",
                           "cudaGraphLaunch_v10000",
                           "cuLaunchKernel",
                           "cuLaunchKernelEx",
                           "cudaMemcpyAsync_v3020",
                           "cuMemcpyHtoDAsync_v2",
                           "cudaMemsetAsync_v3020",
                           "cuMemsetD32Async",
                           "cudaStreamSynchronize_v3020",
                           "cudaDeviceSynchronize_v3020",
                           "cuCtxSynchronize",
                           "cuEventSynchronize",
                           "cudaStreamWaitEvent_v3020",
                           "cudaMalloc_v3020",
                           "cudaMallocHost_v3020",
                           "cuMemAlloc_v2",
                           "cudaFree_v3020",
                           "cuMemFreeAsync",
                           "cudaHostAlloc_v3020",
                           "cudaHostRegister_v4000"}) {
    EXPECT_TRUE(api_call_recorded(name)) << name;
  }
  for (const char* name :
       {"cudaGetDevice_v3020", "cudaStreamGetCaptureInfo_v2_v11030", "cudaGetLastError_v3020",
        "cudaEventRecord_v3020", "cuCtxGetCurrent", "cuKernelGetAttribute",
        "cuDevicePrimaryCtxGetState", "cudaStreamIsCapturing_v10000", "cudaEventQuery_v3020",
        "cudaHostUnregister_v4000", "", "Launch"}) {
    EXPECT_FALSE(api_call_recorded(name)) << name;
  }
}

Config config_of(std::map<std::string, std::string> values) {
  static std::map<std::string, std::string> env;
  env = std::move(values);
  return read_config([](const char* name) -> const char* {
    const auto it = env.find(name);
    return it == env.end() ? nullptr : it->second.c_str();
  });
}

TEST(InjectConfig, WindowRecordingDefaultsToSelectedCallsDeferredAndTornDown) {
  const Config config = config_of({{"GPUSCOPE_TRACE_DIR", "/tmp/x"}});
  EXPECT_FALSE(config.api_all);
  EXPECT_TRUE(config.defer);
  EXPECT_TRUE(config.teardown);
  EXPECT_EQ(config.gpu_wait_s, 30.0);
  EXPECT_FALSE(config.cupti_clock);
  EXPECT_TRUE(config.errors.empty());
}

TEST(InjectConfig, CuptiMayKeepItsOwnClock) {
  EXPECT_TRUE(config_of({{"GPUSCOPE_TRACE_CUPTI_CLOCK", "1"}}).cupti_clock);
  EXPECT_FALSE(config_of({{"GPUSCOPE_TRACE_CUPTI_CLOCK", "0"}}).cupti_clock);
}

TEST(InjectConfig, ActivityBuffersComeZeroedUnlessCuptiIsToZeroThem) {
  EXPECT_TRUE(config_of({}).zeroed_buffers);
  EXPECT_FALSE(config_of({{"GPUSCOPE_TRACE_CUPTI_ZEROED_BUFFERS", "0"}}).zeroed_buffers);
}

TEST(InjectConfig, CuptisFlushPeriodAndDeviceBufferAreItsOwnUnlessSet) {
  const Config defaults = config_of({});
  EXPECT_EQ(defaults.cupti_flush_period_ms, 0u);
  EXPECT_EQ(defaults.cupti_device_buffer_bytes, 0u);
  const Config set = config_of(
      {{"GPUSCOPE_TRACE_CUPTI_FLUSH_MS", "100"}, {"GPUSCOPE_TRACE_CUPTI_DEVICE_BUFFER_MB", "32"}});
  EXPECT_EQ(set.cupti_flush_period_ms, 100u);
  EXPECT_EQ(set.cupti_device_buffer_bytes, 32u << 20);
  const Config bad = config_of({{"GPUSCOPE_TRACE_CUPTI_DEVICE_BUFFER_MB", "lots"}});
  EXPECT_EQ(bad.cupti_device_buffer_bytes, 0u);
  EXPECT_EQ(bad.errors.size(), 1u);
}

TEST(InjectConfig, TheWaitForTheGpuAfterTheWindowCanBeSet) {
  EXPECT_EQ(config_of({{"GPUSCOPE_TRACE_GPU_WAIT_S", "2.5"}}).gpu_wait_s, 2.5);
  const Config bad = config_of({{"GPUSCOPE_TRACE_GPU_WAIT_S", "soon"}});
  EXPECT_EQ(bad.gpu_wait_s, 30.0);
  EXPECT_EQ(bad.errors.size(), 1u);
}

TEST(InjectConfig, TheOldWaysCanBeAskedFor) {
  const Config config = config_of({{"GPUSCOPE_TRACE_API", "all"},
                                   {"GPUSCOPE_TRACE_DEFER", "0"},
                                   {"GPUSCOPE_TRACE_TEARDOWN", "0"}});
  EXPECT_TRUE(config.api_all);
  EXPECT_FALSE(config.defer);
  EXPECT_FALSE(config.teardown);
  EXPECT_TRUE(config.errors.empty());
}

TEST(InjectConfig, BadSwitchesAreReportedAndIgnored) {
  const Config config =
      config_of({{"GPUSCOPE_TRACE_API", "some"}, {"GPUSCOPE_TRACE_TEARDOWN", "maybe"}});
  EXPECT_FALSE(config.api_all);
  EXPECT_TRUE(config.teardown);
  ASSERT_EQ(config.errors.size(), 2u);
  EXPECT_NE(config.errors[0].find("GPUSCOPE_TRACE_API"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::inject
