// Telemetry: what each GPU is doing, sampled over time from NVML.
//
//   metric catalogue   every metric the sampler reads: name, SI unit, help, counter or gauge,
//                      and its dcgm-exporter name (for the Prometheus endpoint)
//   Sampler            one thread reads every GPU every `interval` (100 ms by default, 20 ms at
//                      the least) and hands each round (a Tick) to a callback
//   windows            energy, time-weighted means, peaks and throttle time over a span of
//                      recorded samples (for any command that measures a window: burn, bench)
//   Summary            the same, streamed over a whole monitoring session (`monitor -- CMD`)
//
// Units are SI in the data (seconds, joules, watts, bytes, hertz, degrees Celsius); activities
// and utilizations are fractions 0..1. A metric a GPU does not report is absent, never 0.
#pragma once

#include <array>
#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/nvml.h"
#include "gpuscope/status.h"
#include "gpuscope/target.h"

namespace gpuscope::telemetry {

// ---------------------------------------------------------------------------------------------
// The metric catalogue.

enum class Metric : std::uint8_t {
  // GPM (Hopper and newer): how much of the GPU was busy, over the interval since the previous
  // GPM sample (GpuSample::gpm_interval_s).
  sm_activity,
  sm_occupancy,
  tensor_activity,
  dram_activity,
  graphics_activity,
  fp64_activity,
  fp32_activity,
  fp16_activity,
  // NVML's duty cycles: share of time one kernel ran / memory was touched. Not "how busy".
  gpu_utilization,
  memory_utilization,
  memory_used_bytes,
  memory_free_bytes,
  memory_total_bytes,
  power_w,          // nvmlDeviceGetPowerUsage (what nvidia-smi shows)
  power_instant_w,  // field POWER_INSTANT
  power_average_w,  // field POWER_AVERAGE (1 s)
  power_limit_w,    // enforced limit
  energy_j,         // counter since the driver loaded
  temperature_c,
  memory_temperature_c,
  sm_clock_hz,
  memory_clock_hz,
  clock_event_reasons,      // NVML bit mask
  throttle_sw_power_cap_s,  // counters: seconds each reason held the clocks since driver load
  throttle_sw_thermal_s,
  throttle_hw_thermal_s,
  throttle_hw_power_brake_s,
  pcie_tx_bytes_per_s,
  pcie_rx_bytes_per_s,
  nvlink_tx_bytes,  // counters, all links
  nvlink_rx_bytes,
  nvlink_tx_bytes_per_s,  // from the counters' change since the previous sample
  nvlink_rx_bytes_per_s,
  fan_speed,
  ecc_corrected_errors,  // volatile counts since the driver loaded
  ecc_uncorrected_errors,
  kCount
};
inline constexpr std::size_t kMetricCount = static_cast<std::size_t>(Metric::kCount);

enum class MetricKind { gauge, counter };

// How a metric's values combine over time.
enum class Aggregation {
  interpolate,  // a reading at an instant: linear between samples (power, temperature, ...)
  interval,     // a GPM mean over (t - gpm_interval_s, t]
  hold,         // holds from its sample to the next (bit masks)
};

struct MetricInfo {
  Metric metric;
  std::string_view name;  // CSV column, JSON key, store metric: "power_w"
  std::string_view unit;  // "W" "J" "B" "B/s" "Hz" "degC" "1" "s" "mask" "count"
  MetricKind kind;
  Aggregation aggregation;
  std::string_view help;
  // dcgm-exporter's name for it (empty: exported as gpuscope_<name>) and the factor that turns
  // our SI value into DCGM's unit (bytes -> MiB, fraction -> percent, J -> mJ, ...).
  std::string_view dcgm_name;
  double dcgm_scale = 1.0;
  std::string_view dcgm_help;  // DCGM's help text, with its unit
};

// Every metric, in Metric order.
std::span<const MetricInfo> metric_catalogue();
const MetricInfo& metric_info(Metric metric);
std::optional<Metric> metric_by_name(std::string_view name);

// The throttle-time counter metric of a reason; absent for hw_slowdown (NVML has none).
std::optional<Metric> throttle_metric(nvml::ThrottleReason reason);

// The readings of one sample, by metric. Absent: not supported by the GPU, or not read at this
// sample (some are read only once a second, GPM metrics only every >= 100 ms).
class MetricValues {
 public:
  std::optional<double> get(Metric m) const { return values_[static_cast<std::size_t>(m)]; }
  bool has(Metric m) const { return values_[static_cast<std::size_t>(m)].has_value(); }
  void set(Metric m, std::optional<double> v) { values_[static_cast<std::size_t>(m)] = v; }

