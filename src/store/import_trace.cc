// `gpuscope trace`'s summary.json (kind "gpuscope.trace") as one "trace" run: the window's
// overall numbers, one row per traced step and measure, the kernel time by class, the copies, and
// the few steps of the timeline sample the report draws (names::kTrace*).
#include <fmt/format.h>

#include "store/importers.h"
#include "store/trace_names.h"

namespace gpuscope::store::detail {
namespace {

using nlohmann::json;

constexpr int kTraceSchema = 1;

std::optional<double> number(const json& object, const char* key) {
  if (!object.is_object()) return std::nullopt;
  auto it = object.find(key);
  if (it == object.end() || !it->is_number()) return std::nullopt;
  return it->get<double>();
}

std::string text(const json& object, const char* key) {
  if (!object.is_object()) return "";
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : "";
}

}  // namespace

Result<RunData> run_from_trace_summary(const json& summary) {
  const std::optional<double> version = number(summary, "schema_version");
  if (!version || *version > kTraceSchema) {
    return Status(Code::data_error,
                  fmt::format("trace schema_version {} is not one this gpuscope reads (up to {})",
                              version ? fmt::format("{}", *version) : "(missing)", kTraceSchema));
  }
  RunData data;
  data.run.kind = "trace";
  data.run.command_line = "gpuscope trace --";
  if (const json& command = summary.value("command", json()); command.is_array()) {
    for (const json& word : command) {
      if (word.is_string()) data.run.command_line += " " + word.get<std::string>();
    }
  }
  auto& rows = data.measurements;
  const auto add = [&](const char* name, std::optional<double> value, const char* unit,
                       json tags = json::object()) {
    if (!value) return;
    Measurement m;
    m.name = name;
    m.value = value;
    m.unit = unit;
    m.tags = std::move(tags);
    rows.push_back(std::move(m));
  };
  namespace n = names;
  const json steps = summary.value("steps", json::object());
  const json gpu = summary.value("gpu", json::object());
  data.run.configurations.push_back(
      {"trace",
       {{"step_source", text(steps, "source")},
        {"window_s", number(summary.value("window", json::object()), "seconds").value_or(0)}}});
  for (const char* stat : {"median", "p10", "p90", "marked_median", "untraced_median"}) {
    add(n::kTraceStepTime, number(steps, fmt::format("{}_s", stat).c_str()), "s", {{"stat", stat}});
  }
  add(n::kTraceGpuBusyShare, number(gpu, "busy_share"), "1");
  add(n::kTraceKernelsPerStep, number(gpu, "kernels_per_step"), "1");
  add(n::kTraceMeanKernel, number(gpu, "mean_kernel_s"), "s");
  add(n::kTraceSyncsPerStep, number(summary.value("syncs", json::object()), "per_step"), "1");
  add(n::kTraceDataWaitShare, number(summary.value("data_wait", json::object()), "share"), "1");
  for (const json& k : gpu.value("kernel_time", json::array())) {
    add(n::kTraceKernelTime, number(k, "seconds"), "s",
        {{"kind", text(k, "kind")},
         {"precision", text(k, "precision")},
         {"tensor_cores", k.value("tensor_cores", false)},
         {"count", number(k, "count").value_or(0)}});
  }
  const json copies = summary.value("copies", json::object());
  for (const auto& [key, c] : copies.items()) {
    add(n::kTraceCopyBytes, number(c, "bytes"), "B",
        {{"copy", key}, {"count", number(c, "count").value_or(0)}});
  }
  const double first = number(steps, "first_traced").value_or(0);
  const json per_step = steps.value("per_step", json::array());
  for (std::size_t i = 0; i < per_step.size(); ++i) {
    const json tags = {{"step", first + static_cast<double>(i)}};
    const json& s = per_step[i];
    add(n::kTraceStepWall, number(s, "wall_s"), "s", tags);
    add(n::kTraceStepGpuBusy, number(s, "gpu_busy_s"), "s", tags);
    add(n::kTraceStepDataWait, number(s, "data_wait_s"), "s", tags);
    add(n::kTraceStepSync, number(s, "sync_s"), "s", tags);
    add(n::kTraceStepKernels, number(s, "kernels"), "1", tags);
    add(n::kTraceStepCopyBytes, number(s, "copy_bytes"), "B", tags);
  }
  const json sample = summary.value("timeline_sample", json::object());
  for (const json& s : sample.value("steps", json::array())) {
    const double start = number(s, "start_s").value_or(0);
    add(n::kTraceTimelineStep, number(s, "end_s").value_or(start) - start, "s",
        {{"step", number(s, "n").value_or(0)}, {"start_s", start}});
  }
  for (const json& i : sample.value("intervals", json::array())) {
    const double start = number(i, "start_s").value_or(0);
    add(n::kTraceTimelineInterval, number(i, "end_s").value_or(start) - start, "s",
        {{"track", text(i, "track")},
         {"kind", text(i, "kind")},
         {"class", text(i, "class")},
         {"name", text(i, "name")},
         {"start_s", start}});
  }
  return data;
}

}  // namespace gpuscope::store::detail
