// Readings served by nvmlDeviceGetFieldValues: the clock-event (throttle) time counters.
#include <array>
#include <utility>

#include "gpuscope/nvml.h"
#include "nvml/nvml_api.h"
#include "nvml/nvml_error.h"
#include "nvml/nvml_field_value.h"

namespace gpuscope::nvml {
namespace {

// A counter for a reason, in order of preference: drivers before the CLOCKS_EVENT_REASON_*
// fields (r535) have only the PERF_POLICY ones, whose thermal policy NVIDIA's translation table
// maps to the software thermal slowdown.
struct CounterField {
  ThrottleReason reason;
  unsigned field_id;
};
constexpr std::array<CounterField, 5> kCounterFields = {{
    {ThrottleReason::sw_power_cap, NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP},
    {ThrottleReason::sw_thermal, NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN},
    {ThrottleReason::sw_thermal, NVML_FI_DEV_PERF_POLICY_THERMAL},
    {ThrottleReason::hw_thermal, NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN},
    {ThrottleReason::hw_power_brake, NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN},
}};

}  // namespace

std::string_view throttle_reason_name(ThrottleReason reason) {
  switch (reason) {
    case ThrottleReason::sw_power_cap:
      return "sw_power_cap";
    case ThrottleReason::hw_slowdown:
      return "hw_slowdown";
    case ThrottleReason::sw_thermal:
      return "sw_thermal_slowdown";
    case ThrottleReason::hw_thermal:
      return "hw_thermal_slowdown";
    case ThrottleReason::hw_power_brake:
      return "hw_power_brake_slowdown";
  }
  return "unknown";
}

std::uint64_t throttle_reason_bit(ThrottleReason reason) {
  switch (reason) {
    case ThrottleReason::sw_power_cap:
      return nvmlClocksEventReasonSwPowerCap;
    case ThrottleReason::hw_slowdown:
      return nvmlClocksThrottleReasonHwSlowdown;
    case ThrottleReason::sw_thermal:
      return nvmlClocksEventReasonSwThermalSlowdown;
    case ThrottleReason::hw_thermal:
      return nvmlClocksThrottleReasonHwThermalSlowdown;
    case ThrottleReason::hw_power_brake:
      return nvmlClocksThrottleReasonHwPowerBrakeSlowdown;
  }
  return 0;
}

Result<std::map<ThrottleReason, std::uint64_t>> Device::throttle_time_ns() const {
  std::array<nvmlFieldValue_t, kCounterFields.size()> values{};
  for (std::size_t i = 0; i < kCounterFields.size(); ++i) {
    values[i].fieldId = kCounterFields[i].field_id;
  }
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_NVML_CALL(*api_, nvmlDeviceGetFieldValues, handle_,
                                              static_cast<int>(values.size()), values.data()));
  std::map<ThrottleReason, std::uint64_t> counters;
  for (std::size_t i = 0; i < kCounterFields.size(); ++i) {
    const std::optional<std::uint64_t> ns = detail::field_as_u64(values[i]);
    if (ns) counters.emplace(kCounterFields[i].reason, *ns);  // the first supported field wins
  }
  return counters;
}

}  // namespace gpuscope::nvml
