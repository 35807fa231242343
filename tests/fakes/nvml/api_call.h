// What every NVML entry point of the fake does before it answers: take the state lock (held
// until it returns), count the call, check initialization, and, for calls on a device, resolve
// the handle and apply the scenario's failures in the order the real library reports them:
//
//   NVML_ERROR_UNINITIALIZED     before nvmlInit_v2 / after the last nvmlShutdown
//   NVML_ERROR_INVALID_ARGUMENT  not a handle of a device in this scenario
//   NVML_ERROR_GPU_IS_LOST       the GPU (or the MIG device's parent) is past its lost_at_t
//   NVML_ERROR_NOT_SUPPORTED     a MIG handle passed to a call that only takes GPUs
//   <scripted>                   a matching entry of the scenario's "errors"
//   NVML_ERROR_NOT_SUPPORTED     the function is in the device's "unsupported" list
//
// Argument checks (null pointers, enum ranges, struct versions) come after these, in each
// entry point.
#pragma once

#include <mutex>
#include <optional>
#include <string>
#include <string_view>

#include "fake_nvml_export.h"
#include "fake_state.h"
#include "nvml_strings.h"
#include "scenario.h"

namespace gpuscope::fake_nvml {

enum class HandleUse { kGpuOnly, kGpuOrMig };

class ApiCall {
 public:
  // `function` is the entry point's name (pass __func__).
  explicit ApiCall(const char* function);
  ApiCall(const ApiCall&) = delete;
  ApiCall& operator=(const ApiCall&) = delete;

  // For calls that name no device: initialization and device-less scripted errors.
  nvmlReturn_t check_system() const;
  // For calls that take a GPU index.
  nvmlReturn_t check_index(unsigned index);
  // For calls that take a handle.
  nvmlReturn_t check_device(nvmlDevice_t handle, HandleUse use = HandleUse::kGpuOnly);

  State& state() { return state_; }
  const State& state() const { return state_; }
  // REQUIRES: a check_* call succeeded (the scenario exists once initialized).
  const Scenario& scenario() const { return *state_.scenario; }
  double now() const { return now_; }

  // REQUIRES: check_index or check_device succeeded.
  unsigned device_index() const { return device_index_; }
  const Device& device() const { return scenario().devices[device_index_]; }
  // The MIG device the handle named, or nullptr for a GPU handle.
  const MigInstance* mig() const { return mig_; }
  // The device's reading `name` (see README.md), or nullptr when its timeline never gives it.
  const StepSeries* reading(std::string_view name) const { return device().timeline.reading(name); }

 private:
  bool initialized() const { return state_.init_refcount > 0; }
  // The failures of the order above from GPU_IS_LOST on.
  nvmlReturn_t check_gpu(unsigned index, bool refuse_mig_handle) const;
  nvmlReturn_t scripted_failure(std::optional<unsigned> device) const;

  std::unique_lock<std::mutex> lock_;
  State& state_;
  std::string_view function_;
  double now_ = 0.0;
  unsigned device_index_ = 0;
  const MigInstance* mig_ = nullptr;
};

// Helpers for writing results the way NVML does (copy_string: nvml_strings.h).

// Writes `value` to `out`; NVML_ERROR_NOT_SUPPORTED when absent, INVALID_ARGUMENT when `out`
// is null.
nvmlReturn_t write_value(const std::optional<unsigned>& value, unsigned* out);

// A reading rounded to the unsigned NVML reports it as.
unsigned reading_as_unsigned(double value);

// Writes the device's reading `name` at the call's time to `out`.
nvmlReturn_t write_reading(const ApiCall& call, std::string_view name, unsigned* out);

// The CPU timestamp (microseconds since 1970) NVML would stamp on a value from scenario time
// `t`. Scenario time 0 is 2025-01-01 00:00 UTC, so stamps are plausible and reproducible.
unsigned long long timestamp_us(double t);

}  // namespace gpuscope::fake_nvml
