// The diagnosis for people (console), as a report Document (HTML and the other reporters), and
// as a store run.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "gpuscope/diagnose.h"
#include "gpuscope/version.h"

namespace gpuscope::analysis {
namespace {

std::string number(double v) {
  const double a = std::fabs(v);
  if (v == std::floor(v) && a < 1e9) return fmt::format("{:.0f}", v);
  if (a >= 100) return fmt::format("{:.0f}", v);
  if (a >= 10) return fmt::format("{:.1f}", v);
  return fmt::format("{:.2f}", v);
}

std::string evidence_text(const Evidence& e) {
  return e.unit.empty() ? fmt::format("{} {}", e.what, number(e.value))
                        : fmt::format("{} {} {}", e.what, number(e.value), e.unit);
}

std::string gain_text(const Finding& f) {
  if (!f.expected_speedup) return "";
  const GainRange& g = *f.expected_speedup;
  if (std::fabs(g.high - g.low) < 0.005) return fmt::format("x{:.2f}", g.low);
  return fmt::format("x{:.2f} to x{:.2f}", g.low, g.high);
}

std::string subjects_list(const Finding& f) {
  std::string s;
  for (const std::string& x : f.subjects) s += (s.empty() ? "" : ", ") + x;
  return s;
}

std::string indent(const std::string& text, const std::string& pad) {
  std::string out = pad;
  for (char c : text) {
    out += c;
    if (c == '\n') out += pad;
  }
  return out;
}

report::Series named(std::string name) {
  report::Series s;
  s.name = std::move(name);
  return s;
}

report::Chart per_step_chart(const ProcessDiagnosis& p) {
  report::Chart c;
  c.key = "diagnose_steps_" + std::to_string(p.pid);
  c.title = "Where each step's time went";
  c.caption =
      "Per traced step: the GPU busy, the GPU idle while the program waited for data, the host "
      "blocked on the GPU, and the rest of the step (GPU idle for other reasons: launches, "
      "Python, tracing).";
  c.kind = report::ChartKind::bars;
  c.x_title = "step";
  c.y_title = "time";
  c.y_unit = report::Unit::seconds;
  report::Series busy = named("GPU busy"), wait = named("waiting for data"),
                 sync = named("host waits for the GPU"), other = named("other GPU idle");
  for (std::size_t i = 0; i < p.per_step.size(); ++i) {
    const StepBreakdown& s = p.per_step[i];
    const std::string name = std::to_string(i + 1);
    for (report::Series* x : {&busy, &wait, &sync, &other}) x->categories.push_back(name);
    busy.y.push_back(s.gpu_busy_s);
    wait.y.push_back(s.data_wait_s);
    sync.y.push_back(s.sync_s);
    other.y.push_back(std::max(0.0, s.wall_s - s.gpu_busy_s - s.data_wait_s));
  }
  c.series = {busy, wait, sync, other};
  return c;
}

report::Chart idle_chart(const ProcessDiagnosis& p) {
  report::Chart c;
  c.key = "diagnose_idle_" + std::to_string(p.pid);
  c.title = "GPU idle time by gap length";
  c.caption =
      "Idle time between GPU activities over the traced steps. Gaps under 100 us point at "
      "launches and host overhead; long gaps at data loading, synchronization or the host.";
  c.kind = report::ChartKind::bars;
  c.x_title = "gap between GPU activities";
  c.y_title = "idle time";
  c.y_unit = report::Unit::seconds;
  report::Series s = named("idle");
  for (const auto& [gap, seconds] : p.idle) {
    s.categories.push_back(gap);
    s.y.push_back(seconds);
  }
  c.series = {s};
  return c;
}

report::Chart timeline_chart(const ProcessDiagnosis& p) {
  report::Chart c;
  c.key = "diagnose_timeline_" + std::to_string(p.pid);
  c.title = "The first steps on one time axis";
  c.caption =
      "GPU busy (1) or idle (0); shaded: the program waiting for data or the host blocked on "
      "the GPU. Open trace.json in ui.perfetto.dev for every kernel.";
  c.kind = report::ChartKind::lines;
  c.x_title = "time from the first step's start";
  c.x_unit = report::Unit::seconds;
  c.y_title = "GPU busy";
  report::Series busy = named("GPU busy");
  double last = 0;
  for (const TimelineSlice::Interval& i : p.timeline.gpu_busy) {
    for (auto [x, y] :
         {std::pair{i.start_s, 0.0}, {i.start_s, 1.0}, {i.end_s, 1.0}, {i.end_s, 0.0}}) {
      busy.x.push_back(x);
      busy.y.push_back(y);
    }
    last = std::max(last, i.end_s);
  }
  c.series = {busy};
  c.points_measured = busy.x.size();
  constexpr std::size_t kMaxSpans = 200;
  for (const auto& i : p.timeline.data_wait) {
    if (c.spans.size() < kMaxSpans) c.spans.push_back({i.start_s, i.end_s, "waiting for data"});
  }
  for (const auto& i : p.timeline.sync) {
    if (c.spans.size() < kMaxSpans)
      c.spans.push_back({i.start_s, i.end_s, "host waits for the GPU"});
  }
  for (double s : p.timeline.step_starts_s) c.markers.push_back({s, 1.05, "step start", ""});
  return c;
}

}  // namespace

void print_diagnosis(const Diagnosis& d, std::ostream& out) {
  for (const ProcessDiagnosis& p : d.processes) {
    out << fmt::format("{}: {} step(s) traced ({}), step {:.2f} ms", p.subject, p.steps,
                       p.step_source, p.step_s * 1e3);
    if (p.traced_step_s > 1.02 * p.step_s)
      out << fmt::format(" ({:.2f} ms while traced)", p.traced_step_s * 1e3);
    out << fmt::format(", GPU busy {:.0f} %\n", p.gpu_busy_share * 100);
  }
  out << '\n';
  for (std::size_t i = 0; i < d.findings.size(); ++i) {
    const Finding& f = d.findings[i];
    if (i == 0) {
      out << fmt::format("{}: {}\n", is_major(f) ? "Top finding" : "Finding", f.title);
      if (f.expected_speedup) {
        out << fmt::format("  Expected speed-up if fixed: {}", gain_text(f));
        if (f.confidence) out << fmt::format(" (confidence {})", confidence_name(*f.confidence));
        out << '\n';
      }
      out << "  Evidence:\n";
      for (const Evidence& e : f.evidence) out << "    " << evidence_text(e) << '\n';
      out << "  Fix:\n" << indent(f.fix, "    ") << '\n';
      if (!f.subjects.empty()) out << "  Seen in: " << subjects_list(f) << '\n';
      if (d.findings.size() > 1) out << "\nAlso:\n";
      continue;
    }
    out << fmt::format("{}. [{}] {}", i + 1, severity_name(f.severity), f.title);
    if (f.expected_speedup) out << fmt::format(" (expected {})", gain_text(f));
    out << '\n';
    std::string ev;
    for (std::size_t k = 0; k < f.evidence.size() && k < 3; ++k)
      ev += (k ? "; " : "") + evidence_text(f.evidence[k]);
    if (!ev.empty()) out << "   " << ev << '\n';
    const std::string first_line = f.fix.substr(0, f.fix.find('\n'));
    out << "   Fix: " << first_line << (first_line.size() < f.fix.size() ? " (see --json)" : "")
        << '\n';
  }
  for (const std::string& n : d.notes) out << "Note: " << n << '\n';
}

report::Document diagnosis_document(const Diagnosis& d) {
  report::Document doc;
  doc.context.title = "gpuscope diagnose";
  doc.context.gpuscope_version = std::string(gpuscope::version());
  doc.context.sources = {d.dir.string()};
  if (!d.findings.empty()) {
    const Finding& top = d.findings.front();
    report::Headline h;
    h.label = is_major(top) ? "What holds this job back" : "Verdict";
    h.value = top.title;
    h.detail = gain_text(top).empty() ? "" : "expected speed-up " + gain_text(top);
    h.tone = is_major(top) ? report::Tone::warning : report::Tone::good;
    doc.summary.push_back(h);
  }
  for (const ProcessDiagnosis& p : d.processes) {
    doc.summary.push_back(
        {"Step time, " + p.subject, p.step_s, report::Unit::seconds, "", report::Tone::neutral});
    doc.summary.push_back({"GPU busy, " + p.subject, p.gpu_busy_share, report::Unit::ratio, "",
                           report::Tone::neutral});
  }
  for (const Finding& f : d.findings) {
    Finding shown = f;  // the report's findings are the same type
    if (f.expected_speedup) shown.title += " (expected speed-up " + gain_text(f) + ")";
    doc.findings.push_back(std::move(shown));
  }

  report::Section findings{"diagnose", "Findings, most gain first", "", {}};
  findings.intro =
      "What holds the job back, ranked by what fixing it should gain (docs/diagnose.md has each "
      "gain model). Apply one change at a time and check that training still converges.";
  report::Table t;
  t.key = "diagnose_findings";
  t.title = "Findings";
  t.columns = {{"id", "finding", report::Unit::none},
               {"severity", "severity", report::Unit::none},
               {"title", "what", report::Unit::none},
               {"speedup_low", "gain from", report::Unit::factor},
               {"speedup_high", "gain to", report::Unit::factor},
               {"confidence", "confidence", report::Unit::none},
               {"evidence", "evidence", report::Unit::none},
               {"fix", "fix", report::Unit::none}};
  for (const Finding& f : d.findings) {
    std::string ev;
    for (const Evidence& e : f.evidence) ev += (ev.empty() ? "" : "; ") + evidence_text(e);
    std::vector<report::Value> row = {f.id, std::string(severity_name(f.severity)), f.title};
    if (f.expected_speedup) {
      row.push_back(f.expected_speedup->low);
      row.push_back(f.expected_speedup->high);
    } else {
      row.push_back(std::monostate{});
      row.push_back(std::monostate{});
    }
    row.push_back(f.confidence ? std::string(confidence_name(*f.confidence)) : std::string("-"));
    row.push_back(ev);
    row.push_back(f.fix);
    t.rows.push_back(std::move(row));
  }
  findings.blocks.push_back(t);
  for (const std::string& n : d.notes) findings.blocks.push_back(report::Paragraph{"Note: " + n});
  doc.sections.push_back(std::move(findings));

  for (const ProcessDiagnosis& p : d.processes) {
    report::Section s{
        "diagnose_evidence_" + std::to_string(p.pid), "Evidence: " + p.subject, "", {}};
    s.intro = fmt::format("{} traced steps ({}), median {:.2f} ms untraced, GPU busy {:.0f} %.",
                          p.steps, p.step_source, p.step_s * 1e3, p.gpu_busy_share * 100);
    if (!p.per_step.empty()) s.blocks.push_back(per_step_chart(p));
    s.blocks.push_back(idle_chart(p));
    if (!p.timeline.gpu_busy.empty()) s.blocks.push_back(timeline_chart(p));
    doc.sections.push_back(std::move(s));
  }
  return doc;
}

}  // namespace gpuscope::analysis

