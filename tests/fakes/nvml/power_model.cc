#include "power_model.h"

#include <algorithm>

namespace gpuscope::fake_nvml {
namespace {

constexpr unsigned long long kSwPowerCapBit = 0x4;  // nvmlClocksEventReasonSwPowerCap
// nvmlClocksEventReasonApplicationsClocksSetting: also what a locked clock shows
constexpr unsigned long long kApplicationsClocksBit = 0x2;

DeviceSettings settings_of(const State& state, unsigned index) {
  const Settings settings = read_settings(state);
  const auto it = settings.find(index);
  return it == settings.end() ? DeviceSettings{} : it->second;
}

double fraction_at(const WorkloadCurve& curve, double limit_w) {
  const auto& points = curve.points;
  if (limit_w <= points.front().first) return points.front().second;
  if (limit_w >= points.back().first) return points.back().second;
  for (std::size_t i = 1; i < points.size(); ++i) {
    if (limit_w > points[i].first) continue;
    const auto [w0, f0] = points[i - 1];
    const auto [w1, f1] = points[i];
    return f0 + (f1 - f0) * (limit_w - w0) / (w1 - w0);
  }
  return points.back().second;
}

// The lowest limit at which `curve` runs at `fraction` of its peak (the inverse of fraction_at);
// below the first point, linear from (idle_w, 0).
double power_for(const WorkloadCurve& curve, double fraction, double idle_w) {
  const auto& points = curve.points;
  if (fraction <= points.front().second) {
    const auto [w0, f0] = points.front();
    return f0 > 0 ? idle_w + (w0 - idle_w) * std::max(0.0, fraction) / f0 : w0;
  }
  for (std::size_t i = 1; i < points.size(); ++i) {
    if (fraction > points[i].second) continue;
    const auto [w0, f0] = points[i - 1];
    const auto [w1, f1] = points[i];
    return f1 > f0 ? w0 + (w1 - w0) * (fraction - f0) / (f1 - f0) : w0;
  }
  return points.back().first;
}

std::optional<unsigned> limit_of(const Device& device, const DeviceSettings& settings) {
  return settings.power_limit_mw ? settings.power_limit_mw : device.power_limits.current_mw;
}

}  // namespace

std::optional<unsigned> current_power_limit_mw(const State& state, unsigned index) {
  return limit_of(state.scenario->devices[index], settings_of(state, index));
}

std::optional<unsigned> enforced_power_limit_mw(const State& state, unsigned index) {
  const DeviceSettings settings = settings_of(state, index);
  if (settings.power_limit_mw) return settings.power_limit_mw;
  return state.scenario->devices[index].power_limits.enforced_mw;
}

std::optional<OperatingPoint> operating_point(const Device& device,
                                              const DeviceSettings& settings) {
  if (!device.power_response) return std::nullopt;
  const PowerResponse& response = *device.power_response;
  OperatingPoint point;
  point.power_w = response.idle_power_w;
  point.sm_clock_mhz = response.idle_sm_clock_mhz;
  const auto& lock = settings.locked_clocks_mhz;
  if (lock) {  // an idle GPU keeps to its lock too
    point.sm_clock_mhz = std::clamp(point.sm_clock_mhz, static_cast<double>(lock->first),
                                    static_cast<double>(lock->second));
  }
  const auto curve = response.curves.find(settings.workload);
  if (curve != response.curves.end() && workload_running(settings)) {
    const auto limit_mw = limit_of(device, settings);
    const double limit_w = limit_mw ? *limit_mw / 1000.0 : curve->second.max_draw_w;
    point.busy = true;
    point.speed_fraction = fraction_at(curve->second, limit_w);
    point.power_w = std::min(limit_w, curve->second.max_draw_w);
    point.power_capped = limit_w < curve->second.max_draw_w;
    point.sm_clock_mhz = response.peak_sm_clock_mhz * point.speed_fraction;
    // A lock below the clock the limit allows holds the clock there; the speed follows the
    // clock and the power is what the curve draws at that speed (the limit no longer binds).
    if (lock && lock->second < point.sm_clock_mhz && response.peak_sm_clock_mhz > 0) {
      point.sm_clock_mhz = lock->second;
      point.speed_fraction = lock->second / response.peak_sm_clock_mhz;
      point.power_w = std::min(
          point.power_w, power_for(curve->second, point.speed_fraction, response.idle_power_w));
      point.power_capped = false;
      point.clocks_locked = true;
    }
    point.samples_per_second = curve->second.peak_samples_per_second * point.speed_fraction;
  }
  point.temperature_c = response.ambient_c + response.c_per_w * point.power_w;
  return point;
}

std::optional<OperatingPoint> operating_point(const State& state, unsigned index) {
  return operating_point(state.scenario->devices[index], settings_of(state, index));
}

std::optional<double> modelled_reading(const State& state, unsigned index, std::string_view name) {
  const Device& device = state.scenario->devices[index];
  if (!device.power_response) return std::nullopt;
  const auto point = operating_point(state, index);
  if (name == "power_mw") return point->power_w * 1000.0;
  if (name == "sm_clock_mhz" || name == "graphics_clock_mhz") return point->sm_clock_mhz;
  if (name == "gpu_temp_c") return point->temperature_c;
  if (name == "gpu_util_percent") return point->busy ? 100.0 : 0.0;
  if (name == "clock_event_reasons") {
    return static_cast<double>((point->power_capped ? kSwPowerCapBit : 0) |
                               (point->clocks_locked ? kApplicationsClocksBit : 0));
  }
  return std::nullopt;
}

namespace {

// Books the energy used since energy_at_s at the operating point of `settings`.
void book_energy(const Device& device, DeviceSettings& settings, double now) {
  const auto point = operating_point(device, settings);
  if (settings.energy_at_s && point) {
    settings.energy_mj += point->power_w * 1000.0 * std::max(0.0, now - *settings.energy_at_s);
  }
  settings.energy_at_s = now;
}

}  // namespace

void change_device_settings(State& state, unsigned index,
                            const std::function<void(DeviceSettings&)>& change) {
  const Device& device = state.scenario->devices[index];
  const double now = model_clock_s(state);
  update_settings(state, [&](Settings& settings) {
    DeviceSettings& mine = settings[index];
    book_energy(device, mine, now);
    change(mine);
  });
}

std::optional<double> total_energy_mj(State& state, unsigned index, double t) {
  const Device& device = state.scenario->devices[index];
  if (!device.energy_counter) return std::nullopt;
  if (!device.power_response) {
    const StepSeries* power = device.timeline.reading("power_mw");
    const double consumed = power == nullptr || t <= 0.0 ? 0.0 : integral(*power, 0.0, t);
    return device.energy_offset_mj + consumed;
  }
  DeviceSettings settings = settings_of(state, index);
  if (!settings.energy_at_s) {
    change_device_settings(state, index, [](DeviceSettings&) {});
    settings = settings_of(state, index);
  }
  book_energy(device, settings, model_clock_s(state));
  return device.energy_offset_mj + settings.energy_mj;
}

std::optional<double> average_power_mw(const Device& device, double t) {
  const StepSeries* power = device.timeline.reading("power_mw");
  if (power == nullptr) return std::nullopt;
  return mean(*power, t - 1.0, t);
}

}  // namespace gpuscope::fake_nvml
