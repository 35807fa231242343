// The fake's one global state, guarded by one mutex (the sampler calls from its own thread).
#pragma once

#include <chrono>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>

#include "fake_nvml_export.h"
#include "scenario.h"
#include "settings.h"

// A GPM sample buffer: what nvmlGpmSampleGet recorded (nvml.h leaves the type opaque).
struct nvmlGpmSample_st {
  bool taken = false;
  unsigned device_index = 0;
  std::optional<unsigned> gpu_instance_id;  // set by nvmlGpmMigSampleGet
  double t = 0.0;                           // scenario time of the sample
};

namespace gpuscope::fake_nvml {

inline constexpr const char* kScenarioEnvVar = "GPUSCOPE_FAKE_NVML_SCENARIO";

struct State {
  // Present once loaded by the control API or by the first nvmlInit_v2.
  std::optional<Scenario> scenario;
  std::string last_error;

  unsigned init_refcount = 0;
  unsigned init_count = 0;
  unsigned shutdown_count = 0;
  std::map<std::string, long long, std::less<>> call_counts;

  std::optional<double> manual_time;
  // Real time counts from here; set by the first successful nvmlInit_v2 after a load.
  std::optional<std::chrono::steady_clock::time_point> clock_origin;

  Settings settings;  // without a state file (settings.h)
  std::map<const nvmlGpmSample_st*, std::unique_ptr<nvmlGpmSample_st>> gpm_samples;
};

// REQUIRES: use shared_state() only with shared_state_mutex() held.
std::mutex& shared_state_mutex();
State& shared_state();

// Scenario time now, in seconds.
double current_time(const State& state);

// Makes `scenario` the current one, forgetting what the last one's users changed in this
// process (power limits; a state file is left as it is) and restarting the real clock.
void install_scenario(State& state, Scenario scenario);

// Reads and parses a scenario file. Throws ScenarioError.
Scenario load_scenario_file(const std::string& path);

}  // namespace gpuscope::fake_nvml
