#include "store/record_json.h"

#include <fmt/format.h>

namespace gpuscope::store {

Finding gpu_lost_finding(std::optional<int> gpu, std::optional<double> t_s,
                         std::string_view message) {
  std::string when =
      t_s ? fmt::format(" {:.1f} s into the recording", *t_s) : " during the recording";
  Finding finding;
  finding.id = "gpu_lost";
  finding.severity = Severity::error;
  finding.title = fmt::format("GPU {} stopped answering{}{}{}", gpu ? std::to_string(*gpu) : "?",
                              when, message.empty() ? "" : ": ", message);
  finding.fix = "check `nvidia-smi` and the kernel log (Xid errors) before trusting it again";
  finding.gpu = gpu;
  if (t_s) finding.evidence.push_back({"into the recording", *t_s, "s"});
  return finding;
}

namespace detail {

using nlohmann::json;

json finding_details(const Finding& finding) {
  json details = analysis::to_json(finding);
  for (const char* kept_apart : {"id", "severity", "title", "gpu"}) details.erase(kept_apart);
  return details;
}

bool read_finding_details(const json& details, Finding& finding) {
  if (!details.is_object()) return false;
  json whole = details;
  whole["id"] = "x";  // the code may be empty (version 1 stores); only the rest is read here
  whole["severity"] = severity_name(finding.severity);
  whole["title"] = finding.title;
  std::optional<Finding> read = analysis::finding_from_json(whole);
  if (!read) return false;
  finding.evidence = std::move(read->evidence);
  finding.fix = std::move(read->fix);
  finding.expected_speedup = read->expected_speedup;
  finding.confidence = read->confidence;
  finding.subjects = std::move(read->subjects);
  return true;
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
