// Control API of the fake NVML library (libgpuscope_fake_nvml.so).
//
// Tests link the fake directly and use these functions to script what NVML reports; the code
// under test reaches the same loaded instance through dlopen (glibc hands back the library that
// is already loaded), so what a test scripts here is what the adapter sees.
//
// All functions are thread-safe. None of them needs nvmlInit_v2 to have been called, and none
// of them counts as an NVML call. The scenario format is described in README.md next to this
// header.
#pragma once

#define GPUSCOPE_FAKE_NVML_CONTROL_API __attribute__((visibility("default")))

#ifdef __cplusplus
extern "C" {
#endif

// Replaces the scenario with the one in `json_text` (UTF-8 JSON, see README.md). Returns 0 on
// success; otherwise nonzero, the previous scenario stays in place and
// gpuscope_fake_nvml_last_error() says what was wrong (with the JSON path of the problem).
// Loading also forgets power limits set through nvmlDeviceSetPowerManagementLimit and restarts
// the real-time clock; it keeps the init reference count, the counters and a manual time.
// A scenario loaded here is never replaced by the GPUSCOPE_FAKE_NVML_SCENARIO file.
GPUSCOPE_FAKE_NVML_CONTROL_API int gpuscope_fake_nvml_load_scenario(const char* json_text);

// As gpuscope_fake_nvml_load_scenario, from a file. Nonzero also when it cannot be read.
GPUSCOPE_FAKE_NVML_CONTROL_API int gpuscope_fake_nvml_load_scenario_file(const char* path);

// Why the last load failed, including a failed load of GPUSCOPE_FAKE_NVML_SCENARIO by
// nvmlInit_v2 ("" after a successful load). Valid until the next load, reset or nvmlInit_v2.
GPUSCOPE_FAKE_NVML_CONTROL_API const char* gpuscope_fake_nvml_last_error(void);

// Switches to a manual clock that reads `seconds` (scenario time: timelines, lost_at_t and
// scripted errors are in these seconds) until the next call or a reset. Without it, time is
// real monotonic seconds since the first successful nvmlInit_v2 after the last load or reset.
GPUSCOPE_FAKE_NVML_CONTROL_API void gpuscope_fake_nvml_set_time(double seconds);

// Back to a freshly loaded library: no scenario (the next nvmlInit_v2 reads
// GPUSCOPE_FAKE_NVML_SCENARIO again), not initialized, real clock, counters at zero, GPM samples
// freed, no power limit set. Handles from before stay harmless: they are valid again only if
// the next scenario has their device.
GPUSCOPE_FAKE_NVML_CONTROL_API void gpuscope_fake_nvml_reset(void);

// How many nvmlInit_v2 calls succeeded, and how many nvmlShutdown calls released a reference,
// since the last reset. A balanced user leaves them equal.
GPUSCOPE_FAKE_NVML_CONTROL_API unsigned gpuscope_fake_nvml_init_count(void);
GPUSCOPE_FAKE_NVML_CONTROL_API unsigned gpuscope_fake_nvml_shutdown_count(void);

// How many times the NVML function of that name was called since the last reset, whatever it
// returned (calls before nvmlInit_v2 included). 0 for names never called or unknown.
GPUSCOPE_FAKE_NVML_CONTROL_API long long gpuscope_fake_nvml_call_count(const char* function_name);

// The power limit (mW) last set on GPU `device_index` through a successful
// nvmlDeviceSetPowerManagementLimit since the last load or reset (with GPUSCOPE_FAKE_NVML_STATE:
// as the state file records it, by any process); 0 if never set.
GPUSCOPE_FAKE_NVML_CONTROL_API unsigned gpuscope_fake_nvml_power_limit_set_mw(
    unsigned device_index);

// The SM clock lock on GPU `device_index` ({min, max} MHz through nvmlDeviceSetGpuLockedClocks,
// until nvmlDeviceResetGpuLockedClocks; with GPUSCOPE_FAKE_NVML_STATE: as the state file
// records it): 1 and the range when locked, 0 when unlocked.
GPUSCOPE_FAKE_NVML_CONTROL_API int gpuscope_fake_nvml_locked_clocks_mhz(unsigned device_index,
                                                                        unsigned* min_mhz,
                                                                        unsigned* max_mhz);

// The simulated workloads of a GPU with a "power_response" (README.md): curve `curve` starts
// running on GPU `device_index` for process `pid` (when that process ends, the GPU is idle
// again), so power, clocks, temperature and the workload's speed follow the power limit. With
// GPUSCOPE_FAKE_NVML_STATE this is seen by every process loading the fake. Loads the
// GPUSCOPE_FAKE_NVML_SCENARIO file when no scenario is loaded. Returns 0, or nonzero with
// gpuscope_fake_nvml_last_error() saying why (no such GPU, no power_response, no such curve).
GPUSCOPE_FAKE_NVML_CONTROL_API int gpuscope_fake_nvml_start_workload(unsigned device_index,
                                                                     const char* curve, long pid);
GPUSCOPE_FAKE_NVML_CONTROL_API void gpuscope_fake_nvml_stop_workload(unsigned device_index);

// The running workload's samples per second at GPU `device_index`'s limit now (0 when idle);
// negative when the GPU has no power_response.
GPUSCOPE_FAKE_NVML_CONTROL_API double gpuscope_fake_nvml_workload_samples_per_second(
    unsigned device_index);

#ifdef __cplusplus
}  // extern "C"
#endif
