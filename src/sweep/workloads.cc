// The workloads gpuscope knows how to run for a sweep: a bench row and a burn GEMM, each one
// process for its whole sweep on one GPU.
#include <fmt/format.h>

#include "gpuscope/bench.h"
#include "gpuscope/sweep.h"

namespace gpuscope::sweep {
namespace {

// The swept GPU as the workload's only CUDA device: CUDA numbers GPUs as NVML does only in PCI
// bus order.
std::vector<std::pair<std::string, std::string>> one_gpu_env(const std::string& gpu) {
  return {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"}, {"CUDA_VISIBLE_DEVICES", gpu}};
}

}  // namespace

WorkloadSpec row_workload(const bench::RowSpec& row, const std::string& torch_bin,
                          const std::string& gpu) {
  WorkloadSpec spec;
  spec.label = row.label();
  spec.command = {torch_bin};
  for (const std::string& arg : row.torch_args()) spec.command.push_back(arg);
  // One process for the whole sweep: windows until it is stopped (the last --windows counts).
  for (const char* arg : {"--windows", "0", "--quiet"}) spec.command.push_back(arg);
  spec.env = one_gpu_env(gpu);
  spec.tags = {{"model", row.model}, {"task", row.task}, {"mode", row.mode}};
  if (!row.batch.empty()) spec.tags["batch"] = row.batch;
  return spec;
}

WorkloadSpec burn_workload(Precision precision, const std::string& worker, const std::string& gpu) {
  const std::string name(precision_name(precision));
  WorkloadSpec spec;
  spec.label = name + " GEMM";
  spec.command = {worker, "--precision", name, "--duration", "86400", "--window", "1"};
  spec.env = one_gpu_env(gpu);
  spec.unit = fmt::format("T{}", rate_unit(precision));  // TFLOP/s, TOP/s
  spec.rate_line_type = "gemm_window";
  spec.rate_key = "tflops";
  spec.tags = {{"precision", name}};
  return spec;
}

}  // namespace gpuscope::sweep
