#include "settings.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <ctime>
#include <fstream>
#include <sstream>

#include "fake_state.h"

namespace gpuscope::fake_nvml {
namespace {

std::optional<std::string> state_file() {
  const char* path = std::getenv(kStateFileEnvVar);
  if (path == nullptr || *path == '\0') return std::nullopt;
  return std::string(path);
}

std::string optional_text(const std::optional<double>& value) {
  if (!value) return "-";
  std::ostringstream out;
  out.precision(17);
  out << *value;
  return out.str();
}

Settings parse_settings(std::istream& in) {
  Settings settings;
  std::string line;
  while (std::getline(in, line)) {
    std::istringstream fields(line);
    std::string key, limit, workload, at;
    unsigned index = 0;
    DeviceSettings device;
    fields >> key >> index;
    if (key != "gpu") continue;
    std::string name;
    fields >> name >> limit >> name >> workload >> name >> device.workload_pid >> name >>
        device.energy_mj >> name >> at;
    if (!fields) continue;
    if (limit != "-") device.power_limit_mw = static_cast<unsigned>(std::stoul(limit));
    if (workload != "-") device.workload = workload;
    if (at != "-") device.energy_at_s = std::stod(at);
    std::string locked;
    unsigned low = 0, high = 0;
    char colon = 0;
    if (fields >> name >> locked && locked != "-" &&
        std::istringstream(locked) >> low >> colon >> high && colon == ':') {
      device.locked_clocks_mhz = std::pair{low, high};
    }
    settings[index] = device;
  }
  return settings;
}

Settings read_file(const std::string& path) {
  std::ifstream in(path);
  if (!in) return {};
  return parse_settings(in);
}

void write_file(const std::string& path, const Settings& settings) {
  const std::string temp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(temp, std::ios::trunc);
    for (const auto& [index, device] : settings) {
      out << "gpu " << index << " limit_mw "
          << (device.power_limit_mw ? std::to_string(*device.power_limit_mw) : "-") << " workload "
          << (device.workload.empty() ? "-" : device.workload) << " pid " << device.workload_pid
          << " energy_mj " << optional_text(device.energy_mj) << " at_s "
          << optional_text(device.energy_at_s) << " locked_mhz "
          << (device.locked_clocks_mhz ? std::to_string(device.locked_clocks_mhz->first) + ":" +
                                             std::to_string(device.locked_clocks_mhz->second)
                                       : "-")
          << "\n";
    }
  }
  if (const int fd = ::open(temp.c_str(), O_RDONLY | O_CLOEXEC); fd >= 0) {
    ::fsync(fd);
    ::close(fd);
  }
  ::rename(temp.c_str(), path.c_str());
}

}  // namespace

Settings read_settings(const State& state) {
  if (const auto path = state_file()) return read_file(*path);
  return state.settings;
}

void update_settings(State& state, const std::function<void(Settings&)>& change) {
  const auto path = state_file();
  if (!path) {
    change(state.settings);
    return;
  }
  const std::string lock_path = *path + ".lock";
  const int lock = ::open(lock_path.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  if (lock >= 0) ::flock(lock, LOCK_EX);
  Settings settings = read_file(*path);
  change(settings);
  write_file(*path, settings);
  if (lock >= 0) ::close(lock);  // releases the flock
}

double model_clock_s(const State& state) {
  if (state.manual_time) return *state.manual_time;
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

bool workload_running(const DeviceSettings& settings) {
  if (settings.workload.empty() || settings.workload_pid <= 0) return false;
  return ::kill(static_cast<pid_t>(settings.workload_pid), 0) == 0 || errno == EPERM;
}

}  // namespace gpuscope::fake_nvml
