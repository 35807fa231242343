// Answers from measured rows: per model and task the fastest mode, the most energy-efficient,
// the smallest in memory, and what each knob (batch, switches, input path) bought against the
// row that differs only in it.
#include <algorithm>
#include <charconv>
#include <map>

#include "gpuscope/analysis.h"
#include "gpuscope/bench.h"

namespace gpuscope::bench {
namespace {

// A row without gradient sync (the scaling table's ceiling) trains nothing: it answers no
// question of speed, energy or memory.
bool measured(const Row& r) {
  return !r.skipped && r.samples_per_second.has_value() && r.spec.grad_sync;
}
bool trusted(const Row& r) {
  return measured(r) && !(r.guard && verdict_is_bad(r.guard->verdict));
}

Choice choice(const Row& r) {
  return {r.spec.mode,           r.spec.variant(),       *r.samples_per_second,
          r.energy_per_sample_j, r.peak_allocated_bytes, {}};
}

// "mode" or "mode [variant]": how a tie names the other row.
std::string choice_name(const Row& r) {
  const std::string variant = r.spec.variant();
  return variant.empty() ? r.spec.mode : r.spec.mode + " [" + variant + "]";
}

// The modes the winner does not beat by more than the measured spread (analysis::best_of).
template <typename Reading>
std::vector<std::string> ties(const std::vector<Row>& rows, const Answer& a, const Choice& winner,
                              bool higher_is_better, Reading value) {
  std::vector<analysis::Candidate> candidates;
  const Row* winner_row = nullptr;
  for (const Row& r : rows) {
    if (r.spec.model != a.model || r.spec.task != a.task || !trusted(r) || !value(r)) continue;
    candidates.push_back({choice_name(r), *value(r), r.step_relative_spread});
    if (!winner_row && r.spec.mode == winner.mode && r.spec.variant() == winner.variant) {
      winner_row = &r;
    }
  }
  auto best = analysis::best_of(candidates, higher_is_better);
  if (!best || !winner_row || best->name != choice_name(*winner_row)) return {};
  return best->tied_with;
}

// Everything a row was set to besides model, task and mode; unset = "default".
std::map<std::string, std::string> settings(const RowSpec& s) {
  std::map<std::string, std::string> m;
  m["batch"] = s.batch.empty() ? "default" : s.batch;
  for (const std::string& k : knob_names()) m[k] = "default";
  for (const auto& [k, v] : s.knobs) m[k] = v;
  m["input"] = s.input.kind;
  m["loader_workers"] = s.input.workers ? std::to_string(*s.input.workers) : "default";
  m["pinned"] = s.input.pinned ? (*s.input.pinned ? "on" : "off") : "default";
  m["non_blocking"] = s.input.non_blocking ? (*s.input.non_blocking ? "on" : "off") : "default";
  m["data"] = s.input.data_dir;
  std::string extra;
  for (const auto& a : s.extra_args) extra += a + " ";
  m["extra"] = extra;
  return m;
}

// Which value of a pair is the baseline: default, off, auto, on; numbers by size; else by name.
int rank(const std::string& v) {
  if (v == "default") return 0;
  if (v == "off") return 1;
  if (v == "auto") return 2;
  if (v == "on") return 3;
  return 4;
}
bool before(const std::string& a, const std::string& b) {
  if (rank(a) != rank(b)) return rank(a) < rank(b);
  double x = 0, y = 0;
  auto [pa, ea] = std::from_chars(a.data(), a.data() + a.size(), x);
  auto [pb, eb] = std::from_chars(b.data(), b.data() + b.size(), y);
  if (ea == std::errc() && eb == std::errc() && pa == a.data() + a.size() &&
      pb == b.data() + b.size()) {
    return x < y;
  }
  return a < b;
}

// The one setting in which two rows differ; empty when none or several do.
std::string only_difference(const std::map<std::string, std::string>& a,
                            const std::map<std::string, std::string>& b) {
  std::string diff;
  for (const auto& [k, v] : a) {
    if (b.at(k) == v) continue;
    if (!diff.empty()) return "";
    diff = k;
  }
  return diff;
}

}  // namespace

std::vector<Answer> compute_answers(const std::vector<Row>& rows) {
  std::vector<Answer> answers;
  for (const Row& r : rows) {
    auto it = std::find_if(answers.begin(), answers.end(), [&](const Answer& a) {
      return a.model == r.spec.model && a.task == r.spec.task;
    });
    if (it == answers.end()) {
      answers.push_back({r.spec.model, r.spec.task, {}, {}, {}, {}});
      it = answers.end() - 1;
    }
    Answer& a = *it;
    if (trusted(r)) {
      if (!a.fastest || *r.samples_per_second > a.fastest->samples_per_second) {
        a.fastest = choice(r);
      }
      if (r.energy_per_sample_j &&
          (!a.most_efficient || *r.energy_per_sample_j < *a.most_efficient->joules_per_sample)) {
        a.most_efficient = choice(r);
      }
    }
    // The footprint is a fact about memory whether or not the mode learns: every measured row.
    if (measured(r) && r.peak_allocated_bytes &&
        (!a.smallest_memory ||
         *r.peak_allocated_bytes < *a.smallest_memory->peak_allocated_bytes)) {
      a.smallest_memory = choice(r);
    }
  }
  // On a tie, the mode whose training is trusted: pure fp16 and bf16 take the same memory, and
  // the H100 study named fp16, whose loss went NaN, for every model's training.
  for (Answer& a : answers) {
    if (!a.smallest_memory) continue;
    for (const Row& r : rows) {
      if (r.spec.model == a.model && r.spec.task == a.task && trusted(r) &&
          r.peak_allocated_bytes == a.smallest_memory->peak_allocated_bytes) {
        a.smallest_memory = choice(r);
        break;
      }
    }
  }
  // "Most efficient" compares every trusted mode or none: a mode whose energy was not measured
  // (timed windows shorter than the energy counter's 1 s reads) might be the most efficient one.
  // On the H100 a short GPT-2 row set once named tf32 "most efficient" beside an unmeasured bf16
  // row that was twice as fast.
  for (Answer& a : answers) {
    for (const Row& r : rows) {
      if (r.spec.model == a.model && r.spec.task == a.task && trusted(r) &&
          !r.energy_per_sample_j) {
        a.most_efficient.reset();
      }
    }
  }
  for (Answer& a : answers) {
    if (a.fastest) {
      a.fastest->tied_with =
          ties(rows, a, *a.fastest, true, [](const Row& r) { return r.samples_per_second; });
    }
    if (a.most_efficient) {
      a.most_efficient->tied_with = ties(rows, a, *a.most_efficient, false,
                                         [](const Row& r) { return r.energy_per_sample_j; });
    }
  }
  for (Answer& a : answers) {
    std::vector<const Row*> group;
    for (const Row& r : rows) {
      if (r.spec.model == a.model && r.spec.task == a.task && measured(r)) group.push_back(&r);
    }
    for (const Row* base : group) {
      const auto base_settings = settings(base->spec);
      for (const Row* row : group) {
        if (row == base || row->spec.mode != base->spec.mode) continue;
        const auto row_settings = settings(row->spec);
        const std::string knob = only_difference(base_settings, row_settings);
        if (knob.empty() || !before(base_settings.at(knob), row_settings.at(knob))) continue;
        KnobEffect e;
        e.knob = knob;
        e.from = base_settings.at(knob);
        e.to = row_settings.at(knob);
        e.mode = row->spec.mode;
        e.variant = row->spec.variant();
        e.speedup = *row->samples_per_second / *base->samples_per_second;
        if (row->peak_allocated_bytes && base->peak_allocated_bytes) {
          e.memory_change_bytes = *row->peak_allocated_bytes - *base->peak_allocated_bytes;
        }
        a.knob_effects.push_back(std::move(e));
      }
    }
  }
  return answers;
}

}  // namespace gpuscope::bench
