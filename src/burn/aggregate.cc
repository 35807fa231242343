#include "burn/aggregate.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpuscope::burn::detail {
namespace {

// A precision's timed span, in seconds on the sampler's clock: from the start of its first window
// to the end of its last.
struct Span {
  double start = 0, end = 0;
  double seconds() const { return end - start; }
};

Span span_of(const std::vector<const WindowLine*>& windows) {
  const WindowLine& first = *windows.front();
  return {first.received_at - first.elapsed_seconds, windows.back()->received_at};
}

ErrorCounts sum_windows(const std::vector<const WindowLine*>& windows) {
  ErrorCounts e;
  for (const WindowLine* w : windows) {
    e.gemms_checked += w->gemms;
    e.mismatches += w->mismatches;
    e.nan_count += w->nan_count;
    e.inf_count += w->inf_count;
  }
  return e;
}

void add_throttle(PrecisionRow& row, std::span<const telemetry::GpuSample> samples, Span span) {
  const auto measured = telemetry::throttle_between(samples, span.start, span.end);
  for (nvml::ThrottleReason reason : nvml::kThrottleReasons) {
    const auto it = measured.find(reason);
    if (it == measured.end()) continue;
    row.throttle.push_back({std::string(nvml::throttle_reason_name(reason)), it->second.seconds,
                            !it->second.from_counter});
  }
}

// The reading over the span from `summary` (a mean or a peak), else its value at the middle of
// the span: a span between two samples still has a reading.
std::optional<double> or_middle(std::optional<double> summary,
                                std::span<const telemetry::GpuSample> samples, telemetry::Metric m,
                                Span span) {
  if (summary) return summary;
  return telemetry::value_at(samples, m, 0.5 * (span.start + span.end));
}

// Power, energy, temperature, clocks and throttling over the precision's span.
void add_telemetry(PrecisionRow& row, Span span, double flop, const Target& target,
                   std::span<const telemetry::GpuSample> samples,
                   std::vector<std::string>& warnings) {
  using telemetry::Metric;
  row.temperature_max_c =
      or_middle(telemetry::peak_between(samples, Metric::temperature_c, span.start, span.end),
                samples, Metric::temperature_c, span);
  auto mean = [&](Metric m) -> std::optional<double> {
    const auto covered = telemetry::mean_between(samples, m, span.start, span.end);
    return or_middle(covered ? std::optional(covered->value) : std::nullopt, samples, m, span);
  };
  row.temperature_start_c = telemetry::value_at(samples, Metric::temperature_c, span.start);
  row.sm_clock_average_hz = mean(Metric::sm_clock_hz);
  add_throttle(row, samples, span);
  if (auto m = telemetry::mean_between(samples, Metric::sm_activity, span.start, span.end)) {
    row.sm_activity = m->value;
  }
  if (auto m = telemetry::mean_between(samples, Metric::tensor_activity, span.start, span.end)) {
    row.tensor_activity = m->value;
  }

  // Energy: the counter's change; where there is no counter, the integral of sampled power.
  const std::optional<telemetry::Energy> energy =
      telemetry::energy_between(samples, span.start, span.end);
  const std::string name(precision_name(row.precision));
  if (!energy || energy->seconds < 0.9 * span.seconds() || span.seconds() < kMinEnergySeconds) {
    row.power_average_w = mean(Metric::power_w);
    if (span.seconds() < kMinEnergySeconds) {
      warnings.push_back(fmt::format("{}: its span ({:.2f} s) is too short to measure energy", name,
                                     span.seconds()));
    } else if (energy) {
      warnings.push_back(fmt::format("{}: telemetry covers only {:.1f} s of its {:.1f} s", name,
                                     energy->seconds, span.seconds()));
    }
    return;
  }
  row.power_average_w = energy->joules / energy->seconds;
  // The GPU's energy is shared by every instance: not this one's (measured_per_instance).
  if (target.mig) return;
  row.energy_j = *row.power_average_w * span.seconds();
  row.energy_source =
      energy->source == telemetry::EnergySource::counter ? "energy_counter" : "power_samples";
  if (*row.energy_j > 0) row.flop_per_joule = flop / *row.energy_j;
}

PrecisionRow precision_row(Precision p, const Target& target, const WorkerRun& run,
                           const TargetTelemetry* telemetry, const AggregateContext& context,
                           std::vector<std::string>& warnings) {
  const WorkerStream& s = run.stream;
  PrecisionRow row;
  row.precision = p;
  const std::string name(precision_name(p));

  std::vector<const WindowLine*> windows;
  for (const WindowLine& w : s.windows) {
    if (w.precision == p) windows.push_back(&w);
  }
  const ResultLine* result = nullptr;
  for (const ResultLine& r : s.results) {
    if (r.precision == p) result = &r;
  }
  const SkippedTest* skipped = nullptr;
  for (const SkippedTest& k : s.skipped) {
    if (k.what == name) skipped = &k;
  }
  const WorkerError* error = nullptr;
  for (const WorkerError& e : s.errors) {
    if (e.precision == p && e.code != "verification_failed" && error == nullptr) error = &e;
  }

  if (windows.empty() && result == nullptr) {
    if (skipped) {
      row.status = RowStatus::skipped;
      row.note = skipped->reason;
    } else if (error) {
      row.status = RowStatus::failed;
      row.note = error->message;
    } else {
      row.status = RowStatus::not_run;
      row.note = context.interrupted ? "interrupted before it ran" : "the worker did not get to it";
    }
    return row;
  }

  row.status = error ? RowStatus::failed : RowStatus::measured;
  if (error) row.note = error->message;
  row.windows = static_cast<int>(windows.size());
  if (!windows.empty()) {
    std::vector<double> rates;
    for (const WindowLine* w : windows) rates.push_back(w->flop_per_second);
    row.flop_per_second_median = median(rates);
    row.flop_per_second_min = *std::min_element(rates.begin(), rates.end());
    row.flop_per_second_max = *std::max_element(rates.begin(), rates.end());
  } else {
    row.flop_per_second_median = result->median;
    row.flop_per_second_min = result->min;
    row.flop_per_second_max = result->max;
  }
  if (result) {
    row.n = result->n;
    row.partial = result->partial;
    row.errors = result->errors;
    row.verified = result->verification_ok;
    row.algorithm = result->algorithm;
  } else {
    row.partial = true;
    row.errors = sum_windows(windows);
    if (row.note.empty()) row.note = "the worker stopped before its result";
  }
  if (target.peak && row.flop_per_second_median) {
    if (const std::optional<double> peak = peak_flops(*target.peak, p); peak && *peak > 0) {
      row.fraction_of_peak = *row.flop_per_second_median / *peak;
    }
  }
  if (!windows.empty()) {
    const Span span = span_of(windows);
    row.span_seconds = span.seconds();
    double flop = 0;
    for (const WindowLine* w : windows) flop += w->flop;
    if (telemetry && !telemetry->samples.empty()) {
      add_telemetry(row, span, flop, target, telemetry->samples, warnings);
    }
  }
  return row;
}

}  // namespace

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  const std::size_t mid = values.size() / 2;
  return values.size() % 2 == 1 ? values[mid] : 0.5 * (values[mid - 1] + values[mid]);
}

