#include "api_call.h"

#include <algorithm>
#include <cmath>
#include <limits>

#include "device_handles.h"
#include "power_model.h"

namespace gpuscope::fake_nvml {

ApiCall::ApiCall(const char* function)
    : lock_(shared_state_mutex()), state_(shared_state()), function_(function) {
  const auto it = state_.call_counts.find(function_);
  if (it == state_.call_counts.end()) {
    state_.call_counts.emplace(std::string(function_), 1);
  } else {
    ++it->second;
  }
  now_ = current_time(state_);
}

nvmlReturn_t ApiCall::check_system() const {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  return scripted_failure(std::nullopt);
}

nvmlReturn_t ApiCall::check_index(unsigned index) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  if (index >= scenario().devices.size()) return NVML_ERROR_INVALID_ARGUMENT;
  device_index_ = index;
  mig_ = nullptr;
  return check_gpu(index, false);
}

nvmlReturn_t ApiCall::check_device(nvmlDevice_t handle, HandleUse use) {
  if (!initialized()) return NVML_ERROR_UNINITIALIZED;
  const std::optional<HandleTarget> target = decode_handle(handle);
  if (!target || target->gpu >= scenario().devices.size()) return NVML_ERROR_INVALID_ARGUMENT;
  const Device& gpu = scenario().devices[target->gpu];
  mig_ = nullptr;
  if (target->mig) {
    if (!gpu.mig || !gpu.mig->current || *target->mig >= gpu.mig->instances.size()) {
      return NVML_ERROR_INVALID_ARGUMENT;
    }
    mig_ = &gpu.mig->instances[*target->mig];
  }
  device_index_ = target->gpu;
  return check_gpu(target->gpu, mig_ != nullptr && use == HandleUse::kGpuOnly);
}

nvmlReturn_t ApiCall::check_gpu(unsigned index, bool refuse_mig_handle) const {
  const Device& gpu = scenario().devices[index];
  if (gpu.lost_at_t && now_ >= *gpu.lost_at_t) return NVML_ERROR_GPU_IS_LOST;
  if (refuse_mig_handle) return NVML_ERROR_NOT_SUPPORTED;
  if (const nvmlReturn_t failure = scripted_failure(index); failure != NVML_SUCCESS) {
    return failure;
  }
  if (gpu.unsupported_functions.contains(function_)) return NVML_ERROR_NOT_SUPPORTED;
  return NVML_SUCCESS;
}

nvmlReturn_t ApiCall::scripted_failure(std::optional<unsigned> device) const {
  for (const ScriptedError& error : scenario().errors) {
    if (error.function != function_) continue;
    if (error.device && error.device != device) continue;
    if (now_ < error.from_t || (error.until_t && now_ >= *error.until_t)) continue;
    return error.result;
  }
  return NVML_SUCCESS;
}

nvmlReturn_t write_value(const std::optional<unsigned>& value, unsigned* out) {
  if (!value) return NVML_ERROR_NOT_SUPPORTED;
  if (out == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *out = *value;
  return NVML_SUCCESS;
}

unsigned reading_as_unsigned(double value) {
  constexpr double kMax = std::numeric_limits<unsigned>::max();
  return static_cast<unsigned>(std::llround(std::min(value, kMax)));
}

nvmlReturn_t write_reading(const ApiCall& call, std::string_view name, unsigned* out) {
  if (const auto modelled = modelled_reading(call.state(), call.device_index(), name)) {
    return write_value(reading_as_unsigned(*modelled), out);
  }
  const StepSeries* series = call.reading(name);
  if (series == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  return write_value(reading_as_unsigned(series->at(call.now())), out);
}

unsigned long long timestamp_us(double t) {
  constexpr unsigned long long kScenarioEpochUs = 1'735'689'600'000'000ULL;
  return kScenarioEpochUs + static_cast<unsigned long long>(std::llround(std::max(t, 0.0) * 1e6));
}

}  // namespace gpuscope::fake_nvml
