// A sweep as a run of the results store (kind "sweep"): one row per measured point and GPU,
// tagged with its power limit (power_limit_w) or SM clock lock (sm_clock_lock_mhz), which the
// report's sweep section draws.
#include <unistd.h>

#include "gpuscope/host.h"
#include "gpuscope/store.h"
#include "gpuscope/sweep.h"
#include "gpuscope/version.h"

namespace gpuscope::sweep {
namespace {

namespace names = store::names;

void add(store::RunData& run, const std::string& configuration, int gpu, const char* name,
         const std::optional<double>& value, const char* unit, const nlohmann::json& tags) {
  if (!value) return;
  run.measurements.push_back({gpu, configuration, name, *value, unit, tags});
}

// One workload's curve: its rate (samples/s, or a GEMM's TFLOP/s stored in FLOP/s) and energy
// per unit at each limit, tagged with the workload's tags (one curve per mode in the report).
void add_workload(store::RunData& run, const WorkloadResult& w, Knob knob, int first_gpu) {
  const bool clocks = knob == Knob::locked_clocks;
  const std::string& label = w.spec.label;
  nlohmann::json base = w.spec.tags.is_object() && !w.spec.tags.empty()
                            ? w.spec.tags
                            : nlohmann::json{{"mode", label}};
  run.run.configurations.push_back(
      {label, {{"command", w.spec.command}, {"knob", knob_name(knob)}, {"tags", base}}});
  const bool flops = w.spec.unit == "TFLOP/s" || w.spec.unit == "TOP/s";  // a burn GEMM
  const char* rate_name = flops ? names::kGemmFlopPerS : names::kSamplesPerS;
  const double rate_scale = flops ? 1e12 : 1;
  if (w.skipped) {
    nlohmann::json skipped = base;
    skipped["skipped"] = *w.skipped;
    run.measurements.push_back({first_gpu, label, rate_name, std::nullopt, "1/s", skipped});
    return;
  }
  for (const Point& p : w.points) {
    nlohmann::json tags = base;
    tags[knob_key(knob)] = p.value;
    tags["refined"] = p.refined;
    if (p.skipped) {
      tags["skipped"] = *p.skipped;
      run.measurements.push_back({first_gpu, label, rate_name, std::nullopt, "1/s", tags});
      continue;
    }
    add(run, label, first_gpu, rate_name, p.samples_per_second * rate_scale, "1/s", tags);
    // A GEMM has no samples: its energy is in its GPUs' power and energy below.
    if (!flops) add(run, label, first_gpu, names::kEnergyPerSample, p.joules_per_sample, "J", tags);
    for (const GpuReading& g : p.gpus) {
      const int gpu = static_cast<int>(g.gpu);
      add(run, label, gpu, names::kPowerAvg, g.power_avg_w, "W", tags);
      add(run, label, gpu, names::kEnergy, g.energy_j, "J", tags);
      add(run, label, gpu, names::kSmClockAvg, g.sm_clock_avg_hz, "Hz", tags);
      add(run, label, gpu, names::kTemperatureMax, g.temperature_max_c, "degC", tags);
    }
  }
  for (const Knee& k : w.knees) {
    nlohmann::json tags = base;
    tags["fraction"] = k.fraction;
    add(run, label, first_gpu, clocks ? "sm_clock_lock_knee_mhz" : "power_limit_knee_w", k.value,
        knob_unit(knob), tags);
  }
}

}  // namespace

store::RunData sweep_to_run(const SweepResult& result, const std::string& command_line) {
  store::RunData run;
  run.run.kind = "sweep";
  run.run.started_unix_s = result.started_unix_s;
  run.run.ended_unix_s = result.started_unix_s + result.wall_s;
  run.run.host = host_name();
  run.run.command_line = command_line;
  run.run.gpuscope_version = std::string(version());
  for (const GpuPrior& g : result.gpus) {
    store::GpuRecord gpu;
    gpu.gpu = static_cast<int>(g.index);
    gpu.name = g.name;
    gpu.uuid = g.uuid;
    gpu.power_limit_w = g.prior_limit_w;
    gpu.power_default_limit_w = g.default_limit_w;
    gpu.power_min_limit_w = g.min_limit_w;
    gpu.power_max_limit_w = g.max_limit_w;
    run.run.gpus.push_back(std::move(gpu));
  }
  const int first_gpu = result.gpus.empty() ? 0 : static_cast<int>(result.gpus.front().index);
  for (const WorkloadResult& w : result.workloads) add_workload(run, w, result.knob, first_gpu);
  return run;
}

}  // namespace gpuscope::sweep
