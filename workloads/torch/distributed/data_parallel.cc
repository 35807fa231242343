#include "distributed/data_parallel.h"

#include <algorithm>
#include <csignal>
#include <cstdlib>
#include <functional>
#include <string>

#include "distributed/peer_all_reduce.h"
#include "json_writer.h"

namespace gpuscope::workloads {

DataParallel::DataParallel(const RunConfig& config, ReferenceModel& model, const at::Device& device,
                           bool captured)
    : config_(config) {
  TORCH_CHECK(config.launch.distributed(), "DataParallel needs a world size above 1");
  group_ = std::make_unique<ProcessGroup>(config.launch, device,
                                          std::chrono::seconds(config.dist_timeout_s), !captured);
  // Same seed, same weights, but DDP does not rely on it and neither does this.
  std::vector<at::Tensor> state;
  for (const auto& p : model.parameters()) state.push_back(p.detach());
  for (const auto& b : model.buffers()) state.push_back(b.detach());
  {
    torch::NoGradGuard no_grad;
    group_->broadcast(state, 0);
  }
  if (!config.grad_sync) return;
  std::optional<at::ScalarType> communication_dtype;
  if (config.grad_comm == GradComm::bf16) communication_dtype = at::kBFloat16;
  // Every rank learns whether every rank can use the copy engines before any maps another's
  // memory: asked for and impossible, every rank says why, none waits for a peer that failed.
  if (config.all_reduce != AllReduce::nccl && device.is_cuda()) {
    const std::string obstacle = copy_engine_obstacle(*group_, device);
    TORCH_CHECK(config.all_reduce != AllReduce::copy_engine || obstacle.empty(),
                "--all-reduce copy-engine: ", obstacle, " (--all-reduce nccl or auto use NCCL)");
    copy_engine_ = obstacle.empty();
    if (!copy_engine_) all_reduce_fallback_ = obstacle;
  }
  // The same on every rank: the options are, and so is copy_engine_.
  const std::string shard_obstacle = optimizer_shard_obstacle(config, copy_engine_);
  TORCH_CHECK(config.shard_optimizer != Toggle::on || shard_obstacle.empty(),
              "--shard-optimizer on: ", shard_obstacle);
  sharded_ = config.shard_optimizer != Toggle::off && shard_obstacle.empty();
  buckets_ = std::make_unique<GradientBuckets>(model.parameters(), *group_,
                                               config.bucket_cap_mb << 20, config.bucket_views,
                                               communication_dtype, copy_engine_, sharded_);
}

DataParallel::~DataParallel() = default;

std::vector<Batch> DataParallel::share_of(const std::vector<Batch>& global) const {
  std::vector<Batch> share;
  for (const Batch& b : global) {
    const int64_t rows = b.input.size(0) / world_size();
    share.push_back(Batch{b.input.narrow(0, rank() * rows, rows).contiguous(),
                          b.target.narrow(0, rank() * rows, rows).contiguous()});
  }
  return share;
}

void DataParallel::average(at::Tensor& values) {
  group_->all_reduce_sum(values).wait();
  values.div_(world_size());
}

void DataParallel::barrier(const at::Device& device) {
  (void)any_rank(false, device);
}

bool DataParallel::any_rank(bool mine, const at::Device& device) {
  at::Tensor token =
      at::full({1}, mine ? 1.0 : 0.0, at::TensorOptions().device(device).dtype(at::kFloat));
  group_->all_reduce_sum(token).wait();
  return token.item<float>() > 0;  // the host waits for the collective, not only the stream
}

void DataParallel::summarise(const DeviceInfo& device, RunResult& result) {
  const CommStats comm = buckets_ ? buckets_->recorded() : CommStats{};
  DataParallelRecord record;
  record.world_size = world_size();
  record.backend = group_->backend_name();
  record.grad_sync = buckets_ != nullptr;
  record.buckets = buckets_ ? static_cast<int64_t>(buckets_->bucket_count()) : 0;
  record.bucket_cap_bytes = config_.bucket_cap_mb << 20;
  record.bucket_views = config_.bucket_views;
  record.grad_comm = std::string(grad_comm_name(config_.grad_comm));
  record.all_reduce = !buckets_ ? "none" : copy_engine_ ? "copy-engine" : group_->backend_name();
  record.all_reduce_fallback = all_reduce_fallback_;
  // The copy-engine all-reduce's buffers are device memory LibTorch's allocator does not count.
  if (const int64_t own = buckets_ ? buckets_->own_allocation_bytes() : 0; own > 0) {
    if (result.peak_allocated_bytes) *result.peak_allocated_bytes += own;
    if (result.peak_reserved_bytes) *result.peak_reserved_bytes += own;
  }
  record.bucket_step = bucket_step_;
  record.optimizer_sharded = sharded_;
  record.global_batch = result.batch * world_size();
  record.rank_samples_per_second = result.samples_per_second;
  if (comm.steps > 0) {
    const auto steps = static_cast<double>(comm.steps);
    record.exposed_seconds_per_step = comm.exposed_seconds / steps;
    if (comm.collective_seconds) {
      record.collective_seconds_per_step = *comm.collective_seconds / steps;
      if (*comm.collective_seconds > 0) {
        record.overlap_fraction =
            std::clamp(1.0 - comm.exposed_seconds / *comm.collective_seconds, 0.0, 1.0);
      }
    }
  }
  result.data_parallel = record;
  const std::vector<std::string> ranks = group_->all_gather_strings(
      "result", rank_record_json(rank(), config_.launch.local_rank, device, result));
  if (rank() != 0) return;
  result.data_parallel->ranks_json = json_array(ranks, std::identity());
  // The job's throughput: every rank's median, summed (each rank's share of every step).
  double total = 0;
  for (const std::string& r : ranks) {
    const std::string key = "\"samples_per_second\":";
    const auto at = r.find(key);
    if (at != std::string::npos) total += std::strtod(r.c_str() + at + key.size(), nullptr);
  }
  result.samples_per_second = total;
}

void maybe_inject_fault(const RunConfig& config, int64_t step) {
  const char* fault = std::getenv("GPUSCOPE_TORCH_FAULT");
  if (fault == nullptr) return;
  const std::string spec(fault);
  const auto colon = spec.find(':');
  if (colon == std::string::npos) return;
  if (std::atoi(spec.substr(0, colon).c_str()) == config.launch.rank &&
      std::atoll(spec.substr(colon + 1).c_str()) == step) {
    // ":stop" after the step: the rank hangs (stopped, not dead) instead of dying.
    std::raise(spec.ends_with(":stop") ? SIGSTOP : SIGKILL);
  }
}

}  // namespace gpuscope::workloads
