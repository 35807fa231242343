// One rank of a data-parallel training run, as torchrun + DistributedDataParallel would run it:
// the process group (process_group.h), replicas made identical (rank 0's parameters and buffers
// broadcast), gradients averaged in buckets during the backward (grad_buckets.h), each rank on
// its own share of the data (with the copy-engine all-reduce, AdamW sharded over the ranks
// where it applies: --shard-optimizer), and at the end every rank's figures gathered on rank 0.
// With --grad-sync off the ranks keep their process group (the broadcast, the figures) but
// average no gradients.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "distributed/grad_buckets.h"
#include "distributed/process_group.h"
#include "json_protocol.h"
#include "models/model.h"
#include "run_config.h"
#include "synthetic_data.h"

namespace gpuscope::workloads {

class DataParallel {
 public:
  // Joins the job described by config.launch and broadcasts rank 0's parameters and buffers.
  // `captured`: the steps will be captured in CUDA graphs (no per-collective device timing,
  // whose events a capture cannot read back; the replays run no host code to time).
  // Throws (c10::Error, std::runtime_error) when the rendezvous or a collective fails.
  // REQUIRES: config.launch.distributed(); the model is on `device`.
  DataParallel(const RunConfig& config, ReferenceModel& model, const at::Device& device,
               bool captured = false);
  ~DataParallel();

  int rank() const { return group_->rank(); }
  int world_size() const { return group_->size(); }
  // The gradient buckets; nullptr with --grad-sync off (nothing is all-reduced).
  GradientBuckets* buckets() { return buckets_.get(); }
  // Whether the optimizer steps each bucket as it is averaged (StepProgram::bucket_step),
  // for the record.
  void set_bucket_step(bool applied) { bucket_step_ = applied; }

  // The slice of each global batch that this rank trains on (rank r: rows [r*b, (r+1)*b)).
  std::vector<Batch> share_of(const std::vector<Batch>& global) const;
  // Replaces `values` with its mean over ranks (waits).
  void average(at::Tensor& values);
  // Returns once every rank has called it (a one-element all-reduce read back on the host).
  void barrier(const at::Device& device);
  // Whether any rank passed true, once every rank has called it (as barrier): the ranks agree,
  // e.g. to stop at the same window when a signal reached them a step apart.
  bool any_rank(bool mine, const at::Device& device);
  // Fills result.data_parallel from this rank's result and the recorded communication (and adds
  // the copy-engine all-reduce's own buffers to the peak memory figures); on rank
  // 0 also gathers every rank's record and makes samples_per_second the job's (window lines
  // and window_samples_per_second stay rank 0's own).
  // REQUIRES: the device was synchronized after the last recorded step.
  void summarise(const DeviceInfo& device, RunResult& result);

 private:
  const RunConfig& config_;
  std::unique_ptr<ProcessGroup> group_;
  std::unique_ptr<GradientBuckets> buckets_;
  bool bucket_step_ = false;
  bool copy_engine_ = false;  // the buckets are all-reduced by the copy engines
  bool sharded_ = false;      // and the optimizer is sharded over the ranks
  std::optional<std::string> all_reduce_fallback_;  // --all-reduce auto: why not them
};

// Test hook: GPUSCOPE_TORCH_FAULT="R:S" kills rank R with SIGKILL before its step S (how a
// crashed rank looks to the others); "R:S:stop" stops it with SIGSTOP instead (a rank that
// hangs). Nothing happens when unset or for another rank/step.
void maybe_inject_fault(const RunConfig& config, int64_t step);

}  // namespace gpuscope::workloads
