// The monitor's sampler, running for the whole matrix, and what it saw during each row: energy
// and power over the timed windows, time-weighted SM/tensor activity, time throttled, NVML's
// peak memory. Reuses telemetry::Sampler and the window functions (telemetry.h), so a bench
// row and `gpuscope monitor` compute energy and means the same way.
#pragma once

#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "bench/torch_protocol.h"
#include "gpuscope/bench.h"
#include "gpuscope/nvml.h"
#include "gpuscope/telemetry.h"

namespace gpuscope::bench::detail {

// The samples of one GPU, appended from the sampler's thread.
class SampleLog {
 public:
  void add(const telemetry::GpuSample& sample);
  std::vector<telemetry::GpuSample> snapshot() const;
  // The time of the newest sample; nullopt before the first.
  std::optional<double> last_t() const;
  // Drops samples older than t (keeping the last one before it, for interpolation).
  void drop_before(double t);

 private:
  mutable std::mutex mutex_;
  std::vector<telemetry::GpuSample> samples_;
};

// Fills the row's telemetry fields from `samples` over its timed `windows`, and NVML's peak
// memory over [row_t0, row_t1]. Leaves them absent where the samples lack the reading.
// `whole_gpu` false: the row ran on a MIG instance (samples from telemetry::instance_view), so
// the GPU's energy, power and memory are not the row's and stay absent.
// `gpus`: the NVML indices the row ran on, whose samples count (empty: every sample, of one GPU).
// A data-parallel row's windows are rank 0's, each rank training as many samples: its energy and
// power are every GPU's summed (absent unless each GPU has them), J/sample their energy over
// the samples of all ranks, its activities the GPUs' mean, its memory and throttling the most
// of any GPU.
void fill_row_telemetry(const std::vector<telemetry::GpuSample>& samples,
                        const std::vector<TimedWindow>& windows, double row_t0, double row_t1,
                        Row& row, bool whole_gpu = true, const std::vector<unsigned>& gpus = {});

// The sampler on one GPU feeding a SampleLog.
// The sampler settings for a bench row: one GPU, no process list, and no reading moved to the
// once-a-second rounds for its cost. A row's timed windows can total under 2 s, and on the lent
// H100 (a VM) the energy counter costs 3.4 ms a call, so the monitor's default moved it to 1 Hz
// and such rows had no energy at all; a bench row has the machine to itself, so the few ms per
// round are spent.
// `gpus`: selectors (gpuscope/target.h), e.g. "0" or a MIG instance's UUID; the first is the rows'.
telemetry::SamplerOptions row_sampler_options(const std::vector<std::string>& gpus,
                                              int interval_ms);

class RowSampler {
 public:
  // Samples GPU `gpu`, or the GPU of MIG instance `mig` with that instance's GPM; without a MIG
  // instance also GPUs 0..also_gpus-1 that exist (a matrix's data-parallel rows). Fails with
  // invalid_argument for a `gpu` that does not exist; other failures of the sampler are returned
  // too (the caller decides to go on without telemetry).
  static Result<std::unique_ptr<RowSampler>> start(const nvml::Session& session, unsigned gpu,
                                                   const std::optional<Target>& mig,
                                                   int interval_ms, unsigned also_gpus = 0);
  ~RowSampler();
  double now_s() const;  // on the samples' clock
  // Waits (at most two intervals) until a sample at or after t has arrived.
  void wait_past(double t) const;
  SampleLog& log() { return log_; }
  // The samples so far, as the rows' target sees them (a MIG instance: its own GPM).
  std::vector<telemetry::GpuSample> samples() const;
  bool whole_gpu() const { return !mig_gpu_instance_; }
  // Whether GPU `index` (NVML) is sampled.
  bool samples_gpu(unsigned index) const;
  const telemetry::SampledGpu& gpu() const;  // the first: `gpu` or the MIG instance's

 private:
  RowSampler() = default;
  std::unique_ptr<telemetry::Sampler> sampler_;
  SampleLog log_;
  double interval_s_ = 0.1;
  std::optional<unsigned> mig_gpu_instance_;
};

}  // namespace gpuscope::bench::detail
