// The control API (fake_nvml_control.h). These functions take the state lock like the NVML
// entry points but are not counted as NVML calls.
#include <exception>
#include <mutex>
#include <string>

#include "fake_nvml_control.h"
#include "fake_state.h"

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

}  // namespace

extern "C" {

int gpuscope_fake_nvml_load_scenario(const char* json_text) {
  std::lock_guard lock(fake::shared_state_mutex());
  fake::State& state = fake::shared_state();
  if (json_text == nullptr) {
    state.last_error = "no scenario text";
    return 1;
  }
  return install_or_record(state, [&] { return fake::parse_scenario(json_text); });
}

int gpuscope_fake_nvml_load_scenario_file(const char* path) {
  std::lock_guard lock(fake::shared_state_mutex());
  fake::State& state = fake::shared_state();
  if (path == nullptr) {
    state.last_error = "no scenario path";
    return 1;
  }
  return install_or_record(state, [&] { return fake::load_scenario_file(path); });
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
  const auto& set = fake::shared_state().power_limit_set_mw;
  const auto it = set.find(device_index);
  return it == set.end() ? 0 : it->second;
}

}  // extern "C"