TargetResult aggregate_target(const Target& target, const WorkerRun& run,
                              const TargetTelemetry* telemetry, const AggregateContext& context) {
  TargetResult result;
  result.target = target;
  const WorkerStream& s = run.stream;
  result.device = s.device;
  if (run.exit) {
    result.worker_exit_code = run.exit->exit_code;
    result.worker_signal = run.exit->term_signal;
  }
  for (Precision p : context.precisions) {
    result.gemm.push_back(precision_row(p, target, run, telemetry, context, result.warnings));
  }
  result.memory = s.memory;
  if (target.peak && target.peak->memory_bandwidth_bytes_per_s && !target.mig) {
    for (MemoryRow& m : result.memory) {
      m.fraction_of_peak = m.bytes_per_second / *target.peak->memory_bandwidth_bytes_per_s;
    }
  }
  result.host_link = s.host_link;
  result.overlap = s.overlap;
  for (const SkippedTest& k : s.skipped) {
    if (!parse_precision(k.what)) result.skipped.push_back(k);
  }
  result.errors = s.errors;
  result.stderr_tail.assign(run.stderr_tail.begin(), run.stderr_tail.end());

  if (target.mig) {
    result.warnings.push_back(fmt::format(
        "power, temperature and throttling are the whole GPU's, shared by {} MIG instance{} "
        "running at once; energy per instance is not measured",
        context.targets_on_gpu, context.targets_on_gpu == 1 ? "" : "s"));
  }
  if (telemetry) {
    for (const std::string& problem : telemetry->problems) {
      result.warnings.push_back("telemetry: " + problem);
    }
  }
  if (s.bad_lines > 0) {
    result.warnings.push_back(fmt::format("{} worker output line{} not understood{}{}", s.bad_lines,
                                          s.bad_lines == 1 ? " was" : "s were",
                                          s.problems.empty() ? "" : ", e.g. ",
                                          s.problems.empty() ? "" : s.problems.front()));
  }
  decide_outcome(result, run, context.interrupted);
  return result;
}

}  // namespace gpuscope::burn::detail
