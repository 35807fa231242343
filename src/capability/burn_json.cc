#include "capability/burn_json.h"

#include <fmt/format.h>

namespace gpuscope::capability {

namespace {

using json = BurnJson;

json event(std::string_view type) {
  return json{{"v", kBurnProtocolVersion}, {"type", type}};
}

json optional_number(const std::optional<double>& value) {
  return value ? json(*value) : json(nullptr);
}

json summary_json(const WindowSummary& s, double unit) {
  return json{{"median", s.median / unit},
              {"min", s.min / unit},
              {"max", s.max / unit},
              {"mean", s.mean / unit},
              {"count", s.count}};
}

}  // namespace

std::string device_label(const DeviceInfo& device) {
  return fmt::format("{} ({}, {})", device.name, device.uuid,
                     device.pci_bus_id.empty() ? "bus id unknown" : device.pci_bus_id);
}

json device_json(const DeviceInfo& d) {
  json j = event("device");
  j["name"] = d.name;
  j["uuid"] = d.uuid;
  j["pci_bus_id"] = d.pci_bus_id;
  j["visible_devices"] = d.visible_devices;
  j["compute_capability"] = fmt::format("{}.{}", d.cc_major, d.cc_minor);
  j["sm_count"] = d.sm_count;
  j["total_memory_bytes"] = d.total_memory_bytes;
  j["free_memory_bytes"] = d.free_memory_bytes;
  j["l2_cache_bytes"] = d.l2_cache_bytes;
  j["memory_bus_width_bits"] = d.memory_bus_width_bits;
  j["sm_clock_max_hz"] = optional_number(d.sm_clock_max_hz);
  j["memory_clock_max_hz"] = optional_number(d.memory_clock_max_hz);
  j["driver_cuda_version"] = d.driver_version;
  j["runtime_cuda_version"] = d.runtime_version;
  return j;
}

json precision_support_json(const PrecisionSupport& support) {
  json j = event("precision_support");
  j["precision"] = precision_name(support.precision);
  j["supported"] = support.supported;
  if (!support.supported) j["reason"] = support.reason;
  return j;
}

json progress_json(Precision precision, double elapsed_seconds, double fraction) {
  json j = event("progress");
  j["precision"] = precision_name(precision);
  j["elapsed_seconds"] = elapsed_seconds;
  j["fraction"] = fraction;
  return j;
}

json gemm_window_json(Precision precision, const GemmWindow& w) {
  json j = event("gemm_window");
  j["precision"] = precision_name(precision);
  j["window"] = w.index;
  j["gemms"] = w.gemms;
  j["flop"] = w.flop;
  j["seconds"] = w.gemm_seconds;
  j["wall_seconds"] = w.wall_seconds;
  j["elapsed_seconds"] = w.elapsed_seconds;
  j["flop_per_second"] = w.flop_per_second();
  j["tflops"] = w.flop_per_second() * 1e-12;
  j["mismatches"] = w.mismatches;
  j["nan_count"] = w.nan_count;
  j["inf_count"] = w.inf_count;
  return j;
}

json gemm_result_json(const GemmBurnResult& r) {
  json j = event("gemm_result");
  j["precision"] = precision_name(r.precision);
  j["n"] = r.n;
  j["partial"] = r.partial;
  j["input_sets"] = r.input_sets;
  j["work_slots"] = r.work_slots;
  j["device_bytes"] = r.device_bytes;
  j["setup_seconds"] = r.setup_seconds;
  const GemmAlgorithm& a = r.algorithm;
  j["algorithm"] = json{{"algo_id", a.algo_id},
                        {"tile_id", a.tile_id},
                        {"stages_id", a.stages_id},
                        {"split_k", a.split_k},
                        {"reduction_scheme", a.reduction_scheme},
                        {"cta_swizzling", a.cta_swizzling},
                        {"custom_option", a.custom_option},
                        {"inner_shape_id", a.inner_shape_id},
                        {"cluster_shape_id", a.cluster_shape_id},
                        {"workspace_bytes", a.workspace_bytes},
                        {"workspace_limit_bytes", a.workspace_limit_bytes},
                        {"candidates_timed", a.candidates_timed},
                        {"unrepeatable", a.unrepeatable},
                        {"median_seconds", a.median_seconds},
                        {"compute_type", a.compute_type},
                        {"layout", a.layout}};
  j["windows"] = static_cast<int>(r.windows.size());
  j["flop_per_second"] = summary_json(r.flop_per_second, 1);
  j["tflops"] = summary_json(r.flop_per_second, 1e12);
  const Verification& v = r.verification;
  j["verification"] = json{{"gemms_checked", v.gemms_checked},
                           {"mismatches", v.mismatches},
                           {"nan_count", v.nan_count},
                           {"inf_count", v.inf_count},
                           {"reference_tiles_checked", v.reference_tiles_checked},
                           {"reference_tiles_failed", v.reference_tiles_failed},
                           {"reference_max_error", v.reference_max_error},
                           {"reference_tolerance", v.reference_tolerance},
                           {"ok", v.ok()}};
  j["fault_injected"] = r.fault_injected;
  j["ok"] = v.ok();
  return j;
}

json skipped_json(std::string_view what, const Status& reason) {
  json j = event("skipped");
  j["what"] = what;
  j["code"] = code_name(reason.code());
  j["reason"] = reason.message();
  return j;
}

json memory_bw_json(const MemoryBandwidthResult& r) {
  json j = event("memory_bw");
  j["kernel"] = memory_kernel_name(r.kernel);
  j["buffer_bytes"] = r.buffer_bytes;
  j["bytes_read"] = r.bytes_read;
  j["bytes_written"] = r.bytes_written;
  j["bytes_counted"] = r.bytes_counted();
  j["repeats"] = r.repeats;
  j["seconds"] = r.median_seconds;
  j["min_seconds"] = r.min_seconds;
  j["max_seconds"] = r.max_seconds;
  j["bytes_per_second"] = r.bytes_per_second();
  if (!r.variant.empty()) j["variant"] = r.variant;
  return j;
}

json host_link_json(const HostLinkResult& r) {
  json j = event("host_link");
  j["direction"] = copy_direction_name(r.direction);
  j["memory"] = host_memory_name(r.memory);
  j["size_bytes"] = r.size_bytes;
  j["bytes_moved"] = r.bytes_moved;
  j["repeats"] = r.repeats;
  j["seconds"] = r.median_seconds;
  j["min_seconds"] = r.min_seconds;
  j["max_seconds"] = r.max_seconds;
  j["timing"] = r.timing;
  j["bytes_per_second"] = r.bytes_per_second();
  return j;
}

json all_reduce_json(const AllReduceResult& r) {
  json j = event("all_reduce");
  j["gpus"] = r.gpus;
  j["bytes"] = r.bytes;
  j["iterations"] = r.iterations;
  j["seconds"] = r.seconds;
  j["algorithm_bandwidth"] = r.algorithm_bandwidth;
  j["bus_bandwidth"] = r.bus_bandwidth;
  return j;
}

json peer_copy_json(const PeerCopyResult& r) {
  json j = event("peer_copy");
  j["source"] = r.source;
  j["destination"] = r.destination;
  j["peer_access"] = r.peer_access;
  j["bytes"] = r.bytes;
  j["seconds"] = r.seconds;
  j["bytes_per_second"] = r.bandwidth;
  return j;
}

json overlap_json(const OverlapResult& r) {
  json j = event("overlap");
  j["memory"] = host_memory_name(r.memory);
  j["copy_bytes"] = r.copy_bytes;
  j["repeats"] = r.repeats;
  j["copy_seconds"] = r.copy_seconds;
  j["compute_seconds"] = r.compute_seconds;
  j["both_seconds"] = r.both_seconds;
  j["efficiency"] = r.efficiency();
  return j;
}

json error_json(std::string_view code, std::string_view message, const DeviceInfo* device,
                std::optional<Precision> precision) {
  json j = event("error");
  j["code"] = code;
  j["message"] = message;
  if (device) {
    j["device"] = json{{"name", device->name},
                       {"uuid", device->uuid},
                       {"pci_bus_id", device->pci_bus_id},
                       {"label", device_label(*device)}};
  }
  if (precision) j["precision"] = precision_name(*precision);
  return j;
}

json done_json(bool ok, bool interrupted, int exit_code) {
  json j = event("done");
  j["ok"] = ok;
  j["interrupted"] = interrupted;
  j["exit_code"] = exit_code;
  return j;
}

}  // namespace gpuscope::capability
