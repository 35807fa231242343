// A device's readings over time: "timeline": [{"t": 0.0, "power_mw": 70000, ...}, ...].
#include <algorithm>
#include <array>
#include <string>
#include <string_view>

#include "json_reader.h"
#include "scenario_parse.h"

namespace gpuscope::fake_nvml {
namespace {

// Every reading a timeline entry may name (the fake's consumers look them up by these names).
constexpr std::array<std::string_view, 18> kReadingNames = {
    "power_mw",         "gpu_temp_c",          "mem_temp_c",
    "sm_clock_mhz",     "mem_clock_mhz",       "graphics_clock_mhz",
    "video_clock_mhz",  "memory_used_bytes",   "gpu_util_percent",
    "mem_util_percent", "clock_event_reasons", "fan_percent",
    "pcie_tx_kbps",     "pcie_rx_kbps",        "pcie_gen",
    "pcie_width",       "nvlink_tx_kibps",     "nvlink_rx_kibps",
};

// Inside an entry's "gpm" object; stored as "gpm.<name>".
constexpr std::array<std::string_view, 8> kGpmNames = {
    "graphics_util", "sm_util",   "sm_occupancy", "any_tensor_util",
    "dram_bw_util",  "fp16_util", "fp32_util",    "fp64_util",
};

bool contains(const auto& names, std::string_view name) {
  return std::find(names.begin(), names.end(), name) != names.end();
}

std::vector<Process> parse_processes(const nlohmann::json& json, const std::string& path) {
  if (!json.is_array()) throw ScenarioError(path + ": expected an array");
  std::vector<Process> processes;
  for (std::size_t i = 0; i < json.size(); ++i) {
    ObjectReader reader(json[i], path + "[" + std::to_string(i) + "]");
    Process process;
    process.pid = reader.required<unsigned>("pid");
    process.used_memory_bytes = reader.value_or("used_memory_bytes", 0ULL);
    process.sm_util = reader.value_or("sm_util", 0U);
    process.mem_util = reader.value_or("mem_util", 0U);
    reader.finish();
    processes.push_back(process);
  }
  return processes;
}

double parse_reading(std::string_view name, const nlohmann::json& value, const std::string& path) {
  // A bit mask must be an exact integer; a double holds every mask NVML defines exactly.
  if (name == "clock_event_reasons") {
    return static_cast<double>(json_as<unsigned long long>(value, path));
  }
  const double reading = json_as<double>(value, path);
  if (reading < 0.0) throw ScenarioError(path + ": readings are never negative");
  return reading;
}

void parse_gpm(const nlohmann::json& json, const std::string& path, double t, Timeline& timeline) {
  if (!json.is_object()) throw ScenarioError(path + ": expected an object");
  for (const auto& [name, value] : json.items()) {
    const std::string item_path = path + "." + name;
    if (!contains(kGpmNames, name)) throw ScenarioError(item_path + ": unknown GPM metric");
    timeline.readings["gpm." + name].add(t, parse_reading(name, value, item_path));
  }
}

}  // namespace

Timeline parse_timeline(const nlohmann::json& json, const std::string& path) {
  if (!json.is_array()) throw ScenarioError(path + ": expected an array");
  Timeline timeline;
  double previous_t = -1.0;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const std::string entry_path = path + "[" + std::to_string(i) + "]";
    const nlohmann::json& entry = json[i];
    if (!entry.is_object()) throw ScenarioError(entry_path + ": expected an object");
    const auto t_it = entry.find("t");
    if (t_it == entry.end()) throw ScenarioError(entry_path + ".t: required");
    const double t = json_as<double>(*t_it, entry_path + ".t");
    if (t < 0.0 || t <= previous_t) {
      throw ScenarioError(entry_path + ".t: times must start at 0 or later and increase");
    }
    previous_t = t;
    for (const auto& [name, value] : entry.items()) {
      const std::string item_path = entry_path + "." + name;
      if (name == "t") continue;
      if (name == "gpm") {
        parse_gpm(value, item_path, t, timeline);
      } else if (name == "processes") {
        timeline.processes.add(t, parse_processes(value, item_path));
      } else if (contains(kReadingNames, name)) {
        timeline.readings[name].add(t, parse_reading(name, value, item_path));
      } else {
        throw ScenarioError(item_path + ": unknown reading");
      }
    }
  }
  return timeline;
}

}  // namespace gpuscope::fake_nvml