 private:
  std::array<std::optional<double>, kMetricCount> values_{};
};

// ---------------------------------------------------------------------------------------------
// Samples.

// One sampled GPU: the GPU itself (the one GPU description, a whole-GPU Target) and what the
// sampler reads or can read on it.
struct SampledGpu {
  // The whole GPU (never a MIG instance). A GPU lost before sampling started has only its
  // gpu_index, and `unavailable` set.
  Target target;
  std::optional<double> power_limit_w;  // the enforced limit when sampling started
  bool gpm = false;  // GPM metrics are sampled (for the whole GPU, or per instance below)
  // The MIG instances selected on this GPU ("MIG-..." selectors): GPM is sampled per GPU
  // instance for them (GpuSample::instances) instead of for the whole GPU. NVML measures
  // everything else (power, energy, temperature, clocks, throttling, memory, utilization) only
  // for the whole GPU: see measured_per_instance().
  std::vector<Target> instances;
};

struct ProcessSample {
  unsigned pid = 0;
  std::string name;  // /proc/PID/comm; empty when the PID is not visible from here
  std::optional<std::uint64_t> used_memory_bytes;
  std::optional<double> sm_utilization;  // duty cycle share, 0..1 (driver's last period)
  std::optional<double> memory_utilization;
};

// The GPM metrics of one MIG GPU instance at a sample (only GPM metrics are set).
struct InstanceSample {
  unsigned gpu_instance_id = 0;
  MetricValues values;
  std::optional<double> gpm_interval_s;
};

struct GpuSample {
  unsigned gpu = 0;  // NVML index
  double t_s = 0;    // seconds since the sampler's origin
  double unix_s = 0;
  MetricValues values;
  std::optional<double> gpm_interval_s;  // the GPM metrics cover (t_s - this, t_s]
  // The compute processes, when the list was read at this sample (once a second).
  std::optional<std::vector<ProcessSample>> processes;
  // GPM per selected MIG GPU instance (SampledGpu::instances), when taken at this sample.
  std::vector<InstanceSample> instances;
  bool lost = false;  // the GPU stopped answering here; it is not sampled again
  // Readings that failed for another reason than "not supported", the first time each did.
  std::vector<std::string> problems;
};

// One round over every GPU still answering.
struct Tick {
  std::uint64_t index = 0;
  double t_s = 0;  // when the round started, since the origin
  double unix_s = 0;
  std::vector<GpuSample> gpus;
  double cpu_s = 0;                 // CPU time the round cost the sampling thread
  double wall_s = 0;                // wall time it took
  std::uint64_t missed_before = 0;  // rounds skipped since the previous one (the thread lagged)
};

// What one reading's NVML calls cost on this machine (wall time per call).
struct ReadingCost {
  std::string name;  // "memory", "fields", "gpm", "processes", ...
  std::uint64_t calls = 0;
  double mean_s = 0;
  bool once_a_second = false;  // moved to the slow rounds for its cost
};

struct SamplerOptions {
  std::chrono::milliseconds interval{100};
  // Process list, PCIe (without GPM; each read blocks 20 ms), fan, ECC, power limit.
  std::chrono::milliseconds slow_interval{1000};
  // A reading whose NVML calls cost more than this each (mean of its first calls) moves to the
  // once-a-second rounds: on a GPU in a VM some calls cost milliseconds. GPM is never moved.
  double slow_reading_threshold_s = 0.25e-3;
  // GPU selectors (gpuscope/target.h: "N", "GPU-...", "MIG-...", "all", lists); empty: every
  // GPU. A MIG instance's selector samples its GPU, with GPM for that instance.
  std::vector<std::string> gpus;
  bool processes = true;
};
inline constexpr std::chrono::milliseconds kMinInterval{20};

// Samples the chosen GPUs of one NVML session. GPM samples of a GPU are taken from the sampling
// thread only, at least GpmSampler::kMinInterval apart.
class Sampler {
 public:
  // Fails with invalid_argument for an interval under kMinInterval or a GPU that does not
  // exist, and with the session's failure when no GPU can be read at all.
  // REQUIRES: `session` outlives the sampler.
  static Result<std::unique_ptr<Sampler>> open(const nvml::Session& session,
                                               const SamplerOptions& options);
  ~Sampler();  // stops the thread if it runs
  Sampler(const Sampler&) = delete;
  Sampler& operator=(const Sampler&) = delete;

  const std::vector<SampledGpu>& gpus() const;
  const SamplerOptions& options() const;
  std::chrono::steady_clock::time_point origin() const;
  double origin_unix_s() const;

  // One round, stamped `now` (tests pass the fake NVML's time). REQUIRES: not running.
  Tick sample_at(std::chrono::steady_clock::time_point now);

  // Samples at once, then every interval on a thread, calling `on_tick` with each round (on
  // that thread: keep it short). Rounds are due at origin + k x interval; when one ends late,
  // the ones it overran are skipped and counted (Tick::missed_before).
  void start(std::function<void(Tick&&)> on_tick);
  // Stops the thread after a last round (so a span ends inside the samples); idempotent.
  void stop();
  // True when every GPU is lost.
  bool all_lost() const;
  // What each reading cost so far, over all GPUs. REQUIRES: not running.
  std::vector<ReadingCost> reading_costs() const;

