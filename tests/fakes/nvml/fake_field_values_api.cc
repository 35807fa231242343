// nvmlDeviceGetFieldValues: the call succeeds and each requested field carries its own return
// code, as with the real library (an unsupported field does not fail the others).
#include <climits>
#include <cmath>
#include <optional>

#include "api_call.h"
#include "power_model.h"

using gpuscope::fake_nvml::ApiCall;

namespace {

namespace fake = gpuscope::fake_nvml;

nvmlReturn_t set_unsigned(nvmlFieldValue_t& value, std::optional<double> reading) {
  if (!reading) return NVML_ERROR_NOT_SUPPORTED;
  value.valueType = NVML_VALUE_TYPE_UNSIGNED_INT;
  value.value.uiVal = fake::reading_as_unsigned(*reading);
  return NVML_SUCCESS;
}

nvmlReturn_t set_unsigned_long_long(nvmlFieldValue_t& value, std::optional<double> reading) {
  if (!reading) return NVML_ERROR_NOT_SUPPORTED;
  value.valueType = NVML_VALUE_TYPE_UNSIGNED_LONG_LONG;
  value.value.ullVal = static_cast<unsigned long long>(std::llround(*reading));
  return NVML_SUCCESS;
}

std::optional<double> reading_now(const ApiCall& call, std::string_view name) {
  const fake::StepSeries* series = call.reading(name);
  if (series == nullptr) return std::nullopt;
  return series->at(call.now());
}

std::optional<double> as_double(std::optional<unsigned> value) {
  if (!value) return std::nullopt;
  return *value;
}

// Nanoseconds in [0, now] during which any bit of `mask` was set in clock_event_reasons: the
// counters behind the clock-event (throttle) fields.
std::optional<double> event_ns(const ApiCall& call, unsigned long long mask) {
  const fake::StepSeries* reasons = call.reading("clock_event_reasons");
  if (reasons == nullptr) return std::nullopt;
  if (call.now() <= 0.0) return 0.0;
  const double seconds = reasons->integral(0.0, call.now(), [mask](double bits) {
    return (static_cast<unsigned long long>(bits) & mask) != 0 ? 1.0 : 0.0;
  });
  return seconds * 1e9;
}

// KiB moved over NVLink since t = 0; scopeId picks a link (the links share the device's total
// evenly) or UINT_MAX for all of them.
nvmlReturn_t set_nvlink_kib(const ApiCall& call, nvmlFieldValue_t& value,
                            std::string_view reading) {
  const auto& nvlink = call.device().nvlink;
  const fake::StepSeries* rate = call.reading(reading);
  if (!nvlink || rate == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  double kib = call.now() > 0.0 ? fake::integral(*rate, 0.0, call.now()) : 0.0;
  if (value.scopeId != UINT_MAX) {
    if (value.scopeId >= nvlink->link_count) return NVML_ERROR_INVALID_ARGUMENT;
    kib /= nvlink->link_count;
  }
  return set_unsigned_long_long(value, kib);
}

nvmlReturn_t fill_power_field(const ApiCall& call, nvmlFieldValue_t& value) {
  // Only the GPU's own power; module and memory scopes are Grace Hopper features.
  if (value.scopeId != NVML_POWER_SCOPE_GPU) return NVML_ERROR_NOT_SUPPORTED;
  const auto& limits = call.device().power_limits;
  const fake::State& state = call.state();
  switch (value.fieldId) {
    case NVML_FI_DEV_POWER_INSTANT:
      return set_unsigned(value, reading_now(call, "power_mw"));
    case NVML_FI_DEV_POWER_AVERAGE:
      return set_unsigned(value, fake::average_power_mw(call.device(), call.now()));
    case NVML_FI_DEV_POWER_MIN_LIMIT:
      return set_unsigned(value, as_double(limits.min_mw));
    case NVML_FI_DEV_POWER_MAX_LIMIT:
      return set_unsigned(value, as_double(limits.max_mw));
    case NVML_FI_DEV_POWER_DEFAULT_LIMIT:
      return set_unsigned(value, as_double(limits.default_mw));
    case NVML_FI_DEV_POWER_CURRENT_LIMIT:
      return set_unsigned(value,
                          as_double(fake::enforced_power_limit_mw(state, call.device_index())));
    case NVML_FI_DEV_POWER_REQUESTED_LIMIT:
      return set_unsigned(value,
                          as_double(fake::current_power_limit_mw(state, call.device_index())));
    default:
      return NVML_ERROR_NOT_SUPPORTED;
  }
}

nvmlReturn_t fill_field(const ApiCall& call, nvmlFieldValue_t& value) {
  if (value.fieldId >= NVML_FI_MAX) return NVML_ERROR_INVALID_ARGUMENT;
  if (call.device().unsupported_fields.contains(value.fieldId)) return NVML_ERROR_NOT_SUPPORTED;
  constexpr auto kSwPowerCap = static_cast<unsigned long long>(nvmlClocksEventReasonSwPowerCap);
  constexpr auto kSyncBoost = static_cast<unsigned long long>(nvmlClocksEventReasonSyncBoost);
  constexpr auto kSwThermal =
      static_cast<unsigned long long>(nvmlClocksEventReasonSwThermalSlowdown);
  constexpr auto kHwThermal =
      static_cast<unsigned long long>(nvmlClocksThrottleReasonHwThermalSlowdown);
  constexpr auto kHwPowerBrake =
      static_cast<unsigned long long>(nvmlClocksThrottleReasonHwPowerBrakeSlowdown);
  switch (value.fieldId) {
    case NVML_FI_DEV_ECC_CURRENT: {
      const auto& ecc = call.device().ecc;
      return set_unsigned(value, ecc ? std::optional(ecc->current ? 1.0 : 0.0) : std::nullopt);
    }
    case NVML_FI_DEV_MEMORY_TEMP:
      return set_unsigned(value, reading_now(call, "mem_temp_c"));
    case NVML_FI_DEV_POWER_INSTANT:
    case NVML_FI_DEV_POWER_AVERAGE:
    case NVML_FI_DEV_POWER_MIN_LIMIT:
    case NVML_FI_DEV_POWER_MAX_LIMIT:
    case NVML_FI_DEV_POWER_DEFAULT_LIMIT:
    case NVML_FI_DEV_POWER_CURRENT_LIMIT:
    case NVML_FI_DEV_POWER_REQUESTED_LIMIT:
      return fill_power_field(call, value);
    case NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_POWER_CAP:  // == NVML_FI_DEV_PERF_POLICY_POWER
      return set_unsigned_long_long(value, event_ns(call, kSwPowerCap));
    case NVML_FI_DEV_CLOCKS_EVENT_REASON_SYNC_BOOST:  // == NVML_FI_DEV_PERF_POLICY_SYNC_BOOST
      return set_unsigned_long_long(value, event_ns(call, kSyncBoost));
    case NVML_FI_DEV_PERF_POLICY_THERMAL:
      return set_unsigned_long_long(value, event_ns(call, kSwThermal | kHwThermal));
    case NVML_FI_DEV_CLOCKS_EVENT_REASON_SW_THERM_SLOWDOWN:
      return set_unsigned_long_long(value, event_ns(call, kSwThermal));
    case NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_THERM_SLOWDOWN:
      return set_unsigned_long_long(value, event_ns(call, kHwThermal));
    case NVML_FI_DEV_CLOCKS_EVENT_REASON_HW_POWER_BRAKE_SLOWDOWN:
      return set_unsigned_long_long(value, event_ns(call, kHwPowerBrake));
    case NVML_FI_DEV_NVLINK_LINK_COUNT: {
      const auto& nvlink = call.device().nvlink;
      return set_unsigned(value, nvlink ? std::optional<double>(nvlink->link_count) : std::nullopt);
    }
    case NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_TX:
      return set_nvlink_kib(call, value, "nvlink_tx_kibps");
    case NVML_FI_DEV_NVLINK_THROUGHPUT_DATA_RX:
      return set_nvlink_kib(call, value, "nvlink_rx_kibps");
    default:
      return NVML_ERROR_NOT_SUPPORTED;
  }
}

}  // namespace

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetFieldValues(nvmlDevice_t device,
                                                                int valuesCount,
                                                                nvmlFieldValue_t* values) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  if (valuesCount < 0 || (valuesCount > 0 && values == nullptr)) {
    return NVML_ERROR_INVALID_ARGUMENT;
  }
  const long long stamp = static_cast<long long>(fake::timestamp_us(call.now()));
  for (int i = 0; i < valuesCount; ++i) {
    nvmlFieldValue_t& value = values[i];
    value.timestamp = stamp;
    value.latencyUsec = 0;
    value.nvmlReturn = fill_field(call, value);
  }
  return NVML_SUCCESS;
}
