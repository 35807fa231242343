// The telemetry section: what each GPU did over time — power, clocks, temperature, SM and
// tensor activity — with the spans it was throttled shaded, and a table of the numbers (from
// every sample; the charts are downsampled for drawing).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>

#include "gpuscope/nvml.h"
#include "gpuscope/telemetry.h"
#include "report/downsample.h"
#include "report/report_model.h"

namespace gpuscope::report::detail {
namespace {

namespace names = store::names;

// NVML clock-event reasons that slow a busy GPU down (idle and application clocks do not).
constexpr std::uint64_t kThrottleBits = 0x4 | 0x8 | 0x20 | 0x40 | 0x80;

struct MetricLine {
  const char* metric;
  const char* suffix;  // told apart from the group's other metrics by this
};

struct Group {
  const char* key;
  const char* title;
  Unit unit;
  std::vector<MetricLine> lines;
};

const std::vector<Group>& groups() {
  static const std::vector<Group> kGroups = {
      {"power", "Power", Unit::watts, {{names::kPowerW, ""}}},
      {"clocks",
       "Clocks",
       Unit::hertz,
       {{names::kSmClockHz, "SM"}, {names::kMemoryClockHz, "memory"}}},
      {"temperature",
       "Temperature",
       Unit::celsius,
       {{names::kTemperatureC, "GPU"}, {names::kMemoryTemperatureC, "memory"}}},
      {"activity",
       "Activity",
       Unit::ratio,
       {{names::kSmActivity, "SM"},
        {names::kTensorActivity, "tensor"},
        {names::kDramActivity, "DRAM"},
        {names::kGpuUtilization, "NVML utilization"}}},
      {"memory", "Memory used", Unit::bytes, {{names::kMemoryUsedBytes, ""}}},
  };
  return kGroups;
}

struct EntrySeries {
  Entry entry;
  std::map<std::string, const store::TelemetrySeries*> by_metric;
};

const store::TelemetrySeries* find(const EntrySeries& e, const char* metric) {
  auto it = e.by_metric.find(metric);
  return it == e.by_metric.end() ? nullptr : it->second;
}

// Time-weighted mean and integral (trapezoids) over the series' span.
struct Integral {
  double span_s = 0, integral = 0;
  std::optional<double> mean() const {
    if (!(span_s > 0)) return std::nullopt;
    return integral / span_s;
  }
};

Integral integrate(const store::TelemetrySeries& s) {
  Integral out;
  for (std::size_t i = 1; i < s.t_s.size(); ++i) {
    double dt = s.t_s[i] - s.t_s[i - 1];
    out.integral += dt * (s.values[i] + s.values[i - 1]) / 2;
    out.span_s += dt;
  }
  if (s.t_s.size() == 1) return {0, 0};
  return out;
}

struct ThrottleSpan {
  double t0 = 0, t1 = 0;
  std::uint64_t bits = 0;
};

// Each sample's mask holds until the next sample; the last one for a typical interval.
std::vector<ThrottleSpan> throttle_spans(const store::TelemetrySeries& s) {
  std::vector<ThrottleSpan> spans;
  double typical = s.t_s.size() > 1 ? (s.t_s.back() - s.t_s.front()) / double(s.t_s.size() - 1) : 1;
  for (std::size_t i = 0; i < s.t_s.size(); ++i) {
    auto bits = static_cast<std::uint64_t>(s.values[i]) & kThrottleBits;
    double t1 = i + 1 < s.t_s.size() ? s.t_s[i + 1] : s.t_s[i] + typical;
    if (bits == 0) continue;
    if (!spans.empty() && spans.back().bits == bits && spans.back().t1 >= s.t_s[i]) {
      spans.back().t1 = t1;
    } else {
      spans.push_back({s.t_s[i], t1, bits});
    }
  }
  return spans;
}

std::string reasons_text(std::uint64_t bits) {
  std::string out;
  for (const std::string& name : nvml::clock_event_reason_names(bits)) {
    out += (out.empty() ? "" : ", ") + name;
  }
  return out;
}

bool has_throttle_measurements(const store::RunData& run) {
  return std::any_of(run.measurements.begin(), run.measurements.end(),
                     [](const store::Measurement& m) { return m.name == names::kThrottleSeconds; });
}

// Seconds the GPU was throttled, summed over NVML's reasons, computed as `monitor`'s summary
// computes it (telemetry::throttle_between: a reason's time counter where the GPU has one, else
// the sampled masks), so that both say the same number. nullopt when neither was recorded.
std::optional<double> throttled_seconds(const EntrySeries& e) {
  std::map<double, telemetry::GpuSample> by_time;
  for (const auto& [name, series] : e.by_metric) {
    std::optional<telemetry::Metric> metric = telemetry::metric_by_name(name);
    if (!metric) continue;
    bool wanted = *metric == telemetry::Metric::clock_event_reasons;
    for (nvml::ThrottleReason reason : nvml::kThrottleReasons) {
      wanted = wanted || telemetry::throttle_metric(reason) == metric;
    }
    if (!wanted) continue;
    for (std::size_t i = 0; i < series->t_s.size(); ++i) {
      telemetry::GpuSample& sample = by_time[series->t_s[i]];
      sample.t_s = series->t_s[i];
      sample.values.set(*metric, series->values[i]);
    }
  }
  std::vector<telemetry::GpuSample> samples;
  for (auto& [t, sample] : by_time) samples.push_back(std::move(sample));
  const double forever = std::numeric_limits<double>::infinity();
  auto times = telemetry::throttle_between(samples, -forever, forever);
  if (times.empty()) return std::nullopt;
  double total = 0;
  for (const auto& [reason, time] : times) total += time.seconds;
  return total;
}

// The charts of one run's GPUs.
void add_run_charts(const ReportBuilder& b, Section& s,
                    const std::vector<const EntrySeries*>& entries, int run_index) {
  bool label_entries = entries.size() > 1;
  std::size_t max_points = b.options().max_points_per_series;

  // Throttled spans, shaded on every chart of the run.
  std::vector<Span> spans;
  for (const EntrySeries* e : entries) {
    const store::TelemetrySeries* reasons = find(*e, names::kClockEventReasons);
    if (!reasons) continue;
    for (const ThrottleSpan& t : throttle_spans(*reasons)) {
      std::string label = "throttled: " + reasons_text(t.bits);
      if (label_entries) label = fmt::format("GPU {} {}", e->entry.gpu_number, label);
      spans.push_back({t.t0, t.t1, label});
    }
  }

  for (const Group& g : groups()) {
    Chart c;
    c.key = fmt::format("telemetry_{}{}", g.key, run_index ? fmt::format("_{}", run_index) : "");
    c.title = g.title;
    c.kind = ChartKind::lines;
    c.x_title = "time since the run started";
    c.x_unit = Unit::seconds;
    c.y_title = g.title;
    c.y_unit = g.unit;
    std::size_t measured = 0;
    bool downsampled = false;
    for (const EntrySeries* e : entries) {
      int present = 0;
      for (const MetricLine& line : g.lines) present += find(*e, line.metric) != nullptr;
      for (const MetricLine& line : g.lines) {
        const store::TelemetrySeries* series = find(*e, line.metric);
        if (!series) continue;
        Series out;
        out.name = label_entries ? b.entry_label(e->entry, false) : "";
        if (present > 1 || out.name.empty()) {
          std::string suffix = *line.suffix ? line.suffix : g.title;
          out.name += (out.name.empty() ? "" : " ") + suffix;
        }
        std::vector<std::size_t> keep = downsample_indices(series->t_s, series->values, max_points);
        measured += series->t_s.size();
        downsampled = downsampled || keep.size() < series->t_s.size();
        for (std::size_t i : keep) {
          out.x.push_back(series->t_s[i]);
          out.y.push_back(series->values[i]);
        }
        c.series.push_back(std::move(out));
      }
    }
    if (c.series.empty()) continue;
    if (downsampled) c.points_measured = measured;
    c.spans = spans;
    if (!label_entries && entries.front()->entry.gpu) {
      const store::GpuRecord& gpu = *entries.front()->entry.gpu;
      if (g.unit == Unit::watts && gpu.power_limit_w) {
        c.rules.push_back(
            {*gpu.power_limit_w, "power limit " + format_value(*gpu.power_limit_w, Unit::watts)});
      }
      if (g.unit == Unit::celsius && gpu.temperature_slowdown_c) {
        c.rules.push_back({*gpu.temperature_slowdown_c,
                           "slowdown " + format_value(*gpu.temperature_slowdown_c, Unit::celsius)});
      }
    }
    s.blocks.push_back(std::move(c));
  }
}

}  // namespace

void add_telemetry_section(ReportBuilder& b) {
  std::vector<EntrySeries> entries;
  std::set<const store::RunData*> runs;
  for (const store::RunData& run : b.runs()) {
    for (const store::TelemetrySeries& s : run.telemetry) {
      if (s.t_s.empty()) continue;
      auto it = std::find_if(entries.begin(), entries.end(), [&](const EntrySeries& e) {
        return e.entry.run == &run && e.entry.gpu_number == s.gpu;
      });
      if (it == entries.end()) {
        entries.push_back({{&run, ReportBuilder::find_gpu(run, s.gpu), s.gpu}, {}});
        it = entries.end() - 1;
      }
      it->by_metric[s.metric] = &s;
      runs.insert(&run);
    }
  }
  if (entries.empty()) return;
  bool with_run = runs.size() > 1;

  Section s;
  s.key = "telemetry";
  s.title = "Telemetry";
  s.intro =
      "What each GPU did over time: a busy GPU holds its clocks below its temperature and "
      "power limits; shaded spans are where it was throttled.";
  // One set of charts per run: runs have their own time axes and lengths, and overlaying them
  // hides the shorter one. The GPUs of a run share its charts.
  int run_index = 0;
  for (const store::RunData& run : b.runs()) {
    std::vector<const EntrySeries*> group;
    for (const EntrySeries& e : entries) {
      if (e.entry.run == &run) group.push_back(&e);
    }
    if (group.empty()) continue;
    if (with_run) s.blocks.push_back(Paragraph{ReportBuilder::run_label(run) + ":"});
    add_run_charts(b, s, group, run_index++);
  }

  Table t;
  t.key = "telemetry_summary";
  t.title = "Telemetry summary";
  t.caption =
      "From every sample: means are time-weighted; energy is the GPU's energy counter "
      "over the recording, or power integrated over time where there is none; throttled "
      "time is the seconds power, thermal and hardware slowdowns (not idle) held the clocks, "
      "summed over those reasons: from the GPU's throttle-time counters where it has them, else "
      "from the sampled reasons, as `gpuscope monitor` counts it.";
  t.columns = {{"gpu", "GPU", Unit::none},
               {"samples", "samples", Unit::count},
               {"span_s", "span", Unit::seconds},
               {"power_avg_w", "avg power", Unit::watts},
               {"power_max_w", "max power", Unit::watts},
               {"energy_j", "energy", Unit::joules},
               {"sm_clock_avg_hz", "avg SM clock", Unit::hertz},
               {"sm_clock_min_hz", "min SM clock", Unit::hertz},
               {"temperature_max_c", "max temp", Unit::celsius},
               {"sm_activity_avg", "avg SM activity", Unit::ratio},
               {"tensor_activity_avg", "avg tensor activity", Unit::ratio},
               {"throttled_s", "throttled", Unit::seconds}};
  for (const EntrySeries& e : entries) {
    std::size_t samples = 0;
    double span = 0;
    for (const auto& [metric, series] : e.by_metric) {
      samples = std::max(samples, series->t_s.size());
      span = std::max(span, series->t_s.back() - series->t_s.front());
    }
    auto mean = [&](const char* metric) -> std::optional<double> {
      const store::TelemetrySeries* series = find(e, metric);
      return series ? integrate(*series).mean() : std::nullopt;
    };
    auto extreme = [&](const char* metric, bool want_max) -> std::optional<double> {
      const store::TelemetrySeries* series = find(e, metric);
      if (!series) return std::nullopt;
      auto [lo, hi] = std::minmax_element(series->values.begin(), series->values.end());
      return want_max ? *hi : *lo;
    };
    // The energy counter where the GPU has one (exact), else power integrated over time.
    std::optional<double> energy;
    if (const store::TelemetrySeries* counter = find(e, "energy_j");
        counter && counter->values.size() > 1) {
      energy = counter->values.back() - counter->values.front();
    } else if (const store::TelemetrySeries* power = find(e, names::kPowerW)) {
      energy = integrate(*power).integral;
    }
    std::optional<double> throttled = throttled_seconds(e);
    t.rows.push_back({b.entry_label(e.entry, with_run), static_cast<double>(samples), span,
                      optional_value(mean(names::kPowerW)),
                      optional_value(extreme(names::kPowerW, true)), optional_value(energy),
                      optional_value(mean(names::kSmClockHz)),
                      optional_value(extreme(names::kSmClockHz, false)),
                      optional_value(extreme(names::kTemperatureC, true)),
                      optional_value(mean(names::kSmActivity)),
                      optional_value(mean(names::kTensorActivity)), optional_value(throttled)});
    if (throttled && *throttled > 0 && !has_throttle_measurements(*e.entry.run)) {
      b.add_finding({.id = "throttled_while_recorded",
                     .severity = Severity::warning,
                     .title = fmt::format("throttled for {} of {} recorded",
                                          format_value(*throttled, Unit::seconds),
                                          format_value(span, Unit::seconds)),
                     .evidence = {{"throttled", *throttled, "s"}, {"recorded", span, "s"}},
                     .fix = "look for power or thermal limits in the shaded spans.",
                     .subjects = {b.subject(e.entry)},
                     .gpu = e.entry.gpu_number});
    }
  }
  s.blocks.push_back(std::move(t));
  b.add_section(std::move(s));
}

}  // namespace gpuscope::report::detail
