// Data-parallel gradient averaging between the GPUs of one machine through their copy engines
// (--all-reduce copy-engine), for what NCCL's kernels cost a backward they overlap: an NCCL
// all-reduce is a kernel that holds its SMs from launch to end, including the time its rank
// waits for the others to reach the bucket, and the backward's GEMMs beside it run slower
// (bench/RESULTS.md, session 15: +0.8 ms a ViT-B/16 step with graphs, +1.6 ms eager).
//
// Here each rank's buffers live in one allocation that every other rank maps (CUDA IPC). A
// bucket is averaged as a reduce-scatter then an all-gather:
//   1. each rank copies chunk j of the bucket into rank j's scratch (copy engine, no SMs), then
//      copies 1 into a flag word of rank j's;
//   2. each rank waits for the other ranks' flags — a stream memory operation, which holds no
//      SM while it waits — averages its own chunk with the copies it received (one short
//      kernel), and copies the average into the same place of every other rank's bucket,
//      again followed by a flag;
//   3. each rank waits for those flags: its whole bucket is the average.
// All of it runs on one stream of its own, after the bucket's gradients (an event of the
// current stream); wait() makes the current stream wait for it. The flags are reset to 0 by
// their owner after the wait, so a step captured in a CUDA graph replays with the same values.
//
// Sharded (launch_sharded, ZeRO stage 1): step 2 also updates this rank's chunk of the
// parameters from its averaged gradients, and step 3 sends that chunk of the parameters instead.
//
// Limits: every rank on one host with peer access between the GPUs (NVLink, or PCIe P2P), else
// the constructor throws. The waits have no timeout on the device: GradientBuckets' StallWatchdog
// (stall_watchdog.h) ends this rank when no step has got past its all-reduces for the group's
// timeout (--dist-timeout), and the launcher (gpuscope-torch's, torchrun) ends the others.
#pragma once

#include <ATen/ATen.h>

#include <functional>
#include <memory>
#include <optional>
#include <vector>

#include "distributed/peer_layout.h"
#include "distributed/process_group.h"

namespace gpuscope::workloads {

// --all-reduce auto: whether every rank of `group` can run the copy-engine all-reduce on its
// `device` — CUDA, stream memory operations in the driver, every rank on one host and peer access
// from each rank's GPU to every other's. Collective (every rank calls it; all get the same
// answer): empty when they can, else the first reason found.
std::string copy_engine_obstacle(ProcessGroup& group, const at::Device& device);

class PeerAllReduce {
 public:
  struct BufferSpec {
    int64_t elements = 0;
    at::ScalarType dtype = at::kFloat;
    bool reduced = true;  // false: only ever gathered (launch_sharded's `gathered`), no scratch
  };
  // Collective: every rank of `group` constructs it with the same buffers, each on its own CUDA
  // `device`. Allocates this rank's buffers and scratch in one zeroed allocation, publishes its
  // IPC handle through the group's store and maps every other rank's. `timed`: each average's
  // device time is recorded (not in a CUDA graph capture).
  // REQUIRES: copy_engine_obstacle(group, device) was empty (one host, peer access).
  // Throws c10::Error when a peer's memory cannot be mapped anyway, the ranks' buffers differ,
  // or the driver lacks stream memory operations.
  PeerAllReduce(ProcessGroup& group, const std::vector<BufferSpec>& buffers,
                const at::Device& device, bool timed);
  ~PeerAllReduce();
  PeerAllReduce(const PeerAllReduce&) = delete;
  PeerAllReduce& operator=(const PeerAllReduce&) = delete;

  // Buffer i, zeros at first; the memory stays valid as long as any tensor over it.
  const at::Tensor& buffer(size_t i) const;
  // The bytes of this rank's allocation (buffers, scratch, flags): device memory that LibTorch's
  // allocator does not count.
  int64_t bytes() const;
  // Starts averaging buffer i over the ranks in place, after the work queued on the current
  // stream so far. Every rank launches the buffers in the same order. Host work only: may run
  // inside a CUDA graph capture.
  void launch_average(size_t i);
  // Sharded (an optimizer that updates only this rank's part, ZeRO stage 1): this rank's chunk
  // of buffer `reduced` becomes the average over the ranks (the rest keeps this rank's values),
  // `update(chunk)` runs (what it queues on the current stream, this object's own there, comes
  // next), then this rank's chunk of buffer `gathered` goes to every other rank. After
  // wait(reduced), buffer `gathered` holds every rank's updated chunk. Chunks are the same
  // elements of both buffers. Host work only: may run inside a CUDA graph capture.
  // REQUIRES: both buffers have the same elements; `reduced` is reduced.
  using ChunkUpdate = std::function<void(ChunkRange chunk)>;
  void launch_sharded(size_t reduced, size_t gathered, const ChunkUpdate& update);
  // This rank's chunk of buffer i (what it averages, and updates when sharded).
  ChunkRange chunk(size_t i) const;
  // The current stream waits for buffer i's average (the host does not block); after
  // launch_sharded, for the gathered buffer's chunks.
  void wait(size_t i);

  // Averages launched from now on are timed (when `timed`).
  void start_recording();
  // Device seconds of the averages launched since start_recording, summed: each from its first
  // copy out to its last flag in (waits for slower ranks included, as NCCL's time does);
  // nullopt when not timed. REQUIRES: the device has been synchronized since.
  std::optional<double> recorded_seconds() const;

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace gpuscope::workloads
