#include "fake_state.h"

#include <fstream>
#include <sstream>

namespace gpuscope::fake_nvml {

std::mutex& shared_state_mutex() {
  static std::mutex mutex;
  return mutex;
}

State& shared_state() {
  static State instance;
  return instance;
}

double current_time(const State& state) {
  if (state.manual_time) return *state.manual_time;
  if (!state.clock_origin) return 0.0;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - *state.clock_origin)
      .count();
}

void install_scenario(State& state, Scenario scenario) {
  state.scenario = std::move(scenario);
  state.settings.clear();
  state.clock_origin.reset();
  if (state.init_refcount > 0) state.clock_origin = std::chrono::steady_clock::now();
}

Scenario load_scenario_file(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) throw ScenarioError(path + ": cannot open");
  std::ostringstream text;
  text << file.rdbuf();
  try {
    return parse_scenario(text.str());
  } catch (const ScenarioError& e) {
    throw ScenarioError(path + ": " + e.what());
  }
}

}  // namespace gpuscope::fake_nvml
