#include "store/record_json.h"

#include <fmt/format.h>

namespace gpuscope::store {

std::string_view severity_name(Severity severity) {
  switch (severity) {
    case Severity::info:
      return "info";
    case Severity::warning:
      return "warning";
    case Severity::error:
      return "error";
  }
  return "info";
}

Finding gpu_lost_finding(std::optional<int> gpu, std::optional<double> t_s,
                         std::string_view message) {
  std::string when =
      t_s ? fmt::format(" {:.1f} s into the recording", *t_s) : " during the recording";
  return {
      gpu, Severity::error, "gpu_lost",
      fmt::format("GPU {} stopped answering{}{}{}; check `nvidia-smi` and the kernel log (Xid "
                  "errors) before trusting it again",
                  gpu ? std::to_string(*gpu) : "?", when, message.empty() ? "" : ": ", message)};
}

namespace detail {

using nlohmann::json;

std::optional<Severity> parse_severity(std::string_view name) {
  for (Severity s : {Severity::info, Severity::warning, Severity::error}) {
    if (severity_name(s) == name) return s;
  }
  return std::nullopt;
}

json peak_to_json(const PeakRecord& peak) {
  json out = {{"model", peak.model},
              {"flops_per_s", peak.flops_per_s},
              {"source", peak.source},
              {"estimated", peak.estimated}};
  if (peak.memory_bytes_per_s) out["memory_bandwidth_bytes_per_s"] = *peak.memory_bytes_per_s;
  return out;
}

Result<PeakRecord> peak_from_json(const json& in) {
  if (!in.is_object()) return Status(Code::data_error, "peak: expected an object");
  PeakRecord peak;
  peak.model = in.value("model", "");
  peak.source = in.value("source", "");
  peak.estimated = in.value("estimated", false);
  if (auto it = in.find("flops_per_s"); it != in.end() && it->is_object()) {
    for (const auto& [precision, rate] : it->items()) {
      if (!rate.is_number()) {
        return Status(Code::data_error,
                      fmt::format("peak.flops_per_s.{}: not a number", precision));
      }
      peak.flops_per_s[precision] = rate.get<double>();
    }
  }
  if (auto it = in.find("memory_bandwidth_bytes_per_s"); it != in.end() && it->is_number()) {
    peak.memory_bytes_per_s = it->get<double>();
  }
  return peak;
}

Result<json> parse_json_column(const std::string& text, std::string_view what) {
  json parsed = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (parsed.is_discarded()) {
    return Status(Code::data_error, fmt::format("the store's {} is not valid JSON", what));
  }
  return parsed;
}

}  // namespace detail
}  // namespace gpuscope::store
