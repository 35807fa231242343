// The trace section: what happened inside a traced program (`gpuscope trace --store`, or a trace
// folder's summary.json): the window's step time and where it went, the per-step breakdown, the
// kernel time by class, and a timeline of a few steps (store::names::kTrace*).
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>

#include "report/report_model.h"
#include "store/trace_names.h"

namespace gpuscope::report::detail {
namespace {

namespace n = store::names;

constexpr std::size_t kMaxStepRows = 500;

const store::Measurement* find(const store::RunData& run, const char* name,
                               const char* stat = nullptr) {
  for (const store::Measurement& m : run.measurements) {
    if (m.name != name || !m.value) continue;
    if (stat != nullptr && tag_text(m, "stat") != stat) continue;
    return &m;
  }
  return nullptr;
}

struct StepRow {
  std::optional<double> wall, busy, data_wait, sync, kernels, copy_bytes;
};

std::map<double, StepRow> step_rows(const store::RunData& run) {
  std::map<double, StepRow> steps;
  const std::pair<const char*, std::optional<double> StepRow::*> fields[] = {
      {n::kTraceStepWall, &StepRow::wall},          {n::kTraceStepGpuBusy, &StepRow::busy},
      {n::kTraceStepDataWait, &StepRow::data_wait}, {n::kTraceStepSync, &StepRow::sync},
      {n::kTraceStepKernels, &StepRow::kernels},    {n::kTraceStepCopyBytes, &StepRow::copy_bytes}};
  for (const store::Measurement& m : run.measurements) {
    const auto step = tag_number(m, "step");
    if (!step || !m.value) continue;
    for (const auto& [name, field] : fields) {
      if (m.name == name) steps[*step].*field = m.value;
    }
  }
  return steps;
}

// The timeline sample as a chart: a series per class of interval (kernel classes, copies,
// waits), a row per track (GPU stream, thread), the steps on a row of their own.
std::optional<Chart> timeline_chart(const store::RunData& run, const std::string& key) {
  Chart c;
  c.key = key;
  c.title = "Timeline of a few steps";
  c.caption =
      "Every kernel, copy, memset, host wait and NVTX range of the steps drawn (API calls left "
      "out), one row per GPU stream and thread; hover for names. Times from the first step's "
      "start. The whole window opens in ui.perfetto.dev from the trace folder's trace.json.";
  c.kind = ChartKind::timeline;
  c.x_title = "time";
  c.x_unit = Unit::seconds;
  std::map<std::string, Series> by_class;
  std::vector<std::string> order;
  const auto series = [&](const std::string& name) -> Series& {
    auto [it, added] = by_class.try_emplace(name);
    if (added) {
      it->second.name = name;
      order.push_back(name);
    }
    return it->second;
  };
  for (const store::Measurement& m : run.measurements) {
    const bool step = m.name == n::kTraceTimelineStep;
    if ((!step && m.name != n::kTraceTimelineInterval) || !m.value) continue;
    const auto start = tag_number(m, "start_s");
    if (!start) continue;
    std::string cls = step ? "step" : tag_text(m, "class");
    if (cls.empty()) cls = tag_text(m, "kind");
    Series& s = series(cls);
    s.categories.push_back(step ? "steps" : tag_text(m, "track"));
    s.x.push_back(*start);
    s.y.push_back(*start + *m.value);
    s.labels.push_back(step ? fmt::format("step {:.0f}", tag_number(m, "step").value_or(0))
                            : tag_text(m, "name"));
  }
  if (by_class.empty()) return std::nullopt;
  for (const std::string& name : order) c.series.push_back(std::move(by_class[name]));
  return c;
}

void add_run(ReportBuilder& b, const store::RunData& run, Section& section,
             const std::string& suffix, const std::string& label) {
  const store::Measurement* median = find(run, n::kTraceStepTime, "median");
  const store::Measurement* busy = find(run, n::kTraceGpuBusyShare);
  if (median != nullptr) {
    std::string detail = label;
    if (busy != nullptr)
      detail = fmt::format("GPU busy {}; {}", format_value(*busy->value, Unit::ratio), label);
    b.add_headline(
        {"Traced step time (median)", *median->value, Unit::seconds, detail, Tone::neutral});
  }

  Table overview;
  overview.key = "trace_overview" + suffix;
  overview.title = "The trace window" + (suffix.empty() ? "" : " · " + label);
  overview.caption =
      "Step times inside the window (p10 to p90), every marked step and the steps outside the "
      "window (what the run costs untraced), and where the window's time went.";
  overview.columns = {{"measure", "measure", Unit::none},
                      {"value", "value", Unit::none},
                      {"raw", "SI value", Unit::none}};
  const auto row = [&](const char* title, const store::Measurement* m, Unit unit) {
    if (m == nullptr) return;
    overview.rows.push_back({title, format_value(*m->value, unit), *m->value});
  };
  row("step time, median", median, Unit::seconds);
  row("step time, p10", find(run, n::kTraceStepTime, "p10"), Unit::seconds);
  row("step time, p90", find(run, n::kTraceStepTime, "p90"), Unit::seconds);
  row("step time, every marked step (median)", find(run, n::kTraceStepTime, "marked_median"),
      Unit::seconds);
  row("step time outside the window (median)", find(run, n::kTraceStepTime, "untraced_median"),
      Unit::seconds);
  row("GPU busy", busy, Unit::ratio);
  row("kernels per step", find(run, n::kTraceKernelsPerStep), Unit::none);
  row("mean kernel duration", find(run, n::kTraceMeanKernel), Unit::seconds);
  row("host waits on the GPU per step", find(run, n::kTraceSyncsPerStep), Unit::none);
  row("waiting for data", find(run, n::kTraceDataWaitShare), Unit::ratio);
  if (!overview.rows.empty()) section.blocks.push_back(std::move(overview));

  const auto steps = step_rows(run);
  if (!steps.empty()) {
    Chart chart;
    chart.key = "trace_steps_chart" + suffix;
    chart.title = "Each traced step";
    chart.caption =
        "Wall time of each step in the window and how much of it the GPU was busy, "
        "the program waited for data, and the host waited on the GPU.";
    chart.kind = ChartKind::lines;
    chart.x_title = "step";
    chart.y_title = "time";
    chart.y_unit = Unit::seconds;
    const double nan = std::numeric_limits<double>::quiet_NaN();
    Series wall, gpu, data, sync;
    wall.name = "wall";
    gpu.name = "GPU busy";
    data.name = "data wait";
    sync.name = "host waits";
    for (Series* s : {&wall, &gpu, &data, &sync}) s->markers = steps.size() <= 60;
    Table table;
    table.key = "trace_steps" + suffix;
    table.title = "Per-step breakdown";
    table.caption = steps.size() > kMaxStepRows ? fmt::format("The first {} of {} traced steps.",
                                                              kMaxStepRows, steps.size())
                                                : "Every traced step.";
    table.columns = {{"step", "step", Unit::count},
                     {"wall_s", "wall", Unit::seconds},
                     {"gpu_busy_s", "GPU busy", Unit::seconds},
                     {"data_wait_s", "data wait", Unit::seconds},
                     {"sync_s", "host waits", Unit::seconds},
                     {"kernels", "kernels", Unit::count},
                     {"copy_bytes", "copied", Unit::bytes}};
    const auto v = [](const std::optional<double>& x) -> Value {
      return x ? Value(*x) : Value(std::monostate{});
    };
    for (const auto& [step, r] : steps) {
      for (auto [s, x] :
           {std::pair{&wall, r.wall}, {&gpu, r.busy}, {&data, r.data_wait}, {&sync, r.sync}}) {
        s->x.push_back(step);
        s->y.push_back(x.value_or(nan));
      }
      if (table.rows.size() < kMaxStepRows) {
        table.rows.push_back(
            {step, v(r.wall), v(r.busy), v(r.data_wait), v(r.sync), v(r.kernels), v(r.copy_bytes)});
      }
    }
    chart.series = {std::move(wall), std::move(gpu), std::move(data), std::move(sync)};
    section.blocks.push_back(std::move(chart));
    section.blocks.push_back(std::move(table));
  }

  if (auto timeline = timeline_chart(run, "trace_timeline" + suffix)) {
    section.blocks.push_back(std::move(*timeline));
  }

  Table kernels;
  kernels.key = "trace_kernel_time" + suffix;
  kernels.title = "Kernel time by class";
  kernels.caption =
      "What the GPU's kernels did in the window, read from their names: matrix "
      "kernels by precision and whether they ran on tensor cores.";
  kernels.columns = {{"kind", "kind", Unit::none},
                     {"precision", "precision", Unit::none},
                     {"tensor_cores", "tensor cores", Unit::none},
                     {"count", "kernels", Unit::count},
                     {"seconds", "time", Unit::seconds}};
  for (const store::Measurement& m : run.measurements) {
    if (m.name != n::kTraceKernelTime || !m.value) continue;
    const auto tensor = m.tags.find("tensor_cores");
    const std::string precision = tag_text(m, "precision");
    kernels.rows.push_back(
        {tag_text(m, "kind"), precision == "unknown" ? std::string() : precision,
         precision == "unknown" || tensor == m.tags.end() || !tensor->is_boolean()
             ? std::string()
             : std::string(tensor->get<bool>() ? "yes" : "no"),
         tag_number(m, "count") ? Value(*tag_number(m, "count")) : Value(std::monostate{}),
         *m.value});
  }
  if (!kernels.rows.empty()) section.blocks.push_back(std::move(kernels));
}

}  // namespace

void add_trace_section(ReportBuilder& b) {
  std::vector<const store::RunData*> traces;
  for (const store::RunData& run : b.runs()) {
    if (run.run.kind == "trace") traces.push_back(&run);
  }
  if (traces.empty()) return;
  Section section;
  section.key = "trace";
  section.title = "Inside the program (gpuscope trace)";
  section.intro =
      "What the traced program did in its recording window: step time and where it went (GPU "
      "busy, waiting for data, waiting on the GPU), each step, a few steps on a timeline, and "
      "the kernels by class.";
  for (std::size_t i = 0; i < traces.size(); ++i) {
    const std::string suffix = traces.size() > 1 ? fmt::format("_{}", i + 1) : "";
    add_run(b, *traces[i], section, suffix, ReportBuilder::run_label(*traces[i]));
  }
  b.add_section(std::move(section));
}

}  // namespace gpuscope::report::detail