 private:
  struct State;
  explicit Sampler(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// ---------------------------------------------------------------------------------------------
// Windows over recorded samples of one GPU (in time order). t0/t1 are seconds on the samples'
// clock; the parts of [t0, t1] that the samples do not cover are left out (`seconds` says how
// much was covered).

struct Covered {
  double value = 0;
  double seconds = 0;
};

enum class EnergySource { counter, power_integral };
struct Energy {
  double joules = 0;
  double seconds = 0;
  EnergySource source = EnergySource::counter;
};

// Whether NVML measures a metric per MIG instance: only the GPM activities are (sampled per GPU
// instance); power, energy, temperature, clocks, throttling, memory and the utilizations are
// the whole GPU's, shared by every instance on it.
bool measured_per_instance(Metric metric);

// The samples as seen from one MIG GPU instance: its GPM metrics (and interval) in place of the
// GPU's, every other metric the whole GPU's. A sample without that instance's GPM has none.
std::vector<GpuSample> instance_view(std::span<const GpuSample> samples, unsigned gpu_instance_id);

// The reading at t, linear between the samples around it; nullopt outside them.
std::optional<double> value_at(std::span<const GpuSample> samples, Metric metric, double t);
// The energy counter's change over the window; the integral of power_w where the GPU has no
// counter.
std::optional<Energy> energy_between(std::span<const GpuSample> samples, double t0, double t1);
// Time-weighted mean (GPM metrics weighted by their intervals' overlap with the window).
std::optional<Covered> mean_between(std::span<const GpuSample> samples, Metric metric, double t0,
                                    double t1);
// The largest sampled value inside the window.
std::optional<double> peak_between(std::span<const GpuSample> samples, Metric metric, double t0,
                                   double t1);

struct ThrottleTime {
  double seconds = 0;
  bool from_counter = true;  // false: estimated from the sampled clock-event masks
};
// Seconds each reason held the clocks during the window: from NVML's counters where the GPU has
// them, else estimated from the sampled masks. A reason with neither is absent.
std::map<nvml::ThrottleReason, ThrottleTime> throttle_between(std::span<const GpuSample> samples,
                                                              double t0, double t1);

// ---------------------------------------------------------------------------------------------
// The summary of a monitoring session, built as ticks arrive (memory does not grow with time).

struct GpuSummary {
  SampledGpu gpu;
  std::size_t samples = 0;
  double seconds = 0;  // from its first to its last sample
  std::optional<Energy> energy;
  std::optional<double> power_avg_w;   // energy / its seconds
  std::optional<double> power_peak_w;  // largest power_w sample
  std::optional<double> memory_peak_bytes;
  std::optional<double> sm_activity_avg;  // time-weighted
  std::optional<double> tensor_activity_avg;
  std::optional<double> dram_activity_avg;
  std::optional<double> gpu_utilization_avg;  // the duty cycle
  std::optional<double> temperature_max_c;
  std::optional<double> sm_clock_avg_hz;
  std::map<nvml::ThrottleReason, ThrottleTime> throttle;
  std::optional<double> lost_at_s;
  std::vector<std::string> problems;
  // The observed command's processes seen on this GPU (empty without a command, or when it
  // never used this GPU) and the most memory they held together.
  std::vector<unsigned> command_pids;
  std::optional<double> command_memory_peak_bytes;
};

struct SamplerCost {
  std::uint64_t ticks = 0;
  std::uint64_t missed = 0;
  double cpu_per_tick_s = 0;  // mean
  double cpu_max_s = 0;
  double wall_per_tick_s = 0;
  std::vector<ReadingCost> readings;
};

struct Summary {
  double started_unix_s = 0;
  double wall_s = 0;
  double interval_s = 0;
  std::vector<GpuSummary> gpus;
  std::optional<double> energy_j;  // all GPUs with an energy reading
  SamplerCost sampler;
  // The GPUs (indices) on which the command's processes appeared; nullopt without a command,
  // or when the driver's process list was unreadable for every GPU.
  std::optional<std::vector<unsigned>> command_gpus;
};

class SummaryBuilder {
 public:
  // `is_command_pid` says whether a PID belongs to the observed command (asked once per PID,
  // while it runs); null: no command.
  SummaryBuilder(std::vector<SampledGpu> gpus, double started_unix_s, double interval_s,
                 std::function<bool(unsigned pid)> is_command_pid = {});
  ~SummaryBuilder();
  SummaryBuilder(SummaryBuilder&&) noexcept;
  SummaryBuilder& operator=(SummaryBuilder&&) noexcept;

  void add(const Tick& tick);
  Summary summary(double wall_s) const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// Summary output. The JSON carries "kind": "gpuscope.monitor.summary" and
// "schema_version": kSummarySchemaVersion (pinned by tests/fixtures/telemetry/).
inline constexpr int kSummarySchemaVersion = 1;

}  // namespace gpuscope::telemetry
