// Reads one GPU's sample from NVML: the fast readings every round, the slow ones (processes,
// PCIe without GPM, fan, ECC, power limit) when asked, GPM when its pair interval has passed.
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <type_traits>
#include <vector>

#include "gpuscope/nvml.h"
#include "gpuscope/telemetry.h"

namespace gpuscope::telemetry::detail {

class GpuReader {
 public:
  // `gpm` may be null (no GPM on this GPU, or GPM taken per MIG instance only); `instance_gpm`
  // holds a GPM sampler per MIG GPU instance to sample (GpuSample::instances). REQUIRES: the
  // device's Session outlives the reader. Readings costing more than `slow_reading_s` per call
  // move to the slow rounds.
  GpuReader(nvml::Device device, SampledGpu identity, std::unique_ptr<nvml::GpmSampler> gpm,
            std::map<unsigned, std::unique_ptr<nvml::GpmSampler>> instance_gpm, bool processes,
            double slow_reading_s);
  // A reader for a GPU that was already lost when the sampler opened: its first sample says so.
  static std::unique_ptr<GpuReader> lost_from_start(SampledGpu identity);

  const SampledGpu& identity() const { return identity_; }
  bool lost() const { return lost_; }
  // What each reading's NVML calls cost so far (wall time), and which were moved to the
  // once-a-second rounds for their cost.
  std::vector<ReadingCost> costs() const;

  // Reads the GPU. `gpm_time` is the round's scheduled time, used to pair GPM samples (see
  // sampler.cc). After a gpu_lost answer the sample is marked lost and lost() turns true.
  GpuSample read(double t_s, double unix_s, std::chrono::steady_clock::time_point gpm_time,
                 bool slow);

 private:
  GpuReader(SampledGpu identity);
  // Calls a reading and unwraps it, timing the call. not_supported: absent, and the reading is
  // never asked again; gpu_lost: marks the GPU lost; anything else: a problem, reported once.
  template <typename Call>
  auto take(const char* reading, GpuSample& sample, Call&& call)
      -> std::optional<std::decay_t<decltype(call().value())>>;
  // Whether to call the reading in this round.
  bool due(const char* reading) const;

  void read_fast(GpuSample& sample);
  void read_fields(GpuSample& sample);
  void read_gpm(GpuSample& sample, std::chrono::steady_clock::time_point gpm_time);
  void read_slow(GpuSample& sample);
  void read_processes(GpuSample& sample);

  std::optional<nvml::Device> device_;
  SampledGpu identity_;
  std::unique_ptr<nvml::GpmSampler> gpm_;
  std::map<unsigned, std::unique_ptr<nvml::GpmSampler>> instance_gpm_;
  bool processes_ = true;
  double slow_reading_s_ = 0;
  bool lost_ = false;
  bool lost_reported_ = false;
  bool pcie_from_gpm_ = false;
  struct Cost {
    std::uint64_t calls = 0;
    double seconds = 0;
  };
  std::map<std::string, Cost> costs_;
  std::set<std::string> slowed_;
  bool slow_round_ = true;
  std::set<std::string> unsupported_;
  std::set<std::string> reported_;
  // The previous NVLink counters, for the rates.
  std::optional<double> nvlink_t_s_;
  std::optional<double> nvlink_tx_, nvlink_rx_;
  std::uint64_t process_stamp_us_ = 0;
  std::map<unsigned, std::string> process_names_;
  std::map<unsigned, nvml::ProcessUtilization> process_utilization_;
};

// /proc/PID/comm, or "" when that PID is not visible here (another PID namespace, exited).
std::string process_name(unsigned pid);

}  // namespace gpuscope::telemetry::detail
