#include <fmt/format.h>

#include <cstdio>

#include "common/json_fields.h"
#include "gpuscope/info_report.h"
#include "gpuscope/json.h"

namespace gpuscope {
namespace {

using detail::JsonFields;
using nlohmann::json;

std::string fmt_cc(int major, int minor) {
  return std::to_string(major) + "." + std::to_string(minor);
}

json peak_to_json(const PeakRates& peak) {
  json rates = json::object();
  for (const auto& [precision, flops] : peak.flops_per_s) {
    rates[std::string(precision_name(precision))] = flops;
  }
  json out = {{"model", peak.model},
              {"estimated", peak.estimated},
              {"flops_per_s", rates},
              {"source", peak.source}};
  put(out, "memory_bandwidth_bytes_per_s", peak.memory_bandwidth_bytes_per_s);
  if (!peak.notes.empty()) out["notes"] = peak.notes;
  return out;
}

json gpu_to_json(const GpuInfo& gpu) {
  json g = {{"index", gpu.index}, {"name", gpu.name}, {"uuid", gpu.uuid}};
  put(g, "pci_bus_id", gpu.pci_bus_id);
  if (gpu.cc_major) g["compute_capability"] = fmt_cc(*gpu.cc_major, gpu.cc_minor.value_or(0));
  put(g, "sm_count", gpu.sm_count);
  put(g, "cuda_ordinal", gpu.cuda_ordinal);
  put(g, "l2_cache_bytes", gpu.l2_cache_bytes);

  json memory = json::object();
  put(memory, "total_bytes", gpu.memory_total_bytes);
  put(memory, "used_bytes", gpu.memory_used_bytes);
  put(memory, "reserved_bytes", gpu.memory_reserved_bytes);
  put(memory, "bus_width_bits", gpu.memory_bus_width_bits);
  g["memory"] = memory;

  json clocks = json::object();
  put(clocks, "sm_mhz", gpu.sm_clock_mhz);
  put(clocks, "sm_max_mhz", gpu.sm_clock_max_mhz);
  put(clocks, "memory_mhz", gpu.mem_clock_mhz);
  put(clocks, "memory_max_mhz", gpu.mem_clock_max_mhz);
  g["clocks"] = clocks;

  json power = json::object();
  put(power, "draw_w", gpu.power_draw_w);
  put(power, "limit_w", gpu.power_limit_w);
  put(power, "default_limit_w", gpu.power_default_limit_w);
  put(power, "min_limit_w", gpu.power_min_limit_w);
  put(power, "max_limit_w", gpu.power_max_limit_w);
  put(power, "enforced_limit_w", gpu.power_enforced_limit_w);
  power["energy_counter_supported"] = gpu.energy_counter_supported;
  g["power"] = power;

  json temperature = json::object();
  put(temperature, "gpu_c", gpu.temperature_c);
  put(temperature, "memory_c", gpu.memory_temperature_c);
  put(temperature, "slowdown_c", gpu.temperature_slowdown_c);
  put(temperature, "shutdown_c", gpu.temperature_shutdown_c);
  put(temperature, "gpu_max_c", gpu.temperature_gpu_max_c);
  put(temperature, "memory_max_c", gpu.temperature_memory_max_c);
  g["temperature"] = temperature;

  json pcie = json::object();
  put(pcie, "generation", gpu.pcie_gen_current);
  put(pcie, "generation_max", gpu.pcie_gen_max);
  put(pcie, "generation_gpu_max", gpu.pcie_gen_gpu_max);
  put(pcie, "width", gpu.pcie_width_current);
  put(pcie, "width_max", gpu.pcie_width_max);
  g["pcie"] = pcie;

  put(g, "persistence_mode", gpu.persistence_mode);
  put(g, "compute_mode", gpu.compute_mode);
  if (gpu.ecc_current) g["ecc"] = {{"current", *gpu.ecc_current}, {"pending", *gpu.ecc_pending}};
  if (gpu.clock_event_reasons) {
    g["clock_event_reasons"] = {{"mask", *gpu.clock_event_reasons},
                                {"active", gpu.clock_event_reason_names}};
  }
  put(g, "gpm_supported", gpu.gpm_supported);

  if (gpu.mig_current) {
    json instances = json::array();
    for (const MigInstanceInfo& m : gpu.mig_instances) {
      json instance = {{"gpu_instance_id", m.gpu_instance_id},
                       {"compute_instance_id", m.compute_instance_id},
                       {"name", m.name},
                       {"profile", m.profile},
                       {"uuid", m.uuid}};
      put(instance, "memory_total_bytes", m.memory_total_bytes);
      put(instance, "sm_count", m.sm_count);
      instances.push_back(instance);
    }
    g["mig"] = {{"current", *gpu.mig_current},
                {"pending", gpu.mig_pending.value_or(false)},
                {"instances", instances}};
  }
  if (gpu.peak) g["peak"] = peak_to_json(*gpu.peak);
  if (!gpu.unavailable.empty()) {
    json unavailable = json::array();
    for (const Unavailable& u : gpu.unavailable) {
      unavailable.push_back({{"field", u.field}, {"reason", u.reason}});
    }
    g["unavailable"] = unavailable;
  }
  return g;
}

}  // namespace

json info_to_json(const SystemInfo& info) {
  json host = {{"hostname", info.hostname},
               {"gpuscope_version", info.gpuscope_version},
               {"nvml_library", info.nvml_library}};
  put(host, "driver_version", info.driver_version);
  put(host, "nvml_version", info.nvml_version);
  put(host, "cuda_driver_version", info.cuda_driver_version);
  put(host, "cuda_runtime_version", info.cuda_runtime_version);
  if (!info.cuda_status.ok()) host["cuda_status"] = info.cuda_status.to_string();

  json gpus = json::array();
  for (const GpuInfo& gpu : info.gpus) gpus.push_back(gpu_to_json(gpu));
  json failures = json::array();
  for (const GpuFailure& f : info.failures) {
    failures.push_back({{"index", f.index},
                        {"error", std::string(code_name(f.status.code()))},
                        {"message", f.status.message()}});
  }
  return {{"schema_version", kInfoSchemaVersion},
          {"kind", "gpuscope.info"},
          {"host", host},
          {"gpus", gpus},
          {"failures", failures}};
}

namespace {

// ---------------------------------------------------------------------------------------------
// The reader: the inverse of the writer above, field for field.

// "no_device: no GPU is visible" (Status::to_string) back as a Status.
Status status_from_text(const std::string& text) {
  const std::size_t colon = text.find(": ");
  if (colon == std::string::npos) return Status(Code::internal, text);
  return Status(code_named(text.substr(0, colon)).value_or(Code::internal), text.substr(colon + 2));
}

Result<PeakRates> peak_from_json(const json& in, const std::string& where) {
  JsonFields f(in, where);
  PeakRates peak;
  peak.model = f.text("model");
  peak.estimated = f.opt_bool("estimated").value_or(false);
  peak.source = f.opt_text("source").value_or("");
  peak.notes = f.opt_text("notes").value_or("");
  peak.memory_bandwidth_bytes_per_s = f.opt_number("memory_bandwidth_bytes_per_s");
  JsonFields rates(f.member("flops_per_s"), where + ".flops_per_s");
  GPUSCOPE_RETURN_IF_ERROR(f.status());
  GPUSCOPE_RETURN_IF_ERROR(rates.status());
  for (const auto& [name, rate] : f.member("flops_per_s").items()) {
    const std::optional<Precision> precision = parse_precision(name);
    if (!precision || !rate.is_number()) {
      return Status(Code::data_error,
                    fmt::format("{}.flops_per_s.{}: not a precision with a number", where, name));
    }
    peak.flops_per_s[*precision] = rate.get<double>();
  }
  return peak;
}

Result<MigInstanceInfo> mig_instance_from_json(const json& in, const std::string& where) {
  JsonFields f(in, where);
  MigInstanceInfo m;
  m.gpu_instance_id = f.opt_unsigned<unsigned>("gpu_instance_id").value_or(0);
  m.compute_instance_id = f.opt_unsigned<unsigned>("compute_instance_id").value_or(0);
  m.name = f.text("name");
  m.profile = f.opt_text("profile").value_or("");
  m.uuid = f.text("uuid");
  m.memory_total_bytes = f.opt_unsigned<std::uint64_t>("memory_total_bytes");
  m.sm_count = f.opt_unsigned<unsigned>("sm_count");
  GPUSCOPE_RETURN_IF_ERROR(f.status());
  return m;
}

// Reads the object `key` of `f` (absent: an empty one) with `read`; keeps the first problem of
// all parts in `problem`.
template <typename Read>
void read_part(JsonFields& f, const char* key, Status& problem, Read read) {
  static const json kEmpty = json::object();
  const json& member = f.member(key);
  JsonFields part(member.is_null() ? kEmpty : member, f.where() + "." + key);
  read(part);
  if (problem.ok()) problem = part.status();
}

Result<GpuInfo> gpu_from_json(const json& in, const std::string& where) {
  JsonFields f(in, where);
  Status problem;  // of the parts
  GpuInfo gpu;
  gpu.index = f.opt_unsigned<unsigned>("index").value_or(0);
  if (!f.has("index")) f.fail("index", "missing");
  gpu.name = f.text("name");
  gpu.uuid = f.text("uuid");
  gpu.pci_bus_id = f.opt_text("pci_bus_id");
  if (const auto cc = f.opt_text("compute_capability")) {
    int major = 0, minor = 0;
    if (std::sscanf(cc->c_str(), "%d.%d", &major, &minor) != 2) {
      f.fail("compute_capability", "expected MAJOR.MINOR");
    }
    gpu.cc_major = major;
    gpu.cc_minor = minor;
  }
  gpu.sm_count = f.opt_int("sm_count");
  gpu.cuda_ordinal = f.opt_int("cuda_ordinal");
  gpu.l2_cache_bytes = f.opt_unsigned<std::uint64_t>("l2_cache_bytes");
  read_part(f, "memory", problem, [&](JsonFields& m) {
    gpu.memory_total_bytes = m.opt_unsigned<std::uint64_t>("total_bytes");
    gpu.memory_used_bytes = m.opt_unsigned<std::uint64_t>("used_bytes");
    gpu.memory_reserved_bytes = m.opt_unsigned<std::uint64_t>("reserved_bytes");
    gpu.memory_bus_width_bits = m.opt_unsigned<unsigned>("bus_width_bits");
  });
  read_part(f, "clocks", problem, [&](JsonFields& c) {
    gpu.sm_clock_mhz = c.opt_unsigned<unsigned>("sm_mhz");
    gpu.sm_clock_max_mhz = c.opt_unsigned<unsigned>("sm_max_mhz");
    gpu.mem_clock_mhz = c.opt_unsigned<unsigned>("memory_mhz");
    gpu.mem_clock_max_mhz = c.opt_unsigned<unsigned>("memory_max_mhz");
  });
  read_part(f, "power", problem, [&](JsonFields& p) {
    gpu.power_draw_w = p.opt_number("draw_w");
    gpu.power_limit_w = p.opt_number("limit_w");
    gpu.power_default_limit_w = p.opt_number("default_limit_w");
    gpu.power_min_limit_w = p.opt_number("min_limit_w");
    gpu.power_max_limit_w = p.opt_number("max_limit_w");
    gpu.power_enforced_limit_w = p.opt_number("enforced_limit_w");
    gpu.energy_counter_supported = p.opt_bool("energy_counter_supported").value_or(false);
  });
  read_part(f, "temperature", problem, [&](JsonFields& t) {
    gpu.temperature_c = t.opt_number("gpu_c");
    gpu.memory_temperature_c = t.opt_number("memory_c");
    gpu.temperature_slowdown_c = t.opt_number("slowdown_c");
    gpu.temperature_shutdown_c = t.opt_number("shutdown_c");
    gpu.temperature_gpu_max_c = t.opt_number("gpu_max_c");
    gpu.temperature_memory_max_c = t.opt_number("memory_max_c");
  });
  read_part(f, "pcie", problem, [&](JsonFields& p) {
    gpu.pcie_gen_current = p.opt_unsigned<unsigned>("generation");
    gpu.pcie_gen_max = p.opt_unsigned<unsigned>("generation_max");
    gpu.pcie_gen_gpu_max = p.opt_unsigned<unsigned>("generation_gpu_max");
    gpu.pcie_width_current = p.opt_unsigned<unsigned>("width");
    gpu.pcie_width_max = p.opt_unsigned<unsigned>("width_max");
  });
  gpu.persistence_mode = f.opt_bool("persistence_mode");
  gpu.compute_mode = f.opt_text("compute_mode");
  if (f.has("ecc")) {
    read_part(f, "ecc", problem, [&](JsonFields& e) {
      gpu.ecc_current = e.opt_bool("current");
      gpu.ecc_pending = e.opt_bool("pending");
    });
  }
  if (f.has("clock_event_reasons")) {
    read_part(f, "clock_event_reasons", problem, [&](JsonFields& r) {
      gpu.clock_event_reasons = r.opt_unsigned<std::uint64_t>("mask");
      const json& active = r.member("active");
      for (const json& name : active.is_array() ? active : json::array()) {
        if (!name.is_string()) {
          r.fail("active", "expected strings");
          break;
        }
        gpu.clock_event_reason_names.push_back(name.get<std::string>());
      }
    });
  }
  gpu.gpm_supported = f.opt_bool("gpm_supported");
  if (f.has("mig")) {
    read_part(f, "mig", problem, [&](JsonFields& m) {
      gpu.mig_current = m.opt_bool("current").value_or(false);
      gpu.mig_pending = m.opt_bool("pending");
      const json& instances = m.member("instances");
      for (std::size_t i = 0; instances.is_array() && i < instances.size(); ++i) {
        auto instance =
            mig_instance_from_json(instances[i], m.where() + fmt::format(".instances[{}]", i));
        if (!instance.ok()) {
          if (problem.ok()) problem = instance.status();
          break;
        }
        gpu.mig_instances.push_back(std::move(*instance));
      }
    });
  }
  if (f.has("peak")) {
    auto peak = peak_from_json(f.member("peak"), where + ".peak");
    if (!peak.ok()) return peak.status();
    gpu.peak = std::move(*peak);
  }
  const json& unavailable = f.member("unavailable");
  for (std::size_t i = 0; unavailable.is_array() && i < unavailable.size(); ++i) {
    JsonFields u(unavailable[i], where + fmt::format(".unavailable[{}]", i));
    gpu.unavailable.push_back({u.text("field"), u.opt_text("reason").value_or("")});
    GPUSCOPE_RETURN_IF_ERROR(u.status());
  }
  GPUSCOPE_RETURN_IF_ERROR(f.status());
  GPUSCOPE_RETURN_IF_ERROR(problem);
  return gpu;
}

}  // namespace

Result<SystemInfo> info_from_json(const json& document) {
  JsonFields top(document, "info");
  if (!top.status().ok() || top.opt_text("kind") != "gpuscope.info") {
    return Status(Code::data_error, "not the output of `gpuscope info --json`");
  }
  // A document without the field is taken as version 1 (hand-written ones in tests and notes).
  const std::optional<int> version = top.opt_int("schema_version");
  if ((version && *version > kInfoSchemaVersion) || !top.status().ok()) {
    return Status(Code::data_error, fmt::format("info schema_version {} is not one this gpuscope "
                                                "reads (up to {})",
                                                version ? std::to_string(*version) : "(missing)",
                                                kInfoSchemaVersion));
  }
  if (top.has("error")) {
    JsonFields error(top.member("error"), "info.error");
    const std::string message = error.opt_text("message").value_or("");
    return Status(Code::data_error, fmt::format("`gpuscope info` failed: {}", message));
  }
  SystemInfo info;
  static const json kNoHost = json::object();
  const json& host_object = top.member("host");
  JsonFields host(host_object.is_null() ? kNoHost : host_object, "info.host");
  info.hostname = host.opt_text("hostname").value_or("");
  info.gpuscope_version = host.opt_text("gpuscope_version").value_or("");
  info.nvml_library = host.opt_text("nvml_library").value_or("");
  info.driver_version = host.opt_text("driver_version");
  info.nvml_version = host.opt_text("nvml_version");
  info.cuda_driver_version = host.opt_int("cuda_driver_version");
  info.cuda_runtime_version = host.opt_int("cuda_runtime_version");
  if (const auto cuda = host.opt_text("cuda_status")) info.cuda_status = status_from_text(*cuda);
  GPUSCOPE_RETURN_IF_ERROR(host.status());

  const json& gpus = top.member("gpus");
  if (!gpus.is_array()) return Status(Code::data_error, "info.gpus: expected a list");
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    GPUSCOPE_ASSIGN_OR_RETURN(GpuInfo gpu, gpu_from_json(gpus[i], fmt::format("info.gpus[{}]", i)));
    info.gpus.push_back(std::move(gpu));
  }
  const json& failures = top.member("failures");
  for (std::size_t i = 0; failures.is_array() && i < failures.size(); ++i) {
    JsonFields f(failures[i], fmt::format("info.failures[{}]", i));
    GpuFailure failure;
    failure.index = f.opt_unsigned<unsigned>("index").value_or(0);
    failure.status =
        Status(code_named(f.opt_text("error").value_or("internal")).value_or(Code::internal),
               f.opt_text("message").value_or(""));
    GPUSCOPE_RETURN_IF_ERROR(f.status());
    info.failures.push_back(std::move(failure));
  }
  return info;
}

json info_error_json(const Status& status) {
  return error_document("gpuscope.info", kInfoSchemaVersion, status);
}

}  // namespace gpuscope
