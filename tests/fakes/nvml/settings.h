// What users change on a fake GPU (its power limit, its SM clock lock, the simulated workload
// running on it) and
// the modelled energy counter. With GPUSCOPE_FAKE_NVML_STATE=FILE these live in FILE, shared by
// every process that loads the fake as a driver's state is shared: one process sets a limit,
// another (a guardian, the next gpuscope, a test) sees it. Without it they live in the State of
// this process only.
//
// FILE is plain text, one line per GPU that something was changed on:
//   gpu <index> limit_mw <mW|-> workload <curve|-> pid <pid> energy_mj <mJ> at_s <seconds|->
//       locked_mhz <min:max|->
// (a line without the last field, from before clock locks, reads as unlocked)
// and is replaced atomically (write, fsync, rename) under an flock of FILE.lock.
#pragma once

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <utility>

namespace gpuscope::fake_nvml {

struct State;

inline constexpr const char* kStateFileEnvVar = "GPUSCOPE_FAKE_NVML_STATE";

struct DeviceSettings {
  std::optional<unsigned> power_limit_mw;  // set through nvmlDeviceSetPowerManagementLimit
  // {min, max} MHz set through nvmlDeviceSetGpuLockedClocks; absent: unlocked (reset)
  std::optional<std::pair<unsigned, unsigned>> locked_clocks_mhz;
  std::string workload;               // the curve running; "" when idle
  long workload_pid = 0;              // the process running it (dead = idle)
  double energy_mj = 0;               // modelled energy used until energy_at_s
  std::optional<double> energy_at_s;  // on model_clock_s(); absent: never read yet
};

using Settings = std::map<unsigned, DeviceSettings>;  // by GPU index

// The settings now: from the state file when one is named (a missing file is no settings),
// else the in-process ones.
Settings read_settings(const State& state);

// Applies `change` atomically: under the file's lock when there is a file.
void update_settings(State& state, const std::function<void(Settings&)>& change);

// The clock of the modelled energy: the manual time when set, else CLOCK_MONOTONIC seconds
// (the same in every process on the machine).
double model_clock_s(const State& state);

// Whether the workload recorded in `settings` still runs.
bool workload_running(const DeviceSettings& settings);

}  // namespace gpuscope::fake_nvml
