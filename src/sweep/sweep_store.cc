// A sweep as a run of the results store (kind "sweep"): one row per measured point and GPU,
// tagged with its power limit, which the report's sweep section draws.
#include <unistd.h>

#include <filesystem>

#include "gpuscope/host.h"
#include "gpuscope/store.h"
#include "gpuscope/sweep.h"
#include "gpuscope/version.h"

namespace gpuscope::sweep {
namespace {

namespace names = store::names;

// "gpuscope-sim-workload --curve fp32_train": the program's name without its folder.
std::string workload_label(const std::vector<std::string>& command) {
  std::string label;
  for (std::size_t i = 0; i < command.size(); ++i) {
    const std::string arg =
        i == 0 ? std::filesystem::path(command[i]).filename().string() : command[i];
    label += (label.empty() ? "" : " ") + arg;
  }
  return label;
}

void add(store::RunData& run, const std::string& configuration, int gpu, const char* name,
         const std::optional<double>& value, const char* unit, const nlohmann::json& tags) {
  if (!value) return;
  run.measurements.push_back({gpu, configuration, name, *value, unit, tags});
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
  const std::string label = workload_label(result.command);
  run.run.configurations.push_back({label, {{"command", result.command}, {"knob", "power_limit"}}});
  const int first_gpu = result.gpus.empty() ? 0 : static_cast<int>(result.gpus.front().index);
  for (const Point& p : result.points) {
    const nlohmann::json tags = {
        {"power_limit_w", p.limit_w}, {"mode", label}, {"refined", p.refined}};
    if (p.skipped) {
      nlohmann::json skipped = tags;
      skipped["skipped"] = *p.skipped;
      run.measurements.push_back(
          {first_gpu, label, names::kSamplesPerS, std::nullopt, "1/s", skipped});
      continue;
    }
    add(run, label, first_gpu, names::kSamplesPerS, p.samples_per_second, "1/s", tags);
    add(run, label, first_gpu, names::kEnergyPerSample, p.joules_per_sample, "J", tags);
    for (const GpuReading& g : p.gpus) {
      const int gpu = static_cast<int>(g.gpu);
      add(run, label, gpu, names::kPowerAvg, g.power_avg_w, "W", tags);
      add(run, label, gpu, names::kEnergy, g.energy_j, "J", tags);
      add(run, label, gpu, names::kSmClockAvg, g.sm_clock_avg_hz, "Hz", tags);
      add(run, label, gpu, names::kTemperatureMax, g.temperature_max_c, "degC", tags);
    }
  }
  for (const Knee& k : result.knees) {
    add(run, label, first_gpu, "power_limit_knee_w", k.limit_w, "W",
        {{"fraction", k.fraction}, {"mode", label}});
  }
  return run;
}

}  // namespace gpuscope::sweep
