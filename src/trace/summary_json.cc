#include "trace/summary_json.h"

#include <fmt/format.h>

#include <algorithm>

#include "trace/kernel_class.h"

namespace gpuscope::trace::detail {
namespace {

using nlohmann::json;

// `syncs_recorded` false (a light trace): the step's waits are null, not 0.
json step_json(const StepStats& s, bool syncs_recorded) {
  return {{"wall_s", s.wall_s},
          {"gpu_busy_s", s.gpu_busy_s},
          {"data_wait_s", s.data_wait_s},
          {"sync_s", syncs_recorded ? json(s.sync_s) : json(nullptr)},
          {"syncs", syncs_recorded ? json(s.syncs) : json(nullptr)},
          {"kernels", s.kernels},
          {"kernel_s", s.kernel_s},
          {"copies", s.copies},
          {"copy_bytes", s.copy_bytes},
          {"pageable_copies", s.pageable_copies}};
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 == 1 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string ms(double seconds) {
  return fmt::format("{:.3f} ms", seconds * 1e3);
}
std::string pct(double share) {
  return fmt::format("{:.1f} %", share * 100);
}

std::string bytes(double b) {
  if (b >= 1e9) return fmt::format("{:.2f} GB", b / 1e9);
  if (b >= 1e6) return fmt::format("{:.1f} MB", b / 1e6);
  if (b >= 1e3) return fmt::format("{:.1f} kB", b / 1e3);
  return fmt::format("{:.0f} B", b);
}

constexpr std::size_t kSampleSteps = 3;
constexpr std::size_t kMaxSampleIntervals = 5000;
constexpr std::int64_t kSampleWithoutSteps = 50'000'000;  // 50 ms of the window

const char* gpu_kind_name(GpuActivity::Kind kind) {
  switch (kind) {
    case GpuActivity::Kind::kernel:
      return "kernel";
    case GpuActivity::Kind::memcpy:
      return "memcpy";
    case GpuActivity::Kind::memset:
      return "memset";
  }
  return "kernel";
}

const char* host_kind_name(HostInterval::Kind kind) {
  switch (kind) {
    case HostInterval::Kind::api:
      return "api";
    case HostInterval::Kind::sync:
      return "sync";
    case HostInterval::Kind::range:
      return "range";
    case HostInterval::Kind::data_wait:
      return "data_wait";
  }
  return "range";
}

// A few whole steps of the timeline, for the report's drawing: every GPU activity, host wait
// and NVTX range in them (API calls left out: a launch each), times in seconds from the first
// step's start, at most kMaxSampleIntervals intervals (the first ones; the rest counted).
// Without steps, the first 50 ms of GPU activity. Null when there is nothing to draw.
json timeline_sample_json(const TraceSummary& s, const Timeline& t, std::size_t first_step_n) {
  std::int64_t from = 0, to = 0;
  json steps = json::array();
  if (!s.steps.empty()) {
    const std::size_t n = std::min(kSampleSteps, s.steps.size());
    const std::size_t first = (s.steps.size() - n) / 2;
    from = s.steps[first].start_ns;
    to = s.steps[first + n - 1].end_ns;
    for (std::size_t i = first; i < first + n; ++i) {
      steps.push_back({{"n", first_step_n + i},
                       {"start_s", static_cast<double>(s.steps[i].start_ns - from) / 1e9},
                       {"end_s", static_cast<double>(s.steps[i].end_ns - from) / 1e9}});
    }
  } else if (!t.gpu.empty()) {
    from = t.gpu.front().start_ns;
    for (const GpuActivity& a : t.gpu) from = std::min(from, a.start_ns);
    to = from + kSampleWithoutSteps;
  } else {
    return nullptr;
  }
  json intervals = json::array();
  std::size_t dropped = 0;
  const auto add = [&](std::string track, const char* kind, std::string cls, std::string name,
                       std::int64_t start, std::int64_t end) {
    if (end < from || start >= to) return;
    if (intervals.size() >= kMaxSampleIntervals) {
      ++dropped;
      return;
    }
    intervals.push_back({{"track", std::move(track)},
                         {"kind", kind},
                         {"class", std::move(cls)},
                         {"name", std::move(name)},
                         {"start_s", static_cast<double>(std::max(start, from) - from) / 1e9},
                         {"end_s", static_cast<double>(std::min(end, to) - from) / 1e9}});
  };
  const auto name_of = [&](std::uint32_t id) {
    return id < t.names.size() ? t.names[id] : std::string();
  };
  for (const GpuActivity& a : t.gpu) {
    std::string cls, name;
    if (a.kind == GpuActivity::Kind::kernel) {
      name = name_of(a.name);
      cls = kernel_kind_name(classify_kernel(name).kind);
    } else {
      cls = a.kind == GpuActivity::Kind::memset ? "memset" : copy_kind_name(a.copy);
      if (a.kind == GpuActivity::Kind::memcpy && a.pageable) cls += " pageable";
      name = fmt::format("{} {} B", cls, a.bytes);
    }
    add(fmt::format("GPU {} stream {}", a.device, a.stream), gpu_kind_name(a.kind), std::move(cls),
        std::move(name), a.start_ns, a.end_ns);
  }
  for (const HostInterval& h : t.host) {
    if (h.kind == HostInterval::Kind::api) continue;
    const bool main = h.pid == t.main_pid && h.tid == t.main_pid;
    std::string track =
        main ? fmt::format("main thread {}", h.tid) : fmt::format("pid {} thread {}", h.pid, h.tid);
    add(std::move(track), host_kind_name(h.kind), host_kind_name(h.kind), name_of(h.name),
        h.start_ns, h.end_ns);
  }
  return {{"span_s", static_cast<double>(to - from) / 1e9},
          {"steps", steps},
          {"intervals", intervals},
          {"dropped_intervals", dropped}};
}

}  // namespace

json summary_to_json(const TraceSummary& s, const Timeline& t,
                     const std::vector<ProcessTrace>& processes) {
  json j;
  j["kind"] = "gpuscope.trace";
  j["schema_version"] = kTraceSchemaVersion;
  j["window"] = {{"seconds", s.window_s}};
  for (const ProcessTrace& p : processes) {
    if (static_cast<pid_t>(p.header.pid) != t.main_pid) continue;
    json w;
    if (!p.window.begin_reason.empty()) w["begin_reason"] = p.window.begin_reason;
    if (!p.window.end_reason.empty()) w["end_reason"] = p.window.end_reason;
    if (p.window.first_step) w["first_step"] = *p.window.first_step;
    if (p.window.end_step) w["end_step"] = *p.window.end_step;
    // Opened on time before any step; the traced steps began at this step (warm-up before).
    if (p.window.steps_step) w["steps_from_step"] = *p.window.steps_step;
    w["opened"] = p.window.begin_ns.has_value();
    // CUPTI recorded on after the close until the GPU finished the window's work.
    if (p.window.gpu_end_ns && p.window.end_ns) {
      w["gpu_end"] = {
          {"status", p.window.gpu_end_status},
          {"after_close_s", static_cast<double>(*p.window.gpu_end_ns -
                                                std::min(*p.window.gpu_end_ns, *p.window.end_ns)) *
                                1e-9}};
    }
    w["seconds"] = s.window_s;
    j["window"] = w;
  }

  json steps = {
      {"source", step_source_name(s.step_source)},
      {"traced", s.steps.size()},
      // Mark n ends step n, so the interval after mark i is step i + 1.
      {"first_traced", s.first_traced_step + (s.step_source == StepSource::marks ? 1 : 0)},
      {"marked", s.all_step_s.size()}};
  if (s.step_median_s) {
    steps["median_s"] = *s.step_median_s;
    steps["p10_s"] = *s.step_p10_s;
    steps["p90_s"] = *s.step_p90_s;
  }
  if (!s.all_step_s.empty()) {
    // Steps outside the window: what the run costs untraced (marks only). Before and after it
    // apart too: after the window the library has detached, and steps as fast as before say
    // that tracing left no cost behind.
    std::vector<double> outside, before, after;
    for (std::size_t i = 0; i < s.all_step_s.size(); ++i) {
      if (i < s.first_recorded_step) {
        before.push_back(s.all_step_s[i]);
      } else if (i >= s.first_traced_step + s.steps.size()) {
        after.push_back(s.all_step_s[i]);
      } else {
        continue;
      }
      outside.push_back(s.all_step_s[i]);
    }
    steps["marked_median_s"] = median(s.all_step_s);
    if (!outside.empty()) steps["untraced_median_s"] = median(outside);
    if (!before.empty()) steps["untraced_before_median_s"] = median(before);
    if (!after.empty()) steps["untraced_after_median_s"] = median(after);
  }
  json per_step = json::array();
  for (const StepStats& st : s.steps) per_step.push_back(step_json(st, s.syncs_recorded));
  steps["per_step"] = per_step;
  j["steps"] = steps;

  const double n_steps = static_cast<double>(s.steps.size());
  json gpu = {{"busy_s", s.gpu_busy_s},
              {"busy_share", s.gpu_busy_share},
              {"kernels", s.kernels},
              {"kernel_s", s.kernel_s},
              {"mean_kernel_s", s.mean_kernel_s},
              {"graph_kernels", s.graph_kernels},
              {"devices", s.devices}};
  if (n_steps > 0) gpu["kernels_per_step"] = static_cast<double>(s.kernels) / n_steps;
  if (s.device_busy_s.size() > 1) {
    // One process on several GPUs: busy_s is their union; each GPU's own.
    json by_device = json::array();
    for (const auto& [device, busy] : s.device_busy_s) {
      by_device.push_back({{"device", device},
                           {"busy_s", busy},
                           {"busy_share", s.window_s > 0 ? busy / s.window_s : 0}});
    }
    gpu["busy_by_device"] = by_device;
  }
  json kernel_time = json::array();
  for (const KernelTime& k : s.kernel_time) {
    kernel_time.push_back({{"kind", k.kind},
                           {"precision", k.precision},
                           {"tensor_cores", k.tensor_cores},
                           {"count", k.count},
                           {"seconds", k.seconds},
                           {"share_of_kernel_time", s.kernel_s > 0 ? k.seconds / s.kernel_s : 0}});
  }
  gpu["kernel_time"] = kernel_time;
  if (s.communication_kernels > 0 || s.communication_copies > 0) {
    json communication = {{"kernels", s.communication_kernels},
                          {"peer_copies", s.communication_copies},
                          {"seconds", s.communication_s},
                          {"exposed_s", s.communication_exposed_s},
                          {"seconds_by_collective", s.communication_by_op}};
    if (n_steps > 0) {
      communication["seconds_per_step"] = s.communication_s / n_steps;
      communication["exposed_s_per_step"] = s.communication_exposed_s / n_steps;
    }
    gpu["communication"] = communication;
  }
  json top = json::array();
  for (const TopKernel& k : s.top_kernels) {
    top.push_back({{"name", k.name}, {"count", k.count}, {"seconds", k.seconds}});
  }
  gpu["top_kernels"] = top;
  json idle = json::array();
  for (const IdleBucket& b : s.idle) {
    idle.push_back({{"gap", b.label}, {"gaps", b.gaps}, {"seconds", b.seconds}});
  }
  gpu["idle"] = idle;
  j["gpu"] = gpu;

  json copies = json::object();
  for (const auto& [key, c] : s.copies) {
    copies[key] = {{"count", c.count}, {"bytes", c.bytes}, {"seconds", c.seconds}};
  }
  j["copies"] = copies;
  if (s.syncs_recorded) {
    j["syncs"] = {{"count", s.syncs}, {"seconds", s.sync_s}, {"recorded", true}};
    if (n_steps > 0) j["syncs"]["per_step"] = static_cast<double>(s.syncs) / n_steps;
  } else {  // a light trace: no count is better than a count of 0
    j["syncs"] = {{"count", nullptr}, {"seconds", nullptr}, {"recorded", false}};
  }
  j["data_wait"] = {{"seconds", s.data_wait_s},
                    {"share", s.window_s > 0 ? s.data_wait_s / s.window_s : 0}};

  // CPU time covers the whole run (the tracker samples /proc from start to end), not the window.
  json cpu = {{"span", "whole run"}, {"by_role", s.cpu_s_by_role}};
  json threads = json::array();
  for (std::size_t i = 0; i < s.threads.size() && i < 20; ++i) {
    const ThreadUse& u = s.threads[i];
    threads.push_back({{"pid", u.pid},
                       {"tid", u.tid},
                       {"thread", u.thread_name},
                       {"process", u.process_name},
                       {"role", role_name(u.role)},
                       {"cpu_s", u.cpu_s}});
  }
  cpu["threads"] = threads;
  j["cpu"] = cpu;

  json procs = json::array();
  for (const ProcessTrace& p : processes) {
    json entry = {{"pid", p.header.pid},
                  {"ppid", p.header.ppid},
                  {"cmdline", p.header.cmdline},
                  {"cupti", p.cupti.status},
                  {"ended", p.ended},
                  {"truncated", p.truncated},
                  {"kernels", p.kernels.size()},
                  {"steps", p.steps.size()},
                  {"dropped_records", p.dropped_total() + p.dropped_cupti},
                  {"file", p.path.filename().string()}};
    if (!p.cupti.reason.empty()) entry["cupti_reason"] = p.cupti.reason;
    if (static_cast<pid_t>(p.header.pid) == t.main_pid) entry["observed"] = true;
    procs.push_back(entry);
  }
  j["processes"] = procs;
  json sample = timeline_sample_json(s, t, steps["first_traced"].get<std::size_t>());
  if (!sample.is_null()) j["timeline_sample"] = std::move(sample);
  return j;
}

std::vector<std::string> trace_notes(const TraceSummary& s,
                                     const std::vector<ProcessTrace>& processes) {
  std::vector<std::string> notes;
  if (processes.empty()) {
    notes.push_back(
        "no GPU work seen: the command never initialised CUDA or NVTX (a program that does not "
        "use the GPU, a statically linked CUDA runtime the injection cannot reach, or an "
        "environment that removed CUDA_INJECTION64_PATH)");
    return notes;
  }
  if (!s.syncs_recorded) {
    notes.push_back(
        "a light trace (--light): kernels, copies and memsets only; synchronizations and CUDA "
        "calls were not recorded, so waits on the GPU are not counted");
  }
  bool any_kernels = false;
  for (const ProcessTrace& p : processes) {
    any_kernels = any_kernels || !p.kernels.empty();
    const std::string who = fmt::format("process {}", p.header.pid);
    if (p.cupti.status == "taken_by_another_subscriber") {
      notes.push_back(who +
                      ": CUPTI is taken by another tool (nsys, ncu or the program's own "
                      "profiler); only NVTX marks and ranges were recorded");
    } else if (p.cupti.status == "unavailable") {
      notes.push_back(who + ": CUPTI unavailable (" + p.cupti.reason + ")");
    }
    for (const std::string& e : p.cupti.errors) notes.push_back(who + ": " + e);
    if (p.truncated) {
      notes.push_back(who +
                      ": killed or still running at the end: its records end at its last "
                      "flush (at most about 0.5 s lost)");
    }
    if (p.dropped_total() + p.dropped_cupti > 0) {
      notes.push_back(fmt::format("{}: {} records dropped (file size cap or CUPTI buffers)", who,
                                  p.dropped_total() + p.dropped_cupti));
    }
    if (!p.window.begin_ns && p.header.pid != 0 && !p.steps.empty()) {
      notes.push_back(
          fmt::format("{}: the program ended after {} steps, before the trace window "
                      "opened: rerun with --skip-steps 0 or --duration 0",
                      who, p.steps.size()));
    }
  }
  if (!any_kernels) {
    notes.push_back(
        "no kernel was recorded: the window never opened, or the GPU work happened "
        "outside it (--duration 0 records the whole run)");
  }
  if (s.step_source == StepSource::none && any_kernels) {
    notes.push_back(
        "no steps found: no step marks (a Python program without torch.optim, or "
        "--no-shim) and no repeating kernel sequence; the window is summarised whole");
  }
  return notes;
}

void print_summary_json(const json& j, std::ostream& out) {
  const json& steps = j["steps"];
  const json& gpu = j["gpu"];
  out << fmt::format("Trace window: {:.2f} s", j["window"].value("seconds", 0.0));
  if (j["window"].contains("steps_from_step")) {
    // Opened on time before the program marked a step: warm-up, then the traced steps.
    out << fmt::format(", opened before the first step; steps [{}, {}) traced",
                       j["window"]["steps_from_step"].get<long long>(),
                       j["window"].value("end_step", 0LL));
  } else if (j["window"].contains("first_step")) {
    out << fmt::format(", steps [{}, {})", j["window"]["first_step"].get<long long>(),
                       j["window"].value("end_step", 0LL));
  }
  out << '\n';
  if (steps.value("traced", 0) > 0) {
    out << fmt::format("Steps: {} traced (from {}), median {} (p10 {}, p90 {})",
                       steps["traced"].get<int>(), steps["source"].get<std::string>(),
                       ms(steps["median_s"]), ms(steps["p10_s"]), ms(steps["p90_s"]));
    if (steps.contains("untraced_median_s")) {
      out << fmt::format("; untraced steps median {}", ms(steps["untraced_median_s"]));
      if (steps.contains("untraced_before_median_s") && steps.contains("untraced_after_median_s")) {
        out << fmt::format(" (before the window {}, after {})",
                           ms(steps["untraced_before_median_s"]),
                           ms(steps["untraced_after_median_s"]));
      }
    }
    out << '\n';
  } else {
    out << "Steps: none found\n";
  }
  out << fmt::format("GPU busy: {} of the window ({} kernels, mean {} each", pct(gpu["busy_share"]),
                     gpu["kernels"].get<long long>(),
                     fmt::format("{:.1f} us", gpu["mean_kernel_s"].get<double>() * 1e6));
  if (gpu.contains("kernels_per_step")) {
    out << fmt::format(", {:.0f} per step", gpu["kernels_per_step"].get<double>());
  }
  out << ")\n";
  if (gpu.contains("busy_by_device")) {
    out << "GPU busy by device (one process on several GPUs):";
    for (const json& d : gpu["busy_by_device"]) {
      out << fmt::format("  GPU {} {}", d["device"].get<int>(), pct(d["busy_share"]));
    }
    out << '\n';
  }
  if (!gpu["kernel_time"].empty()) {
    out << "Kernel time by kind:\n";
    for (const json& k : gpu["kernel_time"]) {
      std::string what = k["kind"];
      if (k["precision"] != "unknown") {
        what +=
            fmt::format(" {}{}", k["precision"].get<std::string>(),
                        k["tensor_cores"].get<bool>() ? " (tensor cores)" : " (no tensor cores)");
      }
      out << fmt::format("  {:<40} {:>10}  {:>6}  {} kernels\n", what, ms(k["seconds"]),
                         pct(k["share_of_kernel_time"]), k["count"].get<long long>());
    }
  }
  if (gpu.contains("communication")) {
    const json& c = gpu["communication"];
    const long long kernels = c["kernels"].get<long long>();
    const long long copies = c.value("peer_copies", 0LL);
    std::string what;
    if (kernels > 0) what = fmt::format("{} NCCL kernels", kernels);
    if (copies > 0) what += fmt::format("{}{} peer copies", what.empty() ? "" : " and ", copies);
    out << fmt::format(
        "Communication between GPUs: {} in {}, {} of it with no other GPU work beside it "
        "(exposed)\n",
        ms(c["seconds"]), what, ms(c["exposed_s"]));
  }
  out << "GPU idle gaps:";
  for (const json& b : gpu["idle"]) {
    if (b["gaps"].get<long long>() == 0) continue;
    out << fmt::format("  {} x{} = {}", b["gap"].get<std::string>(), b["gaps"].get<long long>(),
                       ms(b["seconds"]));
  }
  out << '\n';
  if (!j["copies"].empty()) {
    out << "Copies:";
    for (const auto& [key, c] : j["copies"].items()) {
      out << fmt::format("  {} x{} ({})", key, c["count"].get<long long>(),
                         bytes(c["bytes"].get<double>()));
    }
    out << '\n';
  }
  if (j["syncs"]["count"].is_null()) {
    out << "Host waited on the GPU: not recorded (a light trace)";
  } else {
    out << fmt::format("Host waited on the GPU: {} times, {}", j["syncs"]["count"].get<long long>(),
                       ms(j["syncs"]["seconds"]));
  }
  if (j["syncs"].contains("per_step")) {
    out << fmt::format(" ({:.1f} per step)", j["syncs"]["per_step"].get<double>());
  }
  out << '\n';
  out << fmt::format("Waiting for data: {} ({} of the window)\n", ms(j["data_wait"]["seconds"]),
                     pct(j["data_wait"]["share"]));
  const json& roles = j["cpu"]["by_role"];
  if (!roles.empty()) {
    out << fmt::format(
        "CPU over the whole run: main thread {:.2f} s, its other threads {:.2f} s, child processes "
        "{:.2f} s\n",
        roles.value("main", 0.0), roles.value("other", 0.0), roles.value("descendant", 0.0));
  }
}

}  // namespace gpuscope::trace::detail
