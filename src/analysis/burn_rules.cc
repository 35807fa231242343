// The rules over a burn's GEMM spans (see burn_findings in gpuscope/analysis.h).
#include <fmt/format.h>

#include <algorithm>

#include "gpuscope/analysis.h"

namespace gpuscope::analysis {
namespace {

// Reasons other than the expected ones that slowed a span down past the threshold, with their
// seconds: "sw_thermal_slowdown 3.0 s".
std::vector<std::pair<std::string, double>> slowdowns(const GemmSpan& span) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& [reason, seconds] : span.throttle_s) {
    if (expected_throttle_reason(reason) || !(seconds > 0)) continue;
    const bool counts = span.span_s && *span.span_s > 0 ? seconds > kThrottleShare * *span.span_s
                                                        : true;  // older records: any time
    if (counts) out.emplace_back(reason, seconds);
  }
  return out;
}

Finding make(std::string id, Severity severity, std::string title, std::string fix,
             std::optional<int> gpu) {
  Finding f;
  f.id = std::move(id);
  f.severity = severity;
  f.title = std::move(title);
  f.fix = std::move(fix);
  f.gpu = gpu;
  f.confidence = Confidence::high;  // measured directly, not inferred
  return f;
}

// Adds `subject` to the finding with `id` in `out`, or a new finding made by `create`.
template <typename Create>
void add_subject(std::vector<Finding>& out, const std::string& id, const std::string& subject,
                 Create create) {
  auto it = std::find_if(out.begin(), out.end(), [&](const Finding& f) { return f.id == id; });
  if (it == out.end()) {
    out.push_back(create());
    it = out.end() - 1;
  }
  if (std::find(it->subjects.begin(), it->subjects.end(), subject) == it->subjects.end()) {
    it->subjects.push_back(subject);
  }
}

}  // namespace

std::optional<Finding> start_temperature_gap(const std::vector<StartTemperature>& rows) {
  const StartTemperature* widest_cold = nullptr;
  const StartTemperature* widest_warm = nullptr;
  std::vector<std::string> subjects;
  for (const StartTemperature& row : rows) {
    if (std::find(subjects.begin(), subjects.end(), row.what) != subjects.end()) continue;
    const StartTemperature* cold = &row;
    const StartTemperature* warm = &row;
    for (const StartTemperature& other : rows) {
      if (other.what != row.what) continue;
      if (other.celsius < cold->celsius) cold = &other;
      if (other.celsius > warm->celsius) warm = &other;
    }
    const double gap = warm->celsius - cold->celsius;
    if (gap <= kStartTemperatureGapC) continue;
    subjects.push_back(row.what);
    if (!widest_cold || gap > widest_warm->celsius - widest_cold->celsius) {
      widest_cold = cold;
      widest_warm = warm;
    }
  }
  if (subjects.empty()) return std::nullopt;
  Finding f = make("start_temperature_gap", Severity::info,
                   fmt::format("compared rows started {:.0f} °C apart ({} at {:.0f} °C, {} at "
                               "{:.0f} °C): a warm GPU sustains lower rates",
                               widest_warm->celsius - widest_cold->celsius, widest_cold->where,
                               widest_cold->celsius, widest_warm->where, widest_warm->celsius),
                   "compare runs that start at similar temperatures (let the GPU cool down, or "
                   "warm both up first); differences of a few % may be the temperature",
                   std::nullopt);
  f.evidence = {{"coolest start", widest_cold->celsius, "degC"},
                {"warmest start", widest_warm->celsius, "degC"}};
  f.subjects = std::move(subjects);
  return f;
}

bool expected_throttle_reason(std::string_view reason) {
  return reason == "gpu_idle" || reason == "sw_power_cap";
}

