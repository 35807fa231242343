// CUPTI records built by hand, as CUPTI would deliver them, and the lines written for them.
#include "inject/activity_records.h"

#include <cupti.h>
#include <gtest/gtest.h>

#include "inject/cupti_activity.h"
#include "inject/memory_file.h"

namespace gpuscope::inject {
namespace {

using nlohmann::json;
using testing::MemoryFile;

// The record line (the last line), with the names it refers to resolved from the name lines.
json written(MemoryFile& file, const CUpti_Activity& record, const char* api_name = nullptr) {
  std::string scratch;
  EXPECT_TRUE(write_activity(file.writer(), record, scratch, api_name));
  const auto lines = file.lines();
  json last = lines.back();
  for (const auto& line : lines) {
    if (line["t"] == "name" && last.contains("name") && line["id"] == last["name"]) {
      last["name"] = line["s"];
    }
  }
  return last;
}

TEST(ActivityRecords, TimesMoveOntoTheFilesClockByTheShiftEitherWay) {
  CUpti_ActivitySynchronization2 sync{};
  sync.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  sync.start = 5000;
  sync.end = 7000;
  std::string scratch;
  MemoryFile later;
  ASSERT_TRUE(write_activity(later.writer(), reinterpret_cast<const CUpti_Activity&>(sync), scratch,
                             nullptr, 100));
  EXPECT_EQ(later.lines().back()["start"], 5100u);
  EXPECT_EQ(later.lines().back()["end"], 7100u);
  MemoryFile earlier;  // a negative offset, as unsigned arithmetic carries it
  ASSERT_TRUE(write_activity(earlier.writer(), reinterpret_cast<const CUpti_Activity&>(sync),
                             scratch, nullptr, static_cast<uint64_t>(-4000)));
  EXPECT_EQ(earlier.lines().back()["start"], 1000u);
  EXPECT_EQ(earlier.lines().back()["end"], 3000u);
}

TEST(ActivityRecords, WorkOfACudaGraphIsKnownByItsGraphId) {
  CUpti_ActivityKernel10 kernel{};
  kernel.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  EXPECT_FALSE(from_cuda_graph(reinterpret_cast<const CUpti_Activity&>(kernel)));
  kernel.graphId = 3;
  EXPECT_TRUE(from_cuda_graph(reinterpret_cast<const CUpti_Activity&>(kernel)));
  CUpti_ActivityMemset4 memset{};
  memset.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  memset.graphId = 1;
  EXPECT_TRUE(from_cuda_graph(reinterpret_cast<const CUpti_Activity&>(memset)));
  CUpti_ActivityAPI api{};
  api.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  EXPECT_FALSE(from_cuda_graph(reinterpret_cast<const CUpti_Activity&>(api)));
}

TEST(ActivityRecords, Kernel) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.start = 1000;
  k.end = 3500;
  k.deviceId = 0;
  k.contextId = 1;
  k.streamId = 7;
  k.correlationId = 42;
  k.gridX = 128;
  k.gridY = 2;
  k.gridZ = 1;
  k.blockX = 256;
  k.blockY = 1;
  k.blockZ = 1;
  k.registersPerThread = 64;
  k.staticSharedMemory = 1024;
  k.dynamicSharedMemory = 49152;
  k.name = "_Z6gemmIfEvPT_\xff";
  k.graphId = 3;
  k.graphNodeId = 99;
  MemoryFile file;
  const json line = written(file, reinterpret_cast<const CUpti_Activity&>(k));
  EXPECT_EQ(line["t"], "kernel");
  EXPECT_EQ(line["start"], 1000);
  EXPECT_EQ(line["end"], 3500);
  EXPECT_EQ(line["ctx"], 1);
  EXPECT_EQ(line["stream"], 7);
  EXPECT_EQ(line["corr"], 42);
  EXPECT_EQ(line["name"], "_Z6gemmIfEvPT_\uFFFD");
  EXPECT_EQ(line["grid"], json::parse("[128,2,1]"));
  EXPECT_EQ(line["block"], json::parse("[256,1,1]"));
  EXPECT_EQ(line["regs"], 64);
  EXPECT_EQ(line["smem_static"], 1024);
  EXPECT_EQ(line["smem_dynamic"], 49152);
  EXPECT_EQ(line["graph"], 3);
  EXPECT_EQ(line["graph_node"], 99);
}

TEST(ActivityRecords, KernelOutsideAGraphHasNoGraphFields) {
  CUpti_ActivityKernel10 k{};
  k.kind = CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL;
  k.name = "k";
  MemoryFile file;
  const json line = written(file, reinterpret_cast<const CUpti_Activity&>(k));
  EXPECT_FALSE(line.contains("graph"));
  EXPECT_FALSE(line.contains("graph_node"));
}

TEST(ActivityRecords, PageableAndPinnedCopies) {
  CUpti_ActivityMemcpy6 m{};
  m.kind = CUPTI_ACTIVITY_KIND_MEMCPY;
  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_HTOD;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.bytes = 1 << 20;
  m.start = 10;
  m.end = 20;
  m.streamId = 3;
  m.correlationId = 5;
  MemoryFile file;
  json line = written(file, reinterpret_cast<const CUpti_Activity&>(m));
  EXPECT_EQ(line["t"], "memcpy");
  EXPECT_EQ(line["kind"], "HtoD");
  EXPECT_EQ(line["src"], "pageable");
  EXPECT_EQ(line["dst"], "device");
  EXPECT_EQ(line["bytes"], 1 << 20);
  EXPECT_EQ(line["async"], false);

  m.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_DTOH;
  m.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  m.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_PINNED;
  m.flags = CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC;
  line = written(file, reinterpret_cast<const CUpti_Activity&>(m));
  EXPECT_EQ(line["kind"], "DtoH");
  EXPECT_EQ(line["dst"], "pinned");
  EXPECT_EQ(line["async"], true);
}

TEST(ActivityRecords, PeerCopyAndManagedMemset) {
  CUpti_ActivityMemcpyPtoP4 p{};
  p.kind = CUPTI_ACTIVITY_KIND_MEMCPY2;
  p.copyKind = CUPTI_ACTIVITY_MEMCPY_KIND_PTOP;
  p.srcKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p.dstKind = CUPTI_ACTIVITY_MEMORY_KIND_DEVICE;
  p.srcDeviceId = 0;
  p.dstDeviceId = 1;
  p.bytes = 4096;
  MemoryFile file;
  json line = written(file, reinterpret_cast<const CUpti_Activity&>(p));
  EXPECT_EQ(line["kind"], "PtoP");
  EXPECT_EQ(line["src_dev"], 0);
  EXPECT_EQ(line["dst_dev"], 1);

  CUpti_ActivityMemset4 s{};
  s.kind = CUPTI_ACTIVITY_KIND_MEMSET;
  s.bytes = 512;
  s.memoryKind = CUPTI_ACTIVITY_MEMORY_KIND_MANAGED;
  line = written(file, reinterpret_cast<const CUpti_Activity&>(s));
  EXPECT_EQ(line["t"], "memset");
  EXPECT_EQ(line["bytes"], 512);
  EXPECT_EQ(line["mem"], "managed");
}

TEST(ActivityRecords, RuntimeAndDriverCallsNameTheirFunction) {
  CUpti_ActivityAPI a{};
  a.kind = CUPTI_ACTIVITY_KIND_RUNTIME;
  a.cbid = CUPTI_RUNTIME_TRACE_CBID_cudaLaunchKernel_v7000;
  a.start = 100;
  a.end = 150;
  a.threadId = 4321;
  a.correlationId = 9;
  const auto& record = reinterpret_cast<const CUpti_Activity&>(a);
  MemoryFile file;
  json line = written(file, record, api_callback_name(record));  // CUPTI's own name table
  EXPECT_EQ(line["t"], "runtime");
  EXPECT_EQ(line["name"], "cudaLaunchKernel_v7000");
  EXPECT_EQ(line["tid"], 4321);
  EXPECT_EQ(line["corr"], 9);
  EXPECT_FALSE(line.contains("ret"));

  a.kind = CUPTI_ACTIVITY_KIND_DRIVER;
  a.returnValue = 2;
  line = written(file, record, "cuLaunchKernel");
  EXPECT_EQ(line["t"], "driver");
  EXPECT_EQ(line["name"], "cuLaunchKernel");
  EXPECT_EQ(line["ret"], 2);
}

TEST(ActivityRecords, SynchronizationLeavesOutWhatDoesNotApply) {
  CUpti_ActivitySynchronization2 s{};
  s.kind = CUPTI_ACTIVITY_KIND_SYNCHRONIZATION;
  s.type = CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE;
  s.start = 5;
  s.end = 500;
  s.contextId = 1;
  s.streamId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  s.cudaEventId = CUPTI_SYNCHRONIZATION_INVALID_VALUE;
  MemoryFile file;
  const json line = written(file, reinterpret_cast<const CUpti_Activity&>(s));
  EXPECT_EQ(line["t"], "sync");
  EXPECT_EQ(line["type"], "context_synchronize");
  EXPECT_EQ(line["ctx"], 1);
  EXPECT_FALSE(line.contains("stream"));
  EXPECT_FALSE(line.contains("event"));
}

TEST(ActivityRecords, TheLaunchQueueRunningFull) {
  CUpti_ActivityOverheadCommandBufferFullData full{};
  full.commandBufferLength = 1024;
  CUpti_ActivityOverhead3 o{};
  o.kind = CUPTI_ACTIVITY_KIND_OVERHEAD;
  o.overheadKind = CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL;
  o.objectKind = CUPTI_ACTIVITY_OBJECT_STREAM;
  o.objectId.dcs.deviceId = 0;
  o.objectId.dcs.contextId = 1;
  o.objectId.dcs.streamId = 7;
  o.overheadData = &full;
  o.start = 1;
  o.end = 2;
  MemoryFile file;
  const json line = written(file, reinterpret_cast<const CUpti_Activity&>(o));
  EXPECT_EQ(line["t"], "overhead");
  EXPECT_EQ(line["kind"], "command_buffer_full");
  EXPECT_EQ(line["stream"], 7);
  EXPECT_EQ(line["queue_length"], 1024);
}

TEST(ActivityRecords, UnknownKindsAreSkipped) {
  CUpti_Activity other{};
  other.kind = CUPTI_ACTIVITY_KIND_NVLINK;
  MemoryFile file;
  std::string scratch;
  EXPECT_FALSE(write_activity(file.writer(), other, scratch));
  EXPECT_EQ(file.text(), "");
}

}  // namespace
}  // namespace gpuscope::inject
