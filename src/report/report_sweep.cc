// The power-limit sweep section: throughput and energy per sample against the power limit, with
// the 80/90/95 % knees — the lowest limit that keeps that share of the best speed. A sweep of
// the SM clock lock (`sweep --knob clocks`, tagged sm_clock_lock_mhz) gets its own section of the
// same charts against the lock.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "gpuscope/analysis.h"
#include "report/report_model.h"

namespace gpuscope::report::detail {
namespace {

using analysis::find_knee;
using analysis::Knee;
using analysis::SweepPoint;

constexpr double kKneeFractions[] = {0.8, 0.9, 0.95};

// What a sweep turned: its store tag, how the report's unit reads it, and its words.
struct Knob {
  const char* tag;         // "power_limit_w"
  double to_unit;          // tag value -> `unit`'s base (MHz -> Hz)
  Unit unit;               // watts
  const char* noun;        // "power limit"
  const char* short_noun;  // "limit"
  const char* key;         // section and block keys' stem
  const char* title;       // the section's
  const char* question;    // its intro
  const char* saved;       // the table's column of 1 - knee / max
};

constexpr Knob kPowerLimit{"power_limit_w",
                           1,
                           Unit::watts,
                           "power limit",
                           "limit",
                           "sweep",
                           "Power limit (sweep)",
                           "What power limit keeps most of the speed for far less energy and heat?",
                           "power saved at 90 %"};
constexpr Knob kClockLock{"sm_clock_lock_mhz",
                          1e6,
                          Unit::hertz,
                          "SM clock lock",
                          "lock",
                          "sweep_clocks",
                          "SM clock lock (sweep)",
                          "What SM clock keeps most of the speed for far less energy and heat?",
                          "clock lowered at 90 %"};

struct SweepCurve {
  Entry entry;
  std::string model, task, mode;
  Unit unit = Unit::per_second;
  std::map<double, double> throughput;         // by power limit, W
  std::map<double, double> energy_per_sample;  // by power limit, W
  std::vector<Knee> knees;
};

std::vector<SweepCurve> collect_curves(const ReportBuilder& b, const Knob& knob) {
  namespace names = store::names;
  std::vector<SweepCurve> curves;
  for (const store::RunData& run : b.runs()) {
    if (!holds(run, DataKind::sweep)) continue;
    for (const store::Measurement& m : run.measurements) {
      auto limit = tag_number(m, knob.tag);
      if (!limit || !m.value) continue;
      *limit *= knob.to_unit;
      bool rate = m.name == names::kSamplesPerS || m.name == names::kGemmFlopPerS;
      bool energy = m.name == names::kEnergyPerSample;
      if (!rate && !energy) continue;
      int gpu = m.gpu.value_or(0);
      std::string model = tag_text(m, "model"), task = tag_text(m, "task"),
                  mode = tag_text(m, "mode");
      if (mode.empty()) mode = tag_text(m, "precision");
      auto it = std::find_if(curves.begin(), curves.end(), [&](const SweepCurve& c) {
        return c.entry.run == &run && c.entry.gpu_number == gpu && c.model == model &&
               c.task == task && c.mode == mode;
      });
      if (it == curves.end()) {
        SweepCurve curve;
        curve.entry = {&run, ReportBuilder::find_gpu(run, gpu), gpu};
        curve.model = model;
        curve.task = task;
        curve.mode = mode;
        curves.push_back(std::move(curve));
        it = curves.end() - 1;
      }
      if (rate) {
        it->throughput[*limit] = *m.value;
        if (m.name == names::kGemmFlopPerS) it->unit = Unit::flop_per_second;
      } else {
        it->energy_per_sample[*limit] = *m.value;
      }
    }
  }
  for (SweepCurve& c : curves) {
    std::vector<SweepPoint> points;
    for (const auto& [limit, rate] : c.throughput) points.push_back({limit, rate});
    for (double fraction : kKneeFractions) {
      if (auto knee = find_knee(points, fraction)) c.knees.push_back(*knee);
    }
  }
  return curves;
}

std::optional<double> knee_at(const SweepCurve& c, double fraction) {
  for (const Knee& k : c.knees) {
    if (k.fraction == fraction) return k.power_limit_w;
  }
  return std::nullopt;
}

std::pair<double, double> best_point(const SweepCurve& c) {
  std::pair<double, double> best{0, 0};  // limit, throughput
  for (const auto& [limit, rate] : c.throughput) {
    if (rate > best.second) best = {limit, rate};
  }
  return best;
}

// Linear interpolation of a curve's value at x (clamped to its ends).
double value_at(const std::map<double, double>& curve, double x) {
  auto hi = curve.lower_bound(x);
  if (hi == curve.end()) return std::prev(hi)->second;
  if (hi == curve.begin() || hi->first == x) return hi->second;
  auto lo = std::prev(hi);
  return lo->second + (x - lo->first) / (hi->first - lo->first) * (hi->second - lo->second);
}

void add_knob_section(ReportBuilder& b, const Knob& knob) {
  std::vector<SweepCurve> curves = collect_curves(b, knob);
  curves.erase(std::remove_if(curves.begin(), curves.end(),
                              [](const SweepCurve& c) { return c.throughput.empty(); }),
               curves.end());
  if (curves.empty()) return;
  std::set<std::pair<const store::RunData*, int>> entries;
  std::set<std::string> models, tasks;
  for (const SweepCurve& c : curves) {
    entries.insert({c.entry.run, c.entry.gpu_number});
    models.insert(c.model);
    tasks.insert(c.task);
  }
  std::set<const store::RunData*> runs;
  for (const auto& e : entries) runs.insert(e.first);
  auto name_of = [&](const SweepCurve& c) {
    std::string name = c.mode;
    if (tasks.size() > 1) name += " " + c.task;
    if (models.size() > 1) name = c.model + " " + name;
    if (entries.size() > 1) name = b.entry_label(c.entry, runs.size() > 1) + " " + name;
    return name;
  };

  Chart relative;
  relative.key = fmt::format("{}_throughput", knob.key);
  relative.title = fmt::format("Throughput vs {}", knob.noun);
  relative.caption = fmt::format(
      "Each curve relative to its own best; ◆ the lowest {} that keeps "
      "90 % of it (80 % and 95 % in the table and on hover).",
      knob.noun);
  relative.kind = ChartKind::lines;
  relative.x_title = knob.noun;
  relative.x_unit = knob.unit;
  relative.y_title = "share of the best throughput";
  relative.y_unit = Unit::ratio;
  relative.y_from_zero = false;
  Chart energy = relative;
  energy.key = fmt::format("{}_energy", knob.key);
  energy.title = fmt::format("Energy per sample vs {}", knob.noun);
  energy.caption =
      "Lower is better: below the knee a sample costs less energy, above it the "
      "extra watts buy little speed.";
  energy.y_title = "energy per sample";
  energy.y_unit = Unit::joules;
  energy.y_from_zero = true;
  energy.markers.clear();

  Table t;
  t.key = fmt::format("{}_knees", knob.key);
  t.title = fmt::format("Knees of the {} curves", knob.noun);
  t.caption = fmt::format(
      "The lowest {0} that keeps 80, 90 and 95 % of the best throughput, "
      "interpolated between the {1}s measured; ≤ when already reached at the lowest "
      "{1} measured.",
      knob.noun, knob.short_noun);
  const bool watts = knob.unit == Unit::watts;  // the power-limit table keeps its column keys
  if (entries.size() > 1) t.columns.push_back({"gpu", "GPU", Unit::none});
  t.columns.insert(
      t.columns.end(),
      {{"model", "model", Unit::none},
       {"task", "task", Unit::none},
       {"mode", "mode", Unit::none},
       {"best_throughput", "best", curves.front().unit},
       {watts ? "best_at_w" : "best_at_hz", fmt::format("at {}", knob.short_noun), knob.unit},
       {watts ? "knee80_w" : "knee80_hz", "80 % at", knob.unit},
       {watts ? "knee90_w" : "knee90_hz", "90 % at", knob.unit},
       {watts ? "knee95_w" : "knee95_hz", "95 % at", knob.unit},
       {watts ? "power_saved_at_90" : "clock_lowered_at_90", knob.saved, Unit::ratio},
       {"energy_per_sample_at_90_j", "energy/sample at 90 %", Unit::joules}});

  for (const SweepCurve& c : curves) {
    auto [best_limit, best] = best_point(c);
    Series s;
    s.name = name_of(c);
    s.markers = true;
    for (const auto& [limit, rate] : c.throughput) {
      s.x.push_back(limit);
      s.y.push_back(best > 0 ? rate / best : NAN);
    }
    relative.series.push_back(s);
    for (const Knee& k : c.knees) {
      std::string label =
          fmt::format("{:.0f} % at {}{}", k.fraction * 100, k.at_lowest_limit ? "≤ " : "",
                      format_value(k.power_limit_w, knob.unit));
      relative.markers.push_back(
          {k.power_limit_w, k.fraction, fmt::format("{}: {}", s.name, label),
           k.fraction == 0.9 ? format_value(k.power_limit_w, knob.unit) : std::string()});
    }
    if (!c.energy_per_sample.empty()) {
      Series e;
      e.name = s.name;
      e.markers = true;
      for (const auto& [limit, joules] : c.energy_per_sample) {
        e.x.push_back(limit);
        e.y.push_back(joules);
      }
      energy.series.push_back(std::move(e));
    }
    std::vector<Value> cells;
    if (entries.size() > 1) cells.push_back(b.entry_label(c.entry, runs.size() > 1));
    cells.push_back(c.model);
    cells.push_back(c.task);
    cells.push_back(c.mode);
    cells.push_back(best);
    cells.push_back(best_limit);
    for (double fraction : kKneeFractions) {
      auto knee = knee_at(c, fraction);
      cells.push_back(knee ? Value(*knee) : Value(std::monostate{}));
    }
    double max_limit = c.throughput.rbegin()->first;
    auto knee90 = knee_at(c, 0.9);
    cells.push_back(knee90 ? Value(1 - *knee90 / max_limit) : Value(std::monostate{}));
    cells.push_back(knee90 && !c.energy_per_sample.empty()
                        ? Value(value_at(c.energy_per_sample, *knee90))
                        : Value(std::monostate{}));
    t.rows.push_back(std::move(cells));
  }

  // The answer: the 90 % knee, and how far apart the modes' knees are.
  std::vector<std::pair<double, const SweepCurve*>> knees90;
  for (const SweepCurve& c : curves) {
    if (auto k = knee_at(c, 0.9)) knees90.emplace_back(*k, &c);
  }
  if (!knees90.empty()) {
    auto [lo, hi] = std::minmax_element(knees90.begin(), knees90.end());
    const SweepCurve& first = *knees90.front().second;
    double max_limit = first.throughput.rbegin()->first;
    std::string detail = fmt::format(
        "{}: 90 % of its best speed at {} of {} ({} less {})", name_of(first),
        format_value(knees90.front().first, knob.unit), format_value(max_limit, knob.unit),
        format_value(1 - knees90.front().first / max_limit, Unit::ratio),
        watts ? "power" : "clock");
    if (knees90.size() > 1) {
      detail += fmt::format("; {} to {} over {} curves", format_value(lo->first, knob.unit),
                            format_value(hi->first, knob.unit), knees90.size());
    }
    b.add_headline({watts ? "Power limit for 90 % speed" : "SM clock lock for 90 % speed",
                    knees90.front().first, knob.unit, detail, Tone::good});
  }

  Section s;
  s.key = knob.key;
  s.title = knob.title;
  s.intro = knob.question;
  s.blocks.push_back(std::move(relative));
  if (!energy.series.empty()) s.blocks.push_back(std::move(energy));
  s.blocks.push_back(std::move(t));
  b.add_section(std::move(s));
}

}  // namespace

void add_sweep_section(ReportBuilder& b) {
  add_knob_section(b, kPowerLimit);
  add_knob_section(b, kClockLock);
}

}  // namespace gpuscope::report::detail