namespace gpuscope::analysis {

store::RunData diagnosis_run_data(const Diagnosis& d, double started_unix_s, double ended_unix_s,
                                  const std::string& command_line) {
  store::RunData data;
  data.run.kind = "diagnose";
  data.run.started_unix_s = started_unix_s;
  data.run.ended_unix_s = ended_unix_s;
  data.run.command_line = command_line;
  data.run.gpuscope_version = std::string(gpuscope::version());
  std::set<int> gpus;
  for (const ProcessDiagnosis& p : d.processes) {
    if (p.gpu && gpus.insert(*p.gpu).second) {
      store::GpuRecord g;
      g.gpu = *p.gpu;
      g.name = p.gpu_name;
      data.run.gpus.push_back(g);
    }
    data.measurements.push_back(
        {p.gpu, "", "step_time_s", p.step_s, "s", {{"subject", p.subject}}});
    data.measurements.push_back(
        {p.gpu, "", "gpu_busy_share", p.gpu_busy_share, "1", {{"subject", p.subject}}});
  }
  for (const Finding& f : d.findings) {
    if (f.expected_speedup) {
      data.measurements.push_back(
          {f.gpu, "", "expected_speedup_low", f.expected_speedup->low, "1", {{"finding", f.id}}});
      data.measurements.push_back(
          {f.gpu, "", "expected_speedup_high", f.expected_speedup->high, "1", {{"finding", f.id}}});
    }
    Finding stored = f;  // the store keeps the whole finding (evidence, fix, gain)
    stored.gpu = f.gpu && gpus.count(*f.gpu) ? f.gpu : std::nullopt;
    data.findings.push_back(std::move(stored));
  }
  return data;
}

}  // namespace gpuscope::analysis
