// Power limits, energy and the simulated response to the power limit, as the fake derives them;
// shared by the power getters, the readings and the field values (NVML reports them through
// several calls).
#pragma once

#include <optional>
#include <string_view>

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
// the device has no energy counter. A device with a power_response integrates the modelled
// power instead (on model_clock_s, across processes), which may record the first reading.
std::optional<double> total_energy_mj(State& state, unsigned index, double t);

// Mean power over the last second, [t - 1, t] (NVML_FI_DEV_POWER_AVERAGE); nullopt when the
// timeline has no power_mw.
std::optional<double> average_power_mw(const Device& device, double t);

// Where a GPU with a power_response runs now, for the settings in force: the SM clock is
// min(the lock's maximum, the clock the power limit allows); a lock that binds sets the speed
// (fraction = clock / peak_sm_clock_mhz) and the power (the curve's limit for that fraction).
struct OperatingPoint {
  bool busy = false;          // a workload runs
  double speed_fraction = 0;  // of its speed at the maximum limit
  double samples_per_second = 0;
  double power_w = 0;
  double sm_clock_mhz = 0;
  double temperature_c = 0;
  bool power_capped = false;   // the limit holds it below what it would draw
  bool clocks_locked = false;  // an SM clock lock holds it below what the limit allows
};

// nullopt when the device has no power_response.
std::optional<OperatingPoint> operating_point(const State& state, unsigned index);
std::optional<OperatingPoint> operating_point(const Device& device, const DeviceSettings& settings);

// The modelled value of a timeline reading ("power_mw", "sm_clock_mhz", "graphics_clock_mhz",
// "gpu_temp_c", "gpu_util_percent", "clock_event_reasons"); nullopt when the device has no
// power_response or the reading is not modelled (it then follows the timeline).
std::optional<double> modelled_reading(const State& state, unsigned index, std::string_view name);

// Changes GPU `index`'s settings, first booking the energy used at the old operating point.
void change_device_settings(State& state, unsigned index,
                            const std::function<void(DeviceSettings&)>& change);

}  // namespace gpuscope::fake_nvml
