// The one findings model: what every rule in gpuscope concludes, shown the same way by every
// command and report (burn's throttling rules, study's headlines, diagnose's rules over a trace,
// the store, the HTML report).
//
// A finding says what was seen (title), proves it with numbers from this run (evidence, each
// with its unit), says what to change (fix) and, where a model exists, what changing it should
// gain (expected_speedup, a range of ratios new/old speed). A finding that holds for several
// subjects (precisions, rows, GPUs, ranks) is one finding listing them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace gpuscope::analysis {

// info: worth knowing, nothing to fix. warning: costs speed or energy; a "major" finding.
// error: the result cannot be trusted or the job is broken.
enum class Severity { info, warning, error };
std::string_view severity_name(Severity severity);  // "info", "warning", "error"
std::optional<Severity> parse_severity(std::string_view name);

enum class Confidence { low, medium, high };
std::string_view confidence_name(Confidence confidence);  // "low", "medium", "high"
std::optional<Confidence> parse_confidence(std::string_view name);

// One number from this run that supports a finding: "GPU busy" 7.5 "%".
struct Evidence {
  std::string what;
  double value = 0;
  std::string unit;  // "%", "ms", "W", "GiB", "" for a plain count
};

// A ratio range: expected new speed / old speed, low <= high, both >= 1 for a speed-up.
struct GainRange {
  double low = 1;
  double high = 1;
};

struct Finding {
  std::string id;  // stable, for programs: "throttled", "input_bound", "no_tensor_cores"
  Severity severity = Severity::info;
  std::string title;  // one line in plain words: what holds this back
  std::vector<Evidence> evidence;
  std::string fix;  // what to change; code a user would write where there is one
  std::optional<GainRange> expected_speedup;
  std::optional<Confidence> confidence;
  std::vector<std::string> subjects;  // what it holds for: "GPU 0", "amp_bf16", "rank 1"
  std::optional<int> gpu;             // when it is about one GPU
};

bool is_major(const Finding& finding);  // warning or error

// Findings with the same id, severity, title and fix become one listing all their subjects
// (in first-seen order, without repeats); their evidence is kept from the first.
std::vector<Finding> merge_same(std::vector<Finding> findings);

// Most important first: errors, then by the expected gain's midpoint (none counts as 1),
// then warnings before infos; stable otherwise.
void rank(std::vector<Finding>& findings);

// The JSON form, shared by every command's --json: {"id", "severity", "title",
// "evidence": [{"what", "value", "unit"}], "fix", "expected_speedup": {"low", "high"} | absent,
// "confidence": "low"|"medium"|"high" | absent, "subjects": [...], "gpu": N | absent}.
nlohmann::json to_json(const Finding& finding);
nlohmann::json to_json(const std::vector<Finding>& findings);
// Reads what to_json wrote; a malformed entry gives nullopt (never throws).
std::optional<Finding> finding_from_json(const nlohmann::json& value);

}  // namespace gpuscope::analysis
