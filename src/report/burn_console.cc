#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "gpuscope/burn_report.h"
#include "gpuscope/exit_codes.h"
#include "report/table.h"

namespace gpuscope {
namespace {

using burn::Outcome;
using burn::PrecisionRow;
using burn::RowStatus;
using burn::TargetResult;
using report::format_bytes;

// Columns padded to their widest cell, counted in characters (UTF-8 code points: "°C" is two
// wide, not three bytes), two spaces apart, no trailing blanks. The last cell of a row shorter
// than the header runs on across the columns it does not fill ("fp8  skipped: ...").
class Table {
 public:
  explicit Table(std::vector<std::string> header) { rows_.push_back(std::move(header)); }
  void add_row(std::vector<std::string> cells) { rows_.push_back(std::move(cells)); }
  void print(std::ostream& out, int indent) const {
    std::vector<std::size_t> widths(rows_.front().size(), 0);
    for (const auto& row : rows_) {
      const std::size_t measured = row.size() < widths.size() ? row.size() - 1 : row.size();
      for (std::size_t i = 0; i < measured && i < widths.size(); ++i) {
        widths[i] = std::max(widths[i], report::display_width(row[i]));
      }
    }
    for (const auto& row : rows_) {
      std::string line(static_cast<std::size_t>(indent), ' ');
      for (std::size_t i = 0; i < row.size(); ++i) {
        line += row[i];
        if (i + 1 < row.size())
          line += std::string(widths[i] - report::display_width(row[i]) + 2, ' ');
      }
      line.erase(line.find_last_not_of(' ') + 1);
      out << line << '\n';
    }
  }

