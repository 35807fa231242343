// bench for people: the rows as a table (skipped rows with their reasons), the guard's
// verdicts, then the answers per model and task.
#include <fmt/format.h>

#include <cmath>
#include <ostream>

#include "gpuscope/bench.h"
#include "gpuscope/bench_scaling.h"
#include "report/table.h"

namespace gpuscope::bench {
namespace {

using report::format_bytes;
using report::format_number;
using report::TextTable;

std::string or_dash(const std::optional<double>& v, auto&& format) {
  return v ? format(*v) : std::string("-");
}

std::string bytes(double b) {
  return format_bytes(static_cast<std::uint64_t>(std::max(0.0, b)));
}
std::string percent(double f) {
  return format_number(f * 100, 0) + "%";
}

std::string guard_cell(const Row& r) {
  if (!r.guard) return "";
  return std::string(verdict_name(r.guard->verdict));
}

std::string choice_text(const std::optional<Choice>& c, const std::string& what) {
  if (!c) return "-";
  std::string s = c->mode;
  if (!c->variant.empty()) s += " [" + c->variant + "]";
  s += " (" + what + ")";
  for (std::size_t i = 0; i < c->tied_with.size(); ++i) {
    s += (i == 0 ? ", a tie with " : ", ") + c->tied_with[i];
  }
  if (!c->tied_with.empty()) s += " (within the measured spread)";
  return s;
}

}  // namespace

void print_rows(const std::vector<RowSpec>& rows, std::ostream& out) {
  TextTable t({"#", "model", "task", "mode", "variant", "gpuscope-torch arguments"});
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const RowSpec& r = rows[i];
    std::string args;
    for (const auto& a : r.torch_args()) args += (args.empty() ? "" : " ") + a;
    t.add_row({std::to_string(i + 1), r.model, r.task, r.mode, r.variant(), args});
  }
  t.print(out);
  out << rows.size() << " rows\n";
}

void print_bench(const BenchResult& result, std::ostream& out) {
  out << fmt::format("gpuscope bench: {} of {} rows{}{}{}\n", result.rows.size(), result.planned,
                     result.gpu_name ? " on " + *result.gpu_name : "",
                     result.resumed_rows > 0
                         ? fmt::format(" ({} kept from an earlier attempt)", result.resumed_rows)
                         : "",
                     result.interrupted ? " (interrupted)" : "");
  TextTable t({"model", "task", "mode", "variant", "batch", "samples/s", "spread", "peak alloc",
               "power", "J/sample", "SM", "tensor", "throttled", "guard"});
  bool short_windows = false;
  for (const Row& r : result.rows) {
    if (r.skipped) {
      t.add_row({r.spec.model, r.spec.task, r.spec.mode, r.spec.variant(), "",
                 "skipped: " + r.skip_code, "", "", "", "", "", "", "", ""});
      continue;
    }
    short_windows = short_windows || r.short_windows;
    t.add_row(
        {r.spec.model, r.spec.task, r.spec.mode, r.spec.variant(),
         r.batch ? std::to_string(*r.batch) : "-",
         or_dash(r.samples_per_second, [](double v) { return format_number(v, 1); }),
         or_dash(r.step_relative_spread, percent), or_dash(r.peak_allocated_bytes, bytes),
         or_dash(r.power_avg_w, [](double v) { return format_number(v, 0) + " W"; }),
         or_dash(r.energy_per_sample_j,
                 [&](double v) { return format_number(v, 4) + (r.short_windows ? "*" : ""); }),
         or_dash(r.sm_activity, percent), or_dash(r.tensor_activity, percent),
         or_dash(r.throttle_s, [](double v) { return format_number(v, 1) + " s"; }),
         guard_cell(r)});
  }
  t.print(out);
  if (short_windows) {
    out << fmt::format("* timed windows shorter than {:.0f} s: energy per sample is coarse\n",
                       kMinEnergyWindowS);
  }
  print_scaling_table(scaling_table(result.rows), out);
  bool any_skipped = false;
  for (const Row& r : result.rows) {
    if (!r.skipped) continue;
    if (!any_skipped) out << "\nSkipped:\n";
    any_skipped = true;
    out << "  " << r.spec.label() << ": " << r.skip_reason << '\n';
  }
  if (!result.guards.empty()) {
    out << "\nConvergence guard (each mode's loss against fp32's, same seed):\n";
    for (const GuardRun& g : result.guards) {
      out << fmt::format("  {} {}: {} - {}\n", g.model, g.mode, verdict_name(g.result.verdict),
                         g.result.reason);
    }
  }
  if (!result.answers.empty()) out << "\nAnswers:\n";
  for (const Answer& a : result.answers) {
    out << fmt::format("  {} {}\n", a.model, a.task);
    out << "    fastest:          "
        << choice_text(
               a.fastest,
               a.fastest ? format_number(a.fastest->samples_per_second, 1) + " samples/s" : "")
        << '\n';
    out << "    most efficient:   "
        << choice_text(a.most_efficient,
                       a.most_efficient && a.most_efficient->joules_per_sample
                           ? format_number(*a.most_efficient->joules_per_sample, 4) + " J/sample"
                           : "")
        << '\n';
    out << "    smallest memory:  "
        << choice_text(a.smallest_memory,
                       a.smallest_memory && a.smallest_memory->peak_allocated_bytes
                           ? bytes(*a.smallest_memory->peak_allocated_bytes)
                           : "")
        << '\n';
    for (const KnobEffect& e : a.knob_effects) {
      std::string memory = "-";
      if (e.memory_change_bytes) {
        memory =
            (*e.memory_change_bytes < 0 ? "-" : "+") + bytes(std::fabs(*e.memory_change_bytes));
      }
      out << fmt::format("    {} {} -> {} ({}): x{:.2f} speed, memory {}\n", e.knob, e.from, e.to,
                         e.mode, e.speedup, memory);
    }
  }
  for (const std::string& w : result.warnings) out << "warning: " << w << '\n';
}

}  // namespace gpuscope::bench
