#include "power_model.h"

namespace gpuscope::fake_nvml {

std::optional<unsigned> current_power_limit_mw(const State& state, unsigned index) {
  const auto set = state.power_limit_set_mw.find(index);
  if (set != state.power_limit_set_mw.end()) return set->second;
  return state.scenario->devices[index].power_limits.current_mw;
}

std::optional<unsigned> enforced_power_limit_mw(const State& state, unsigned index) {
  const auto set = state.power_limit_set_mw.find(index);
  if (set != state.power_limit_set_mw.end()) return set->second;
  return state.scenario->devices[index].power_limits.enforced_mw;
}

std::optional<double> total_energy_mj(const Device& device, double t) {
  if (!device.energy_counter) return std::nullopt;
  const StepSeries* power = device.timeline.reading("power_mw");
  const double consumed = power == nullptr || t <= 0.0 ? 0.0 : integral(*power, 0.0, t);
  return device.energy_offset_mj + consumed;
}

std::optional<double> average_power_mw(const Device& device, double t) {
  const StepSeries* power = device.timeline.reading("power_mw");
  if (power == nullptr) return std::nullopt;
  return mean(*power, t - 1.0, t);
}

}  // namespace gpuscope::fake_nvml