 private:
  std::vector<std::vector<std::string>> rows_;
};

std::string na() {
  return "n/a";
}

std::string short_reason(const std::string& reason) {
  static const std::map<std::string, std::string> kShort = {
      {"sw_power_cap", "power cap"},
      {"hw_slowdown", "hw slowdown"},
      {"sw_thermal_slowdown", "sw thermal"},
      {"hw_thermal_slowdown", "hw thermal"},
      {"hw_power_brake_slowdown", "power brake"}};
  const auto it = kShort.find(reason);
  return it == kShort.end() ? reason : it->second;
}

// "-" when no reason held the clocks down for a measurable time; "power cap 1.2" otherwise
// ("~" marks a time estimated from the 1 s samples).
std::string throttled(const PrecisionRow& row) {
  if (row.throttle.empty()) return na();
  std::vector<std::string> parts;
  for (const burn::ThrottleTime& t : row.throttle) {
    if (t.seconds < 0.05) continue;
    parts.push_back(
        fmt::format("{} {}{:.1f}", short_reason(t.reason), t.estimated ? "~" : "", t.seconds));
  }
  return parts.empty() ? "-" : fmt::format("{}", fmt::join(parts, ", "));
}

std::string outcome_word(Outcome outcome) {
  switch (outcome) {
    case Outcome::passed:
      return "passed";
    case Outcome::verification_failed:
      return "FAILED: wrong results";
    case Outcome::failed:
      return "FAILED";
    case Outcome::interrupted:
      return "interrupted";
  }
  return "";
}

std::string row_note(const PrecisionRow& row) {
  switch (row.status) {
    case RowStatus::skipped:
      return "skipped: " + row.note;
    case RowStatus::failed:
      return "failed: " + row.note;
    case RowStatus::not_run:
      return "not run: " + row.note;
    case RowStatus::measured:
      break;
  }
  std::string note;
  if (row.errors.total() > 0) note = "WRONG RESULTS";
  if (row.partial) note += note.empty() ? "partial" : ", partial";
  return note;
}

void print_gemm_table(const TargetResult& t, std::ostream& out) {
  const bool gpm = std::any_of(t.gemm.begin(), t.gemm.end(), [](const PrecisionRow& r) {
    return r.sm_activity || r.tensor_activity;
  });
  const bool integer = std::any_of(t.gemm.begin(), t.gemm.end(), [](const PrecisionRow& r) {
    return rate_unit(r.precision) == "OP/s" && r.flop_per_second_median;
  });
  // int8 counts integer operations: its rates are TOP/s and TOP/J, said in the header when it
  // ran.
  std::vector<std::string> header = {"precision", integer ? "TFLOP/s (int8: TOP/s)" : "TFLOP/s",
                                     "% of peak", "errors",
                                     "max °C",    "throttled (s)",
                                     "avg W",     integer ? "TFLOP/J (int8: TOP/J)" : "TFLOP/J"};
  if (gpm) header.emplace_back("SM / tensor active");
  header.emplace_back("");
  Table table(header);
  for (const PrecisionRow& r : t.gemm) {
    std::vector<std::string> cells;
    const bool measured = r.flop_per_second_median.has_value();
    cells.emplace_back(precision_name(r.precision));
    if (!measured) {  // skipped, not run, or failed before a window: the reason says it all
      cells.push_back(row_note(r));
      table.add_row(std::move(cells));
      continue;
    }
    cells.push_back(fmt::format("{:.1f}", *r.flop_per_second_median * 1e-12));
    cells.push_back(r.fraction_of_peak ? fmt::format("{:.1f}%", *r.fraction_of_peak * 100) : na());
    cells.push_back(std::to_string(r.errors.total()));
    cells.push_back(r.temperature_max_c ? fmt::format("{:.0f}", *r.temperature_max_c) : na());
    cells.push_back(throttled(r));
    cells.push_back(r.power_average_w ? fmt::format("{:.0f}", *r.power_average_w) : na());
    cells.push_back(r.flop_per_joule ? fmt::format("{:.3f}", *r.flop_per_joule * 1e-12) : na());
    if (gpm) {
      auto percent = [](const std::optional<double>& v) {
        return v ? fmt::format("{:.0f}%", *v * 100) : na();
      };
      cells.push_back(percent(r.sm_activity) + " / " + percent(r.tensor_activity));
    }
    cells.push_back(row_note(r));
    table.add_row(std::move(cells));
  }
  table.print(out, 2);
}

void print_memory_table(const TargetResult& t, std::ostream& out) {
  if (t.memory.empty()) return;
  out << "\n  Device memory bandwidth (bytes read + bytes written, both counted)\n";
  Table table({"kernel", "buffer", "GB/s", "% of peak"});
  for (const burn::MemoryRow& m : t.memory) {
    table.add_row({m.kernel, format_bytes(m.buffer_bytes),
                   fmt::format("{:.0f}", m.bytes_per_second * 1e-9),
                   m.fraction_of_peak ? fmt::format("{:.1f}%", *m.fraction_of_peak * 100) : na()});
  }
  table.print(out, 2);
}

// A few sizes of the sweep: powers of 16 from 4 KiB, and the largest.
std::vector<std::uint64_t> shown_sizes(const std::vector<burn::HostLinkRow>& rows) {
  std::vector<std::uint64_t> sizes;
  for (const burn::HostLinkRow& h : rows) sizes.push_back(h.size_bytes);
  std::sort(sizes.begin(), sizes.end());
  sizes.erase(std::unique(sizes.begin(), sizes.end()), sizes.end());
  if (sizes.size() <= 6) return sizes;
  std::vector<std::uint64_t> shown;
  for (std::uint64_t s : sizes) {
    const bool power_of_16_times_4k =
        s >= 4096 && (s & (s - 1)) == 0 && (__builtin_ctzll(s) - 12) % 4 == 0;
    if (power_of_16_times_4k || s == sizes.back()) shown.push_back(s);
  }
  return shown;
}

void print_host_link(const TargetResult& t, std::ostream& out) {
  if (t.host_link.empty() && t.overlap.empty()) return;
  if (!t.host_link.empty()) {
    out << "\n  Host link, GB/s (median; bidirectional counts both directions)\n";
    const std::vector<std::uint64_t> sizes = shown_sizes(t.host_link);
    std::vector<std::string> header = {"memory", "direction"};
    for (std::uint64_t s : sizes) header.push_back(format_bytes(s));
    Table table(header);
    std::vector<std::pair<std::string, std::string>> keys;
    for (const burn::HostLinkRow& h : t.host_link) {
      const std::pair key{h.memory, h.direction};
      if (std::find(keys.begin(), keys.end(), key) == keys.end()) keys.push_back(key);
    }
    for (const auto& key : keys) {
      std::vector<std::string> cells = {key.first, key.second};
      for (std::uint64_t size : sizes) {
        // Not a structured binding: clang 14 (the fuzz preset's) cannot capture one.
        const auto it = std::find_if(t.host_link.begin(), t.host_link.end(), [&](const auto& h) {
          return h.memory == key.first && h.direction == key.second && h.size_bytes == size;
        });
        cells.push_back(
            it == t.host_link.end() ? "-" : fmt::format("{:.1f}", it->bytes_per_second * 1e-9));
      }
      table.add_row(std::move(cells));
    }
    table.print(out, 2);
  }
  if (!t.overlap.empty()) {
    std::vector<std::string> parts;
    for (const burn::OverlapRow& o : t.overlap) {
      parts.push_back(fmt::format("{} {:.2f}", o.memory, o.efficiency));
    }
    out << fmt::format(
        "  Copy/compute overlap efficiency ({} copies; 1 = copy hidden behind compute, 0 = "
        "serialized, below 0 = slower than serialized): {}\n",
        format_bytes(t.overlap.front().copy_bytes), fmt::join(parts, ", "));
  }
}

void print_target(const TargetResult& t, std::ostream& out) {
  const burn::Target& target = t.target;
  out << fmt::format("{}  {}  {}  [{}]\n", target.label(), target.name, target.uuid(),
                     outcome_word(t.outcome));
  std::vector<std::string> facts;
  if (t.device) {
    facts.push_back(fmt::format("compute capability {}, {} SMs, {}", t.device->compute_capability,
                                t.device->sm_count, format_bytes(t.device->total_memory_bytes)));
  }
  if (target.peak) {
    facts.push_back(fmt::format("peak: {}{}", target.peak->model,
                                target.peak_note.empty() ? "" : " (" + target.peak_note + ")"));
  } else if (!target.peak_note.empty()) {
    facts.push_back(target.peak_note);
  }
  if (!facts.empty()) out << fmt::format("  {}\n", fmt::join(facts, "; "));
  if (t.outcome == Outcome::failed || t.outcome == Outcome::verification_failed) {
    out << fmt::format("  ERROR: {}\n", t.failure);
  }
  print_gemm_table(t, out);
  print_memory_table(t, out);
  print_host_link(t, out);
  for (const burn::SkippedTest& s : t.skipped) {
    out << fmt::format("  skipped {}: {}\n", s.what, s.reason);
  }
  for (const std::string& w : t.warnings) out << fmt::format("  note: {}\n", w);
}

std::string target_name(const TargetResult& t) {
  const burn::Target& target = t.target;
  return fmt::format("{} ({}, {})", target.label(), target.name, target.uuid());
}

}  // namespace

// The links between the GPUs: all-reduce bus bandwidth by size, peer copies by pair.
void print_interconnect(const burn::InterconnectReport& ic, std::ostream& out) {
  std::string names;
  for (const std::string& g : ic.gpus) names += (names.empty() ? "" : ", ") + g;
  out << fmt::format("Interconnect: {} GPUs together ({})\n", ic.gpus.size(), names);
  for (const auto& l : ic.links) {
    out << fmt::format("  {} <-> {}: {}\n", ic.gpus.at(l.first), ic.gpus.at(l.second),
                       l.link.nvlinks > 0
                           ? fmt::format("{} ({} NVLinks{}{})", l.link.label(), l.link.nvlinks,
                                         l.link.through_switch ? " through NVSwitch" : "",
                                         l.link.pcie_path ? ", PCIe " + *l.link.pcie_path : "")
                           : l.link.label());
  }
  if (!ic.all_reduce.empty()) {
    out << fmt::format("  {:>10}  {:>14}  {:>14}\n", "all-reduce", "bus GB/s", "algorithm GB/s");
    for (const auto& r : ic.all_reduce) {
      out << fmt::format("  {:>6.0f} MiB  {:>14.1f}  {:>14.1f}\n",
                         static_cast<double>(r.bytes) / (1 << 20), r.bus_bandwidth * 1e-9,
                         r.algorithm_bandwidth * 1e-9);
    }
  }
  for (const auto& c : ic.peer_copies) {
    out << fmt::format("  copy {} -> {}: {:.1f} GB/s ({})\n", ic.gpu_name(c.source),
                       ic.gpu_name(c.destination), c.bandwidth * 1e-9,
                       c.peer_access ? "peer to peer" : "staged by the driver");
  }
  for (const std::string& p : ic.problems) out << "  problem: " << p << '\n';
}

void print_burn(const burn::Report& report, std::ostream& out) {
  for (std::size_t i = 0; i < report.targets.size(); ++i) {
    if (i > 0) out << '\n';
    print_target(report.targets[i], out);
  }
  out << '\n';
  if (report.interconnect) {
    print_interconnect(*report.interconnect, out);
    out << '\n';
  }
  const int code = burn::exit_code(report);
  switch (code) {
    case kExitOk:
      out << fmt::format("Result: passed ({} device{}, {:.0f} s)\n", report.targets.size(),
                         report.targets.size() == 1 ? "" : "s", report.wall_seconds);
      break;
    case kExitInterrupted:
      out << "Result: interrupted; the numbers above are what was measured before the stop\n";
      break;
    default:
      out << "Result: FAILED\n";
      break;
  }
  for (const TargetResult& t : report.targets) {
    if (t.outcome == Outcome::failed || t.outcome == Outcome::verification_failed) {
      out << fmt::format("  {}: {}\n", target_name(t), t.failure);
    }
  }
}

}  // namespace gpuscope
