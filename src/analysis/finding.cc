#include <algorithm>
#include <array>

#include <nlohmann/json.hpp>

#include "gpuscope/analysis.h"

namespace gpuscope::analysis {
namespace {

constexpr std::array<std::string_view, 3> kSeverityNames = {"info", "warning", "error"};
constexpr std::array<std::string_view, 3> kConfidenceNames = {"low", "medium", "high"};

template <typename Enum, std::size_t N>
std::optional<Enum> parse_name(const std::array<std::string_view, N>& names,
                               std::string_view name) {
  for (std::size_t i = 0; i < N; ++i) {
    if (names[i] == name) return static_cast<Enum>(i);
  }
  return std::nullopt;
}

double gain_midpoint(const Finding& finding) {
  if (!finding.expected_speedup) return 1;
  return (finding.expected_speedup->low + finding.expected_speedup->high) / 2;
}

bool same_conclusion(const Finding& a, const Finding& b) {
  return a.id == b.id && a.severity == b.severity && a.title == b.title && a.fix == b.fix;
}

}  // namespace

std::string_view severity_name(Severity severity) {
  return kSeverityNames[static_cast<std::size_t>(severity)];
}

std::optional<Severity> parse_severity(std::string_view name) {
  return parse_name<Severity>(kSeverityNames, name);
}

std::string_view confidence_name(Confidence confidence) {
  return kConfidenceNames[static_cast<std::size_t>(confidence)];
}

std::optional<Confidence> parse_confidence(std::string_view name) {
  return parse_name<Confidence>(kConfidenceNames, name);
}

bool is_major(const Finding& finding) {
  return finding.severity != Severity::info;
}

std::string text(const Finding& finding) {
  if (finding.fix.empty()) return finding.title;
  if (finding.title.empty()) return finding.fix;
  return finding.title + ": " + finding.fix;
}

std::string subjects_text(const Finding& finding) {
  std::string out;
  for (const std::string& subject : finding.subjects) {
    if (!out.empty()) out += ", ";
    out += subject;
  }
  return out;
}

std::vector<Finding> merge_same(std::vector<Finding> findings) {
  std::vector<Finding> merged;
  for (auto& finding : findings) {
    auto into = std::find_if(merged.begin(), merged.end(),
                             [&](const Finding& kept) { return same_conclusion(kept, finding); });
    if (into == merged.end()) {
      merged.push_back(std::move(finding));
      continue;
    }
    for (auto& subject : finding.subjects) {
      if (std::find(into->subjects.begin(), into->subjects.end(), subject) ==
          into->subjects.end()) {
        into->subjects.push_back(std::move(subject));
      }
    }
    if (into->gpu != finding.gpu) into->gpu.reset();  // no longer about one GPU
  }
  return merged;
}

void rank(std::vector<Finding>& findings) {
  std::stable_sort(findings.begin(), findings.end(), [](const Finding& a, const Finding& b) {
    const bool a_error = a.severity == Severity::error;
    const bool b_error = b.severity == Severity::error;
    if (a_error != b_error) return a_error;
    const double a_gain = gain_midpoint(a);
    const double b_gain = gain_midpoint(b);
    if (a_gain != b_gain) return a_gain > b_gain;
    return a.severity > b.severity;
  });
}

nlohmann::json to_json(const Finding& finding) {
  nlohmann::json evidence = nlohmann::json::array();
  for (const auto& item : finding.evidence) {
    evidence.push_back({{"what", item.what}, {"value", item.value}, {"unit", item.unit}});
  }
  nlohmann::json out = {{"id", finding.id},       {"severity", severity_name(finding.severity)},
                        {"title", finding.title}, {"evidence", std::move(evidence)},
                        {"fix", finding.fix},     {"subjects", finding.subjects}};
  if (finding.expected_speedup) {
    out["expected_speedup"] = {{"low", finding.expected_speedup->low},
                               {"high", finding.expected_speedup->high}};
  }
  if (finding.confidence) out["confidence"] = confidence_name(*finding.confidence);
  if (finding.gpu) out["gpu"] = *finding.gpu;
  return out;
}

nlohmann::json to_json(const std::vector<Finding>& findings) {
  nlohmann::json out = nlohmann::json::array();
  for (const auto& finding : findings) out.push_back(to_json(finding));
  return out;
}

std::optional<Finding> finding_from_json(const nlohmann::json& value) {
  try {
    Finding finding;
    finding.id = value.at("id").get<std::string>();
    const auto severity = parse_severity(value.at("severity").get<std::string>());
    if (!severity || finding.id.empty()) return std::nullopt;
    finding.severity = *severity;
    finding.title = value.at("title").get<std::string>();
    finding.fix = value.value("fix", std::string{});
    for (const auto& item : value.value("evidence", nlohmann::json::array())) {
      finding.evidence.push_back({item.at("what").get<std::string>(),
                                  item.at("value").get<double>(),
                                  item.value("unit", std::string{})});
    }
    if (value.contains("expected_speedup")) {
      const auto& gain = value.at("expected_speedup");
      finding.expected_speedup =
          GainRange{gain.at("low").get<double>(), gain.at("high").get<double>()};
      if (finding.expected_speedup->low > finding.expected_speedup->high) return std::nullopt;
    }
    if (value.contains("confidence")) {
      finding.confidence = parse_confidence(value.at("confidence").get<std::string>());
      if (!finding.confidence) return std::nullopt;
    }
    finding.subjects = value.value("subjects", std::vector<std::string>{});
    if (value.contains("gpu")) finding.gpu = value.at("gpu").get<int>();
    return finding;
  } catch (const nlohmann::json::exception&) {
    return std::nullopt;
  }
}

}  // namespace gpuscope::analysis
