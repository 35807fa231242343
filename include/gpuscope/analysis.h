// The one findings model: what every rule in gpuscope concludes, shown the same way by every
// command and report (burn's throttling rules, study's headlines, diagnose's rules over a trace,
// the store, the HTML report).
//
// A finding says what was seen (title), proves it with numbers from this run (evidence, each
// with its unit), says what to change (fix) and, where a model exists, what changing it should
// gain (expected_speedup, a range of ratios new/old speed). A finding that holds for several
// subjects (precisions, rows, GPUs, ranks) is one finding listing them.
#pragma once

#include <map>
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

// Every member has a default, so that a finding reads as designated initializers naming only
// what it has: {.id = "gpu_lost", .severity = Severity::error, .title = "...", .gpu = 1}.
struct Finding {
  std::string id{};  // stable, for programs: "throttled", "input_bound", "no_tensor_cores"
  Severity severity = Severity::info;
  std::string title{};  // one line in plain words: what holds this back
  std::vector<Evidence> evidence{};
  std::string fix{};  // what to change; code a user would write where there is one
  std::optional<GainRange> expected_speedup{};
  std::optional<Confidence> confidence{};
  std::vector<std::string> subjects{};  // what it holds for: "GPU 0", "amp_bf16", "rank 1"
  std::optional<int> gpu{};             // when it is about one GPU
};

bool is_major(const Finding& finding);  // warning or error

// For people, in one line: the title, then the fix after ": " when there is one. (Subjects,
// evidence and gain are shown beside it by whoever prints it.)
std::string text(const Finding& finding);
// The subjects joined with ", "; "" when none.
std::string subjects_text(const Finding& finding);

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

// ---------------------------------------------------------------------------------------------
// Rules over a burn: one precision's timed GEMM span as measured, whoever read it (the report
// from the store, study from burn's output). One rule and one threshold for every reader.

// A slowdown shorter than this share of a precision's timed span is noise, not a finding.
inline constexpr double kThrottleShare = 0.05;
// A GPU this close to its slowdown temperature (degC) is about to throttle.
inline constexpr double kSlowdownMarginC = 5;
// A precision below this share of its datasheet rate is far from what the GPU should give.
inline constexpr double kLowFractionOfPeak = 0.5;

struct GemmSpan {
  std::string precision;                     // "bf16"
  std::optional<double> span_s;              // the timed span; absent in older records
  std::map<std::string, double> throttle_s;  // by NVML reason name ("sw_power_cap"), seconds
  std::optional<double> temperature_max_c;
  std::optional<double> fraction_of_peak;  // median / datasheet
  std::optional<double> peak_flop_per_s;   // the datasheet rate compared with
  std::optional<double> errors;            // wrong elements or tiles; absent: not checked
  std::string skipped;                     // why it was not measured; "" when it was
};

// The findings of one GPU's burn (gpu: its number; absent when unknown), each conclusion once
// with the precisions it holds for as subjects, in this order:
//   wrong_results (error)      any wrong GEMM result
//   throttled (warning)        slowed down for a reason other than the power limit (thermal,
//                              hardware slowdown, power brake, ...) for more than kThrottleShare
//                              of a precision's span (any time at all where the span is unknown)
//   low_fraction_of_peak (warning)  below kLowFractionOfPeak of the datasheet rate
//   near_slowdown_temperature (warning)  within kSlowdownMarginC of `slowdown_c`
//   power_capped (info)        at the power limit (sw_power_cap) for more than kThrottleShare of
//                              the GEMM time: normal for dense GEMMs, said once for the GPU
//   not_measured (info)        a precision skipped, with its reason
std::vector<Finding> burn_findings(const std::vector<GemmSpan>& spans, std::optional<int> gpu,
                                   std::optional<double> slowdown_c);

// Rates of one GPU depend on how warm it starts (1-4 % on an H100 between a run started at 74 °C
// and one at 50 °C): compared rows whose starting temperatures differ by more than this are said
// to.
inline constexpr double kStartTemperatureGapC = 15;

// One compared row's starting temperature: `what` ("bf16") started at `celsius` on `where`
// (the GPU and run, as the comparison names it).
struct StartTemperature {
  std::string what, where;
  double celsius = 0;
};

// "start_temperature_gap" (info) when rows of the same `what` started more than
// kStartTemperatureGapC apart, listing those `what`s as subjects, with the widest gap as
// evidence; nullopt otherwise.
std::optional<Finding> start_temperature_gap(const std::vector<StartTemperature>& rows);

// Throttle reasons that are no problem: the GPU idle between windows, and the power limit that
// dense GEMMs reach on purpose.
bool expected_throttle_reason(std::string_view reason);

// ---------------------------------------------------------------------------------------------
// Answers that respect the noise.

// One candidate for "the fastest" or "the most efficient": a value and how much it varied
// (relative spread, e.g. (p90 - p10) / median of its step times; absent: not measured).
struct Candidate {
  std::string name;
  double value = 0;
  std::optional<double> relative_spread;
};

// The best candidate and those it does not beat by more than the measured spread (the larger of
// the two candidates' spreads): a tie. higher_is_better: samples/s; false: J/sample.
// nullopt for no candidates.
struct Best {
  std::string name;
  double value = 0;
  std::vector<std::string> tied_with;  // in the candidates' order; empty: a clear winner
  std::optional<double> margin;        // relative: best over the runner-up, minus 1; absent
                                       // when alone
};
std::optional<Best> best_of(const std::vector<Candidate>& candidates, bool higher_is_better);

// ---------------------------------------------------------------------------------------------
// Knees of a power-limit sweep: the lowest power limit that still gives a fraction (80, 90,
// 95 %) of the best throughput, the numbers seeds/000 read off its charts by hand.

struct SweepPoint {
  double power_limit_w = 0;
  double throughput = 0;  // any rate (samples/s, FLOP/s): only ratios matter
};

struct Knee {
  double fraction = 0;       // of the best throughput, e.g. 0.9
  double power_limit_w = 0;  // the lowest limit that reaches it
  // true: already reached at the lowest limit measured, so the real knee may lie lower.
  bool at_lowest_limit = false;
};

// The lowest power limit at which the throughput reaches `fraction` of the sweep's best,
// interpolated linearly between the two measured limits around the first crossing (a sweep is
// noisy, not monotonic: the first crossing from below counts). nullopt when there are no points
// or no positive throughput. REQUIRES: 0 < fraction <= 1.
std::optional<Knee> find_knee(std::vector<SweepPoint> points, double fraction);

}  // namespace gpuscope::analysis
