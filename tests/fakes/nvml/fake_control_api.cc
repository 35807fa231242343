// The control API (fake_nvml_control.h). These functions take the state lock like the NVML
// entry points but are not counted as NVML calls.
#include <cstdlib>
#include <exception>
#include <mutex>
#include <string>

#include "fake_nvml_control.h"
#include "fake_state.h"
#include "power_model.h"

namespace {

namespace fake = gpuscope::fake_nvml;

int install_or_record(fake::State& state, auto&& parse) {
  try {
    fake::install_scenario(state, parse());
    state.last_error.clear();
    return 0;
  } catch (const std::exception& e) {
    state.last_error = e.what();
    return 1;
  }
}

// Under the state lock, installs the scenario `parse(source)` makes, or records why not
// (`missing` where `source` is null): 0 when installed, 1 when not.
int load_scenario(const char* source, const char* missing, auto&& parse) {
  std::lock_guard lock(fake::shared_state_mutex());
  fake::State& state = fake::shared_state();
  if (source == nullptr) {
    state.last_error = missing;
    return 1;
  }
  return install_or_record(state, [&] { return parse(source); });
}

}  // namespace

extern "C" {

int gpuscope_fake_nvml_load_scenario(const char* json_text) {
  return load_scenario(json_text, "no scenario text",
                       [](const char* text) { return fake::parse_scenario(text); });
}

int gpuscope_fake_nvml_load_scenario_file(const char* path) {
  return load_scenario(path, "no scenario path",
                       [](const char* file) { return fake::load_scenario_file(file); });
}

const char* gpuscope_fake_nvml_last_error(void) {
  std::lock_guard lock(fake::shared_state_mutex());
  return fake::shared_state().last_error.c_str();
}

void gpuscope_fake_nvml_set_time(double seconds) {
  std::lock_guard lock(fake::shared_state_mutex());
  fake::shared_state().manual_time = seconds;
}

void gpuscope_fake_nvml_reset(void) {
  std::lock_guard lock(fake::shared_state_mutex());
  fake::shared_state() = fake::State{};
}

unsigned gpuscope_fake_nvml_init_count(void) {
  std::lock_guard lock(fake::shared_state_mutex());
  return fake::shared_state().init_count;
}

unsigned gpuscope_fake_nvml_shutdown_count(void) {
  std::lock_guard lock(fake::shared_state_mutex());
  return fake::shared_state().shutdown_count;
}

long long gpuscope_fake_nvml_call_count(const char* function_name) {
  if (function_name == nullptr) return 0;
  std::lock_guard lock(fake::shared_state_mutex());
  const auto& counts = fake::shared_state().call_counts;
  const auto it = counts.find(std::string_view(function_name));
  return it == counts.end() ? 0 : it->second;
}

unsigned gpuscope_fake_nvml_power_limit_set_mw(unsigned device_index) {
  std::lock_guard lock(fake::shared_state_mutex());
  const fake::Settings settings = fake::read_settings(fake::shared_state());
  const auto it = settings.find(device_index);
  return it == settings.end() ? 0 : it->second.power_limit_mw.value_or(0);
}

int gpuscope_fake_nvml_locked_clocks_mhz(unsigned device_index, unsigned* min_mhz,
                                         unsigned* max_mhz) {
  std::lock_guard lock(fake::shared_state_mutex());
  const fake::Settings settings = fake::read_settings(fake::shared_state());
  const auto it = settings.find(device_index);
  if (it == settings.end() || !it->second.locked_clocks_mhz) return 0;
  if (min_mhz != nullptr) *min_mhz = it->second.locked_clocks_mhz->first;
  if (max_mhz != nullptr) *max_mhz = it->second.locked_clocks_mhz->second;
  return 1;
}

namespace {

// The scenario's device `index` with a power_response, loading the scenario file the way
// nvmlInit_v2 would; nullptr (and last_error says why) otherwise.
const fake::Device* simulated_device(fake::State& state, unsigned index) {
  if (!state.scenario) {
    const char* path = std::getenv(fake::kScenarioEnvVar);
    if (path == nullptr || *path == '\0') {
      state.last_error = "no scenario loaded and no GPUSCOPE_FAKE_NVML_SCENARIO";
      return nullptr;
    }
    if (install_or_record(state, [&] { return fake::load_scenario_file(path); }) != 0) {
      return nullptr;
    }
  }
  if (index >= state.scenario->devices.size()) {
    state.last_error = "no GPU " + std::to_string(index) + " in the scenario";
    return nullptr;
  }
  const fake::Device& device = state.scenario->devices[index];
  if (!device.power_response) {
    state.last_error = "GPU " + std::to_string(index) + " has no power_response";
    return nullptr;
  }
  return &device;
}

}  // namespace

int gpuscope_fake_nvml_start_workload(unsigned device_index, const char* curve, long pid) {
  std::lock_guard lock(fake::shared_state_mutex());
  fake::State& state = fake::shared_state();
  const fake::Device* device = simulated_device(state, device_index);
  if (device == nullptr) return 1;
  if (curve == nullptr || !device->power_response->curves.contains(std::string_view(curve))) {
    state.last_error = std::string("no curve '") + (curve ? curve : "") + "' on GPU " +
                       std::to_string(device_index);
    return 1;
  }
  fake::change_device_settings(state, device_index, [&](fake::DeviceSettings& settings) {
    settings.workload = curve;
    settings.workload_pid = pid;
  });
  return 0;
}

void gpuscope_fake_nvml_stop_workload(unsigned device_index) {
  std::lock_guard lock(fake::shared_state_mutex());
  fake::State& state = fake::shared_state();
  if (simulated_device(state, device_index) == nullptr) return;
  fake::change_device_settings(state, device_index, [](fake::DeviceSettings& settings) {
    settings.workload.clear();
    settings.workload_pid = 0;
  });
}

double gpuscope_fake_nvml_workload_samples_per_second(unsigned device_index) {
  std::lock_guard lock(fake::shared_state_mutex());
  fake::State& state = fake::shared_state();
  if (simulated_device(state, device_index) == nullptr) return -1.0;
  return fake::operating_point(state, device_index)->samples_per_second;
}

}  // extern "C"