std::vector<Finding> burn_findings(const std::vector<GemmSpan>& spans, std::optional<int> gpu,
                                   std::optional<double> slowdown_c) {
  std::vector<Finding> errors, warnings, infos;
  double capped_s = 0, capped_span_s = 0;
  std::vector<std::string> capped_precisions;
  double worst_temperature = 0;
  for (const GemmSpan& span : spans) {
    if (span.errors && *span.errors > 0) {
      add_subject(errors, "wrong_results", span.precision, [&] {
        Finding f = make("wrong_results", Severity::error, "GEMMs gave wrong results under load",
                         "check `nvidia-smi -q -d ECC` and the kernel log for XID errors; a "
                         "healthy GPU repeats itself exactly",
                         gpu);
        f.evidence.push_back({"wrong elements or tiles", *span.errors, ""});
        return f;
      });
    }
    for (const auto& slowdown : slowdowns(span)) {
      // Not a structured binding: clang 14 (the fuzz preset's) cannot capture one.
      const auto& reason = slowdown.first;
      const auto& seconds = slowdown.second;
      add_subject(warnings, "throttled", span.precision, [&] {
        Finding f =
            make("throttled", Severity::warning,
                 fmt::format("slowed down by {} for {:.1f} s{}, beyond the power limit", reason,
                             seconds, span.span_s ? fmt::format(" of {:.1f} s", *span.span_s) : ""),
                 "check cooling and airflow: the rate measured is what this GPU sustains "
                 "here, not its peak",
                 gpu);
        f.evidence.push_back({reason, seconds, "s"});
        if (span.span_s) f.evidence.push_back({"timed span", *span.span_s, "s"});
        if (span.temperature_max_c) {
          f.evidence.push_back({"temperature reached", *span.temperature_max_c, "degC"});
        }
        return f;
      });
    }
    if (span.fraction_of_peak && *span.fraction_of_peak < kLowFractionOfPeak) {
      add_subject(warnings, "low_fraction_of_peak", span.precision, [&] {
        Finding f = make("low_fraction_of_peak", Severity::warning,
                         fmt::format("reached only {:.0f}% of the datasheet's rate",
                                     100 * *span.fraction_of_peak),
                         "check clocks, the power limit and throttling in the telemetry", gpu);
        f.evidence.push_back({"of the datasheet rate", 100 * *span.fraction_of_peak, "%"});
        if (span.peak_flop_per_s)
          f.evidence.push_back({"datasheet", *span.peak_flop_per_s, "FLOP/s"});
        return f;
      });
    }
    if (span.temperature_max_c && slowdown_c &&
        *span.temperature_max_c >= *slowdown_c - kSlowdownMarginC) {
      worst_temperature = std::max(worst_temperature, *span.temperature_max_c);
      add_subject(warnings, "near_slowdown_temperature", span.precision, [&] {
        return make("near_slowdown_temperature", Severity::warning,
                    fmt::format("ran within {:.0f} °C of the slowdown temperature {:.0f} °C",
                                kSlowdownMarginC, *slowdown_c),
                    "check cooling", gpu);
      });
    }
    if (auto it = span.throttle_s.find("sw_power_cap"); it != span.throttle_s.end()) {
      const double share_of = span.span_s.value_or(0);
      if (share_of > 0 ? it->second > kThrottleShare * share_of : it->second > 0) {
        capped_precisions.push_back(span.precision);
      }
      capped_s += it->second;
      capped_span_s += share_of;
    }
    if (!span.skipped.empty()) {
      // One finding per reason: precisions skipped for the same reason are listed together.
      Finding f = make("not_measured", Severity::info, "not measured", span.skipped, gpu);
      f.subjects = {span.precision};
      infos.push_back(std::move(f));
    }
  }
  for (Finding& f : warnings) {
    if (f.id == "near_slowdown_temperature") {
      f.evidence = {{"temperature reached", worst_temperature, "degC"},
                    {"slowdown temperature", *slowdown_c, "degC"}};
    }
  }
  if (!capped_precisions.empty()) {
    Finding f = make("power_capped", Severity::info, "", "", gpu);
    if (capped_span_s > 0) {
      const double share = std::min(1.0, capped_s / capped_span_s);
      f.title = fmt::format(
          "ran at its power limit for {:.0f}% of the GEMM time (sw_power_cap): normal for dense "
          "GEMMs; the rates are what this GPU sustains at its limit",
          100 * share);
      f.evidence.push_back({"GEMM time at the power limit", 100 * share, "%"});
    } else {
      f.title = fmt::format(
          "ran at its power limit for {:.1f} s (sw_power_cap): normal for dense GEMMs; the rates "
          "are what this GPU sustains at its limit",
          capped_s);
    }
    f.evidence.push_back({"at the power limit", capped_s, "s"});
    f.subjects = std::move(capped_precisions);
    infos.insert(infos.begin(), std::move(f));
  }
  std::vector<Finding> out = std::move(errors);
  out.insert(out.end(), warnings.begin(), warnings.end());
  out.insert(out.end(), infos.begin(), infos.end());
  return merge_same(std::move(out));
}

}  // namespace gpuscope::analysis
