// LibTorch's c10d behind one class: the TCPStore rendezvous at MASTER_ADDR:MASTER_PORT (rank 0
// serves it), and the collective backend for the device — ProcessGroupNCCL for CUDA,
// ProcessGroupGloo for the CPU. The rest of gpuscope-torch sees c10d only through this header.
#pragma once

#include <ATen/ATen.h>
#include <torch/csrc/distributed/c10d/Work.hpp>

#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "distributed/launch_env.h"

namespace c10d {
class Backend;
class Store;
}  // namespace c10d

namespace gpuscope::workloads {

// A collective in flight.
class PendingCollective {
 public:
  explicit PendingCollective(c10::intrusive_ptr<c10d::Work> work) : work_(std::move(work)) {}
  // CUDA: makes the current stream wait for the collective (does not block the host). CPU:
  // blocks until it finished. Throws (c10::Error) when it failed or timed out.
  void wait();
  // How long the collective ran on the device (NCCL with timing on); nullopt otherwise.
  // REQUIRES: it has finished (the stream that waited for it has been synchronized).
  std::optional<double> device_seconds() const;

 private:
  c10::intrusive_ptr<c10d::Work> work_;
};

class ProcessGroup {
 public:
  // Joins the job: rendezvous through the store (rank 0 starts it), then the backend for
  // `device`'s type. Every collective and store wait fails after `timeout`. `time_collectives`:
  // NCCL records each collective's device time (PendingCollective::device_seconds), unless
  // TORCH_NCCL_ENABLE_TIMING says otherwise.
  // Throws c10::Error (or std::runtime_error) when the rendezvous or the backend fails, or when
  // this build has no backend for the device (Gloo needs its headers at build time).
  ProcessGroup(const LaunchEnv& env, const at::Device& device, std::chrono::milliseconds timeout,
               bool time_collectives = true);
  ~ProcessGroup();
  ProcessGroup(const ProcessGroup&) = delete;
  ProcessGroup& operator=(const ProcessGroup&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  const std::string& backend_name() const { return backend_name_; }
  // Whether collectives are to be timed on the device (the constructor's `time_collectives`).
  bool time_collectives() const { return time_collectives_; }
  // The constructor's `timeout`.
  std::chrono::milliseconds timeout() const { return timeout_; }

  // Starts a sum all-reduce of `tensor` in place (every rank the same shape and dtype).
  PendingCollective all_reduce_sum(at::Tensor& tensor);
  // Starts an average all-reduce in place: NCCL averages inside the collective (ncclAvg, no
  // pass of its own over the tensor); Gloo, which has no average, divides first and sums.
  PendingCollective all_reduce_average(at::Tensor& tensor);
  // Overwrites `tensors` with rank `root`'s, and waits.
  void broadcast(std::vector<at::Tensor>& tensors, int root);
  // Every rank's `value`, in rank order, exchanged through the store.
  std::vector<std::string> all_gather_strings(const std::string& key, const std::string& value);

 private:
  int rank_ = 0;
  int size_ = 1;
  std::string backend_name_;
  bool time_collectives_ = true;
  std::chrono::milliseconds timeout_{0};
  c10::intrusive_ptr<c10d::Store> store_;
  c10::intrusive_ptr<c10d::Backend> backend_;
};

// Whether this build can make a backend for the device type ("gloo" for the CPU needs Gloo's
// headers at build time; "nccl" needs LibTorch built with NCCL and nccl.h).
bool have_gloo();
bool have_nccl();

namespace detail {
// Defined in process_group_gloo.cc / process_group_nccl.cc; throw when not built in.
c10::intrusive_ptr<c10d::Backend> make_gloo_backend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int size,
                                                    std::chrono::milliseconds timeout);
c10::intrusive_ptr<c10d::Backend> make_nccl_backend(const c10::intrusive_ptr<c10d::Store>& store,
                                                    int rank, int size,
                                                    std::chrono::milliseconds timeout);
}  // namespace detail

}  // namespace gpuscope::workloads
