#include "distributed/process_group.h"

#include <torch/csrc/distributed/c10d/Backend.hpp>
#include <torch/csrc/distributed/c10d/PrefixStore.hpp>
#include <torch/csrc/distributed/c10d/TCPStore.hpp>

#include <cstdlib>

namespace gpuscope::workloads {

void PendingCollective::wait() {
  work_->wait();
}

std::optional<double> PendingCollective::device_seconds() const {
  try {
    const float ms = work_->getDuration();
    if (ms > 0) return static_cast<double>(ms) * 1e-3;
  } catch (const std::exception&) {
    // Gloo, or NCCL without TORCH_NCCL_ENABLE_TIMING: no device timing.
  }
  return std::nullopt;
}

ProcessGroup::ProcessGroup(const LaunchEnv& env, const at::Device& device,
                           std::chrono::milliseconds timeout, bool time_collectives)
    : rank_(env.rank),
      size_(env.world_size),
      time_collectives_(time_collectives),
      timeout_(timeout) {
  c10d::TCPStoreOptions options;
  options.port = static_cast<uint16_t>(env.master_port);
  options.isServer = env.rank == 0;
  options.numWorkers = env.world_size;
  options.waitWorkers = true;
  options.timeout = timeout;
  auto tcp = c10::make_intrusive<c10d::TCPStore>(env.master_addr, options);
  store_ = c10::make_intrusive<c10d::PrefixStore>("gpuscope-torch", tcp);
  if (device.is_cuda()) {
    // Each collective's device time (Work::getDuration): the communication the scaling table
    // reports. Read by ProcessGroupNCCL when it is made.
    if (time_collectives) setenv("TORCH_NCCL_ENABLE_TIMING", "1", 0);
    backend_ = detail::make_nccl_backend(store_, rank_, size_, timeout);
    backend_name_ = "nccl";
  } else {
    backend_ = detail::make_gloo_backend(store_, rank_, size_, timeout);
    backend_name_ = "gloo";
  }
}

ProcessGroup::~ProcessGroup() = default;

PendingCollective ProcessGroup::all_reduce_sum(at::Tensor& tensor) {
  std::vector<at::Tensor> tensors{tensor};
  c10d::AllreduceOptions options;
  options.reduceOp = c10d::ReduceOp::SUM;
  return PendingCollective(backend_->allreduce(tensors, options));
}

PendingCollective ProcessGroup::all_reduce_average(at::Tensor& tensor) {
  if (backend_name_ != "nccl") {
    tensor.div_(size_);
    return all_reduce_sum(tensor);
  }
  std::vector<at::Tensor> tensors{tensor};
  c10d::AllreduceOptions options;
  options.reduceOp = c10d::ReduceOp::AVG;
  return PendingCollective(backend_->allreduce(tensors, options));
}

void ProcessGroup::broadcast(std::vector<at::Tensor>& tensors, int root) {
  for (at::Tensor& t : tensors) {
    std::vector<at::Tensor> one{t};
    c10d::BroadcastOptions options;
    options.rootRank = root;
    backend_->broadcast(one, options)->wait();
  }
}

std::vector<std::string> ProcessGroup::all_gather_strings(const std::string& key,
                                                          const std::string& value) {
  store_->set(key + "/" + std::to_string(rank_), std::vector<uint8_t>(value.begin(), value.end()));
  std::vector<std::string> values;
  for (int r = 0; r < size_; ++r) {
    const std::vector<uint8_t> bytes = store_->get(key + "/" + std::to_string(r));
    values.emplace_back(bytes.begin(), bytes.end());
  }
  return values;
}

}  // namespace gpuscope::workloads
