// Power limits and energy as the fake derives them; shared by the power getters and the field
// values (NVML reports both through either).
#pragma once

#include <optional>

#include "fake_state.h"
#include "scenario.h"

namespace gpuscope::fake_nvml {

// The limit in force on GPU `index`: the last one set through
// nvmlDeviceSetPowerManagementLimit, else the scenario's power_limit_mw.
std::optional<unsigned> current_power_limit_mw(const State& state, unsigned index);

// The enforced limit: a limit set through NVML is enforced at once (no other limiter is
// modelled), else the scenario's enforced_power_limit_mw.
std::optional<unsigned> enforced_power_limit_mw(const State& state, unsigned index);

// energy_offset_mj + the exact integral of power_mw over [0, t] (mW x s = mJ); nullopt when
// the device has no energy counter.
std::optional<double> total_energy_mj(const Device& device, double t);

// Mean power over the last second, [t - 1, t] (NVML_FI_DEV_POWER_AVERAGE); nullopt when the
// timeline has no power_mw.
std::optional<double> average_power_mw(const Device& device, double t);

}  // namespace gpuscope::fake_nvml
