// The static part of a device in a scenario: identity, limits, modes, MIG, failures.
#include <cctype>
#include <cstdio>
#include <string>

#include "json_reader.h"
#include "scenario_parse.h"

namespace gpuscope::fake_nvml {
namespace {

// {"1": 18, ...}: GPU index -> a count or level; absent: empty.
std::map<unsigned, unsigned> index_map(ObjectReader& reader, std::string_view key) {
  std::map<unsigned, unsigned> out;
  const nlohmann::json* object = reader.child(key);
  if (object == nullptr) return out;
  if (!object->is_object()) throw ScenarioError(reader.path_of(key) + ": an object expected");
  for (const auto& [name, value] : object->items()) {
    if (!value.is_number_unsigned() || name.empty() ||
        name.find_first_not_of("0123456789") != std::string::npos) {
      throw ScenarioError(reader.path_of(key) + "." + name +
                          ": a GPU index and an unsigned number expected");
    }
    out[static_cast<unsigned>(std::stoul(name))] = value.get<unsigned>();
  }
  return out;
}

std::string default_uuid(unsigned index, unsigned mig_index, bool mig) {
  char uuid[64];
  std::snprintf(uuid, sizeof uuid, "%s-fa4e0000-0000-4000-8000-%06x%06x", mig ? "MIG" : "GPU",
                index, mig ? mig_index + 1 : 0);
  return uuid;
}

void check_pci_bus_id(const std::string& bus_id, const std::string& path) {
  unsigned domain = 0, bus = 0, slot = 0, function = 0;
  if (std::sscanf(bus_id.c_str(), "%x:%x:%x.%x", &domain, &bus, &slot, &function) != 4) {
    throw ScenarioError(path + ": expected domain:bus:device.function, e.g. 00000000:18:00.0");
  }
}

std::optional<std::pair<int, int>> parse_compute_capability(ObjectReader& reader) {
  const nlohmann::json* json = reader.child("compute_capability");
  if (json == nullptr) return std::nullopt;
  const std::string path = reader.path_of("compute_capability");
  if (!json->is_array() || json->size() != 2) {
    throw ScenarioError(path + ": expected [major, minor]");
  }
  return std::pair{json_as<int>((*json)[0], path + "[0]"), json_as<int>((*json)[1], path + "[1]")};
}

MaxClocks parse_max_clocks(ObjectReader& reader) {
  MaxClocks clocks;
  clocks.sm_mhz = reader.optional<unsigned>("sm_mhz");
  clocks.mem_mhz = reader.optional<unsigned>("mem_mhz");
  clocks.graphics_mhz = reader.optional<unsigned>("graphics_mhz");
  clocks.video_mhz = reader.optional<unsigned>("video_mhz");
  return clocks;
}

PowerLimits parse_power_limits(ObjectReader& reader) {
  PowerLimits limits;
  limits.current_mw = reader.optional<unsigned>("power_limit_mw");
  limits.default_mw = reader.optional<unsigned>("default_power_limit_mw");
  limits.min_mw = reader.optional<unsigned>("min_power_limit_mw");
  limits.max_mw = reader.optional<unsigned>("max_power_limit_mw");
  limits.enforced_mw = reader.optional<unsigned>("enforced_power_limit_mw");
  if (limits.min_mw.has_value() != limits.max_mw.has_value()) {
    throw ScenarioError(reader.path_of("min_power_limit_mw") +
                        ": give min and max power limits together");
  }
  if (limits.min_mw && *limits.min_mw > *limits.max_mw) {
    throw ScenarioError(reader.path_of("min_power_limit_mw") + ": above max_power_limit_mw");
  }
  return limits;
}

TemperatureThresholds parse_thresholds(ObjectReader& reader) {
  TemperatureThresholds thresholds;
  thresholds.slowdown_c = reader.optional<unsigned>("slowdown_c");
  thresholds.shutdown_c = reader.optional<unsigned>("shutdown_c");
  thresholds.gpu_max_c = reader.optional<unsigned>("gpu_max_c");
  thresholds.mem_max_c = reader.optional<unsigned>("mem_max_c");
  return thresholds;
}

Pcie parse_pcie(ObjectReader& reader) {
  Pcie pcie;
  pcie.current_gen = reader.optional<unsigned>("current_gen");
  pcie.max_gen = reader.optional<unsigned>("max_gen");
  pcie.gpu_max_gen = reader.optional<unsigned>("gpu_max_gen");
  pcie.current_width = reader.optional<unsigned>("current_width");
  pcie.max_width = reader.optional<unsigned>("max_width");
  return pcie;
}

std::optional<nvmlComputeMode_t> parse_compute_mode(ObjectReader& reader) {
  const auto mode = reader.optional<std::string>("compute_mode");
  if (!mode) return std::nullopt;
  if (*mode == "default") return NVML_COMPUTEMODE_DEFAULT;
  if (*mode == "exclusive_process") return NVML_COMPUTEMODE_EXCLUSIVE_PROCESS;
  if (*mode == "prohibited") return NVML_COMPUTEMODE_PROHIBITED;
  throw ScenarioError(reader.path_of("compute_mode") +
                      ": expected default, exclusive_process or prohibited");
}

Ecc parse_ecc(ObjectReader& reader) {
  Ecc ecc;
  ecc.current = reader.required<bool>("current");
  ecc.pending = reader.value_or("pending", ecc.current);
  ecc.corrected_volatile = reader.value_or("corrected_volatile", 0ULL);
  ecc.uncorrected_volatile = reader.value_or("uncorrected_volatile", 0ULL);
  ecc.corrected_aggregate = reader.value_or("corrected_aggregate", 0ULL);
  ecc.uncorrected_aggregate = reader.value_or("uncorrected_aggregate", 0ULL);
  return ecc;
}

// "NVIDIA A100-SXM4-40GB MIG 3g.20gb" -> 3 (the digits before "g."); 0 without a profile.
unsigned slices_in_profile_name(const std::string& name) {
  const std::size_t g = name.rfind("g.");
  if (g == std::string::npos) return 0;
  std::size_t start = g;
  while (start > 0 && std::isdigit(static_cast<unsigned char>(name[start - 1]))) --start;
  if (start == g) return 0;
  return static_cast<unsigned>(std::stoul(name.substr(start, g - start)));
}

MigInstance parse_mig_instance(const nlohmann::json& json, const std::string& path,
                               unsigned gpu_index, unsigned mig_index) {
  ObjectReader reader(json, path);
  MigInstance instance;
  instance.gpu_instance_id = reader.required<unsigned>("gpu_instance_id");
  instance.compute_instance_id = reader.required<unsigned>("compute_instance_id");
  instance.name = reader.required<std::string>("name");
  instance.uuid = reader.value_or("uuid", default_uuid(gpu_index, mig_index, true));
  instance.memory_total_bytes = reader.required<unsigned long long>("memory_total_bytes");
  instance.memory_used_bytes = reader.value_or("memory_used_bytes", 0ULL);
  if (instance.memory_used_bytes > instance.memory_total_bytes) {
    throw ScenarioError(reader.path_of("memory_used_bytes") + ": above memory_total_bytes");
  }
  instance.sm_count = reader.required<unsigned>("sm_count");
  const unsigned slices = slices_in_profile_name(instance.name);
  instance.gpu_instance_slice_count = reader.value_or("gpu_instance_slice_count", slices);
  instance.compute_instance_slice_count = reader.value_or("compute_instance_slice_count", slices);
  instance.shared_copy_engine_count = reader.value_or("shared_copy_engine_count", 0U);
  instance.shared_decoder_count = reader.value_or("shared_decoder_count", 0U);
  instance.shared_encoder_count = reader.value_or("shared_encoder_count", 0U);
  instance.shared_jpeg_count = reader.value_or("shared_jpeg_count", 0U);
  instance.shared_ofa_count = reader.value_or("shared_ofa_count", 0U);
  reader.finish();
  return instance;
}

Mig parse_mig(ObjectReader& reader, unsigned gpu_index) {
  Mig mig;
  mig.current = reader.required<bool>("current");
  mig.pending = reader.value_or("pending", mig.current);
  mig.max_device_count = reader.value_or("max_device_count", mig.max_device_count);
  if (mig.max_device_count > kMaxMigDevices) {
    throw ScenarioError(reader.path_of("max_device_count") + ": more than the fake supports");
  }
  if (const nlohmann::json* instances = reader.child("instances")) {
    const std::string path = reader.path_of("instances");
    if (!instances->is_array()) throw ScenarioError(path + ": expected an array");
    if (instances->size() > mig.max_device_count) {
      throw ScenarioError(path + ": more instances than max_device_count");
    }
    if (!instances->empty() && !mig.current) {
      throw ScenarioError(path + ": MIG instances on a GPU whose MIG mode is off");
    }
    for (std::size_t i = 0; i < instances->size(); ++i) {
      mig.instances.push_back(parse_mig_instance((*instances)[i],
                                                 path + "[" + std::to_string(i) + "]", gpu_index,
                                                 static_cast<unsigned>(i)));
    }
  }
  return mig;
}

void parse_failures(ObjectReader& reader, Device& device) {
  if (const nlohmann::json* names = reader.child("unsupported")) {
    const std::string path = reader.path_of("unsupported");
    if (!names->is_array()) throw ScenarioError(path + ": expected an array");
    for (std::size_t i = 0; i < names->size(); ++i) {
      const std::string item_path = path + "[" + std::to_string(i) + "]";
      auto name = json_as<std::string>((*names)[i], item_path);
      if (!is_fake_nvml_function(name)) {
        throw ScenarioError(item_path + ": '" + name +
                            "' is not an NVML function the fake implements");
      }
      device.unsupported_functions.insert(std::move(name));
    }
  }
  if (const nlohmann::json* fields = reader.child("unsupported_fields")) {
    const std::string path = reader.path_of("unsupported_fields");
    if (!fields->is_array()) throw ScenarioError(path + ": expected an array");
    for (std::size_t i = 0; i < fields->size(); ++i) {
      device.unsupported_fields.insert(
          json_as<unsigned>((*fields)[i], path + "[" + std::to_string(i) + "]"));
    }
  }
  device.lost_at_t = reader.optional<double>("lost_at_t");
}

Nvlink parse_nvlink(ObjectReader& reader) {
  Nvlink nvlink{reader.required<unsigned>("link_count"), {}};
  nvlink.peers = index_map(reader, "peers");
  nvlink.nvswitch = reader.value_or("nvswitch", false);
  unsigned linked = 0;
  for (const auto& [peer, links] : nvlink.peers) linked += links;
  if (linked > nvlink.link_count) {
    throw ScenarioError(reader.path_of("peers") + ": more links than link_count");
  }
  return nvlink;
}

WorkloadCurve parse_curve(const nlohmann::json& json, const std::string& path) {
  ObjectReader reader(json, path);
  WorkloadCurve curve;
  curve.peak_samples_per_second = reader.required<double>("peak_samples_per_second");
  curve.max_draw_w = reader.required<double>("max_draw_w");
  const nlohmann::json* points = reader.child("points");
  const std::string points_path = reader.path_of("points");
  if (points == nullptr || !points->is_array() || points->size() < 2) {
    throw ScenarioError(points_path + ": expected at least two [limit_w, fraction] pairs");
  }
  for (std::size_t i = 0; i < points->size(); ++i) {
    const std::string item = points_path + "[" + std::to_string(i) + "]";
    const nlohmann::json& pair = (*points)[i];
    if (!pair.is_array() || pair.size() != 2)
      throw ScenarioError(item + ": expected [limit_w, fraction]");
    const double limit_w = json_as<double>(pair[0], item + "[0]");
    const double fraction = json_as<double>(pair[1], item + "[1]");
    if (!curve.points.empty() && limit_w <= curve.points.back().first) {
      throw ScenarioError(item + ": limits must increase");
    }
    curve.points.emplace_back(limit_w, fraction);
  }
  reader.finish();
  return curve;
}

PowerResponse parse_power_response(ObjectReader& reader) {
  PowerResponse response;
  response.idle_power_w = reader.required<double>("idle_power_w");
  response.idle_sm_clock_mhz = reader.required<double>("idle_sm_clock_mhz");
  response.peak_sm_clock_mhz = reader.required<double>("peak_sm_clock_mhz");
  response.ambient_c = reader.required<double>("ambient_c");
  response.c_per_w = reader.required<double>("c_per_w");
  const nlohmann::json* curves = reader.child("curves");
  const std::string curves_path = reader.path_of("curves");
  if (curves == nullptr || !curves->is_object()) {
    throw ScenarioError(curves_path + ": expected an object of named curves");
  }
  for (const auto& [name, curve] : curves->items()) {
    response.curves.emplace(name, parse_curve(curve, curves_path + "." + name));
  }
  return response;
}

}  // namespace

Device parse_device(const nlohmann::json& json, const std::string& path, unsigned index) {
  ObjectReader reader(json, path);
  Device device;
  device.name = reader.required<std::string>("name");
  device.uuid = reader.value_or("uuid", default_uuid(index, 0, false));
  char bus_id[32];
  std::snprintf(bus_id, sizeof bus_id, "00000000:%02X:00.0", (index + 1) & 0xFFu);
  device.pci_bus_id = reader.value_or<std::string>("pci_bus_id", bus_id);
  check_pci_bus_id(device.pci_bus_id, reader.path_of("pci_bus_id"));
  device.pci_device_id = reader.value_or("pci_device_id", 0U);
  device.pci_subsystem_id = reader.value_or("pci_subsystem_id", 0U);
  device.memory_total_bytes = reader.optional<unsigned long long>("memory_total_bytes");
  device.memory_reserved_bytes = reader.value_or("memory_reserved_bytes", 0ULL);
  device.compute_capability = parse_compute_capability(reader);
  device.memory_bus_width_bits = reader.optional<unsigned>("memory_bus_width_bits");
  device.max_clocks = reader.nested("max_clocks", parse_max_clocks).value_or(MaxClocks{});
  device.power_limits = parse_power_limits(reader);
  device.temperature_thresholds =
      reader.nested("temperature_thresholds", parse_thresholds).value_or(TemperatureThresholds{});
  device.pcie = reader.nested("pcie", parse_pcie).value_or(Pcie{});
  device.persistence_mode = reader.optional<bool>("persistence_mode");
  device.compute_mode = parse_compute_mode(reader);
  device.ecc = reader.nested("ecc", parse_ecc);
  device.supported_clock_event_reasons =
      reader.optional<unsigned long long>("supported_clock_event_reasons");
  device.gpm_supported = reader.value_or("gpm_supported", false);
  device.energy_counter = reader.value_or("energy_counter", false);
  device.energy_offset_mj = reader.value_or("energy_offset_mj", 0.0);
  device.fan_count = reader.value_or("fan_count", 0U);
  device.mig = reader.nested("mig", [&](ObjectReader& mig) { return parse_mig(mig, index); });
  device.nvlink = reader.nested("nvlink", parse_nvlink);
  device.pcie_topology = index_map(reader, "pcie_topology");
  parse_failures(reader, device);
  device.power_response = reader.nested("power_response", parse_power_response);
  if (const nlohmann::json* timeline = reader.child("timeline")) {
    device.timeline = parse_timeline(*timeline, reader.path_of("timeline"));
  }
  reader.finish();
  return device;
}

}  // namespace gpuscope::fake_nvml
