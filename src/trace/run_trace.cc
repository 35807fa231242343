// gpuscope trace: the command under the injection library, watched by the monitor's runner.
#include <fcntl.h>
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "gpuscope/trace.h"
#include "trace/summary.h"
#include "trace/summary_json.h"
#include "trace/thread_cpu.h"
#include "trace/timeline_build.h"
#include "trace/trace_export.h"

namespace gpuscope::trace {
namespace {

namespace fs = std::filesystem;
using detail::CounterSample;

constexpr const char* kLibraryName = "libgpuscope_inject.so";

fs::path self_dir() {
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  return ec ? fs::path() : self.parent_path();
}

// The injection library: GPUSCOPE_INJECT_LIBRARY, else next to gpuscope, else in the build tree
// (tools/gpuscope/gpuscope -> src/inject/libgpuscope_inject.so).
Result<std::string> locate_library(const std::string& given) {
  std::string wanted = given;
  if (wanted.empty()) {
    if (const char* env = std::getenv("GPUSCOPE_INJECT_LIBRARY"); env != nullptr && *env)
      wanted = env;
  }
  if (!wanted.empty()) {
    if (fs::is_regular_file(wanted)) return fs::absolute(wanted).string();
    return Status(Code::not_found, fmt::format("the injection library {} does not exist", wanted));
  }
  const fs::path dir = self_dir();
  const fs::path candidates[] = {dir / kLibraryName, dir / "../lib" / kLibraryName,
                                 dir / "../../src/inject" / kLibraryName};
  for (const fs::path& c : candidates) {
    if (fs::is_regular_file(c)) return c.lexically_normal().string();
  }
  return Status(Code::not_found,
                fmt::format("cannot find {} (looked next to gpuscope, in ../lib and in the build "
                            "tree); build it, or set GPUSCOPE_INJECT_LIBRARY",
                            kLibraryName));
}

// The folder holding the shim's sitecustomize.py: GPUSCOPE_SHIM_DIR, next to gpuscope's install
// (../share/gpuscope/python), else the source tree this gpuscope was built from.
std::optional<std::string> locate_shim(const std::string& given) {
  std::vector<fs::path> candidates;
  if (!given.empty()) candidates.emplace_back(given);
  if (const char* env = std::getenv("GPUSCOPE_SHIM_DIR"); env != nullptr && *env) {
    candidates.emplace_back(env);
  }
  candidates.push_back(self_dir() / "../share/gpuscope/python/gpuscope_shim");
#ifdef GPUSCOPE_SHIM_SOURCE_DIR
  candidates.emplace_back(GPUSCOPE_SHIM_SOURCE_DIR);
#endif
  for (const fs::path& c : candidates) {
    if (fs::is_regular_file(c / "sitecustomize.py"))
      return fs::absolute(c).lexically_normal().string();
  }
  return std::nullopt;
}

Status prepare_folder(const fs::path& dir) {
  std::error_code ec;
  if (fs::exists(dir, ec) && !fs::is_directory(dir, ec)) {
    return Status(Code::invalid_argument,
                  fmt::format("-o {}: exists and is not a folder", dir.string()));
  }
  if (fs::is_directory(dir, ec)) {
    for (const auto& entry : fs::directory_iterator(dir, ec)) {
      const std::string name = entry.path().filename().string();
      if (name.rfind("gpuscope-trace-", 0) == 0 || name == "summary.json" || name == "trace.json") {
        return Status(Code::invalid_argument,
                      fmt::format("-o {}: already holds a trace ({}); choose another folder, or "
                                  "read it again with `gpuscope trace --analyse {}`",
                                  dir.string(), name, dir.string()));
      }
    }
  } else {
    fs::create_directories(dir, ec);
    if (ec) {
      return Status(Code::io_error,
                    fmt::format("cannot create {}: {}", dir.string(), ec.message()));
    }
  }
  const fs::path probe = dir / fmt::format(".gpuscope-write-test-{}", getpid());
  const int fd = ::open(probe.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status(Code::io_error,
                  fmt::format("cannot write in {}: {}", dir.string(),
                              std::error_code(errno, std::generic_category()).message()));
  }
  ::close(fd);
  fs::remove(probe, ec);
  return Status{};
}

std::vector<std::pair<std::string, std::string>> environment(const TraceOptions& o,
                                                             const std::string& library,
                                                             const std::optional<std::string>& shim,
                                                             const fs::path& dir) {
  std::vector<std::pair<std::string, std::string>> env = {
      {"CUDA_INJECTION64_PATH", library},
      {"NVTX_INJECTION64_PATH", library},
      {"GPUSCOPE_TRACE_DIR", fs::absolute(dir).string()},
      // NCCL_NVLS_ENABLE=0 comes from the runner (observe::Process), unless the user set it.
  };
  if (!o.whole_run) {
    env.emplace_back("GPUSCOPE_TRACE_SKIP_STEPS", std::to_string(o.skip_steps));
    env.emplace_back("GPUSCOPE_TRACE_STEPS", std::to_string(o.steps));
    env.emplace_back("GPUSCOPE_TRACE_SKIP_S", fmt::format("{}", o.skip_s));
    env.emplace_back("GPUSCOPE_TRACE_DURATION_S", fmt::format("{}", o.duration_s));
  }
  // The kinds of a light trace (TraceOptions::light); the injection library's names.
  if (o.light) env.emplace_back("GPUSCOPE_TRACE_KINDS", "kernel,memcpy,memset,overhead");
  if (shim) {
    const char* existing = std::getenv("PYTHONPATH");
    env.emplace_back("PYTHONPATH",
                     existing != nullptr && *existing ? *shim + ":" + existing : *shim);
  }
  return env;
}

// NVML readings for trace.json's counter tracks, on the record files' clock.
std::vector<CounterSample> counters_from(const fs::path& jsonl,
                                         const std::vector<ProcessTrace>& processes) {
  std::vector<CounterSample> counters;
  if (processes.empty()) return counters;
  const TraceHeader& h = processes.front().header;
  auto recording = telemetry::read_recording(jsonl.string());
  if (!recording.ok()) return counters;
  const double offset_ns =
      static_cast<double>(h.origin_ns) - static_cast<double>(h.origin_realtime_ns);
  using telemetry::Metric;
  const std::pair<Metric, const char*> wanted[] = {
      {Metric::sm_activity, "SM activity"},
      {Metric::tensor_activity, "tensor activity"},
      {Metric::dram_activity, "DRAM activity"},
      {Metric::gpu_utilization, "NVML util (duty cycle)"},
      {Metric::power_w, "power (W)"},
      {Metric::sm_clock_hz, "SM clock (MHz)"},
      {Metric::memory_used_bytes, "memory used (GiB)"}};
  for (const telemetry::GpuSample& s : recording->samples) {
    if (s.lost) continue;
    CounterSample c;
    c.at_ns = static_cast<std::int64_t>(s.unix_s * 1e9 + offset_ns);
    c.device = static_cast<int>(s.gpu);
    for (const auto& [metric, name] : wanted) {
      auto v = s.values.get(metric);
      if (!v) continue;
      double value = *v;
      if (metric == Metric::sm_clock_hz) value /= 1e6;
      if (metric == Metric::memory_used_bytes) value /= 1024.0 * 1024 * 1024;
      c.values[name] = value;
    }
    if (!c.values.empty()) counters.push_back(std::move(c));
  }
  return counters;
}

// Each GPU process (rank) summarized on its own timeline, so that no rank's GPU work lands in
// another's steps: its GPUs, steps, GPU busy share and kernels.
nlohmann::json ranks_json(std::vector<const ProcessTrace*> gpu_processes,
                          const detail::SummaryOptions& so) {
  std::sort(
      gpu_processes.begin(), gpu_processes.end(),
      [](const ProcessTrace* a, const ProcessTrace* b) { return a->header.pid < b->header.pid; });
  nlohmann::json ranks = nlohmann::json::array();
  for (const ProcessTrace* p : gpu_processes) {
    const auto pid = static_cast<pid_t>(p->header.pid);
    const detail::TraceSummary s = detail::summarize(detail::build_timeline({*p}, pid), {}, so);
    nlohmann::json steps = {{"source", detail::step_source_name(s.step_source)},
                            {"traced", s.steps.size()}};
    if (s.step_median_s) steps["median_s"] = *s.step_median_s;
    const double n = static_cast<double>(s.steps.size());
    nlohmann::json rank = {
        {"pid", pid},
        {"devices", s.devices},
        {"steps", steps},
        {"gpu",
         {{"busy_share", s.gpu_busy_share}, {"kernels", s.kernels}, {"kernel_s", s.kernel_s}}},
        {"data_wait_s", s.data_wait_s}};
    if (n > 0 && s.syncs_recorded) rank["syncs_per_step"] = static_cast<double>(s.syncs) / n;
    if (n > 0 && s.communication_kernels + s.communication_copies > 0) {
      // Each rank's communication: NCCL's collectives that waited for a slower rank show more
      // exposed time.
      rank["communication"] = {{"seconds_per_step", s.communication_s / n},
                               {"exposed_s_per_step", s.communication_exposed_s / n}};
    }
    ranks.push_back(std::move(rank));
  }
  return ranks;
}

struct Analysis {
  nlohmann::json summary;
  std::vector<std::string> notes;
  std::size_t processes = 0, events = 0, dropped = 0;
};

Result<Analysis> analyse(const fs::path& dir, pid_t command_pid,
                         const std::vector<detail::ThreadUse>& threads,
                         const std::optional<std::string>& step_range, std::size_t max_events) {
  std::vector<ProcessTrace> processes;
  std::error_code ec;
  bool has_records = false;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    has_records = has_records || entry.path().filename().string().rfind("gpuscope-trace-", 0) == 0;
  }
  if (has_records) {
    GPUSCOPE_ASSIGN_OR_RETURN(processes, read_trace_dir(dir));
  }
  if (command_pid == 0 && !processes.empty())
    command_pid = static_cast<pid_t>(processes.front().header.pid);
  detail::Timeline timeline = detail::build_timeline(processes, command_pid);
  detail::SummaryOptions so;
  so.step_range = step_range;
  // Several processes ran kernels (the ranks of a data-parallel job): the summary is the
  // observed one's, with the processes that ran none (its workers); trace.json shows them all.
  std::vector<const ProcessTrace*> gpu_processes;
  for (const ProcessTrace& p : processes) {
    if (!p.kernels.empty()) gpu_processes.push_back(&p);
  }
  detail::TraceSummary summary;
  if (gpu_processes.size() > 1) {
    const pid_t main = timeline.main_pid;
    std::vector<ProcessTrace> own;
    for (const ProcessTrace& p : processes) {
      if (p.kernels.empty() || static_cast<pid_t>(p.header.pid) == main) own.push_back(p);
    }
    summary = detail::summarize(detail::build_timeline(own, main), threads, so);
  } else {
    summary = detail::summarize(timeline, threads, so);
  }

  Analysis a;
  a.processes = processes.size();
  a.notes = detail::trace_notes(summary, processes);
  a.summary = detail::summary_to_json(summary, timeline, processes);
  if (gpu_processes.size() > 1) {
    a.summary["ranks"] = ranks_json(gpu_processes, so);
    a.notes.push_back(fmt::format(
        "{} processes ran kernels (ranks): the summary is pid {}'s; \"ranks\" has each one's",
        gpu_processes.size(), timeline.main_pid));
  }

  detail::ExportOptions eo;
  eo.limits.max_events = max_events;
  eo.metadata = {{"generator", "gpuscope trace"}, {"clock", "CLOCK_MONOTONIC"}};
  const fs::path trace_json = dir / "trace.json";
  const fs::path tmp = dir / fmt::format(".trace.json.{}", getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    if (!out) return Status(Code::io_error, fmt::format("cannot write {}", tmp.string()));
    auto counts = detail::export_chrome_trace(
        timeline, summary, counters_from(dir / "telemetry.jsonl", processes), eo, out);
    out.flush();
    if (!out) return Status(Code::io_error, fmt::format("writing {} failed", trace_json.string()));
    a.events = counts.written;
    a.dropped = counts.dropped;
  }
  fs::rename(tmp, trace_json, ec);
  if (ec)
    return Status(Code::io_error,
                  fmt::format("cannot write {}: {}", trace_json.string(), ec.message()));
  a.summary["trace_json"] = {
      {"file", "trace.json"}, {"events", a.events}, {"dropped_events", a.dropped}};
  if (a.dropped > 0) {
    a.notes.push_back(
        fmt::format("trace.json holds the first {} events; {} more were left out "
                    "(counts per kind in its metadata)",
                    a.events, a.dropped));
  }
  a.summary["notes"] = a.notes;
  return a;
}

Status write_json(const fs::path& path, const nlohmann::json& j) {
  const fs::path tmp =
      path.parent_path() / fmt::format(".{}.{}", path.filename().string(), getpid());
  {
    std::ofstream out(tmp, std::ios::trunc);
    out << j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << '\n';
    out.flush();
    if (!out) return Status(Code::io_error, fmt::format("writing {} failed", path.string()));
  }
  std::error_code ec;
  fs::rename(tmp, path, ec);
  if (ec)
    return Status(Code::io_error, fmt::format("cannot write {}: {}", path.string(), ec.message()));
  return Status{};
}

}  // namespace

Result<TraceRun> run_trace(const nvml::Session& session, const TraceOptions& o, std::ostream& out,
                           std::ostream& err) {
  if (o.command.empty()) return Status(Code::invalid_argument, "no command given (-- CMD ARGS...)");
  if (!o.whole_run && (o.steps == 0 || !(o.duration_s > 0))) {
    return Status(Code::invalid_argument,
                  "the trace window has no length (--steps and --duration "
                  "must be positive; --duration 0 records the whole run)");
  }
  GPUSCOPE_RETURN_IF_ERROR(telemetry::check_command(o.command));
  GPUSCOPE_ASSIGN_OR_RETURN(std::string library, locate_library(o.inject_library));
  std::optional<std::string> shim;
  if (o.shim) {
    shim = locate_shim(o.shim_dir);
    if (!shim)
      err << "gpuscope: warning: the Python step shim was not found (GPUSCOPE_SHIM_DIR); "
             "steps come from NVTX marks or the kernel sequence\n";
  }
  GPUSCOPE_RETURN_IF_ERROR(prepare_folder(o.out_dir));
  if (const char* existing = std::getenv("CUDA_INJECTION64_PATH");
      existing != nullptr && *existing) {
    err << "gpuscope: warning: CUDA_INJECTION64_PATH was set (" << existing
        << "); gpuscope's injection library replaces it for the command\n";
  }

  telemetry::MonitorOptions mo;
  mo.sampler.interval = std::chrono::milliseconds(o.interval_ms);
  mo.sampler.gpus = o.gpus;
  mo.jsonl_path = (o.out_dir / "telemetry.jsonl").string();
  mo.view = telemetry::View::none;
  mo.command = o.command;
  mo.command_env = environment(o, library, shim, o.out_dir);
  mo.command_stdout_to_err = o.command_stdout_to_err;
  std::mutex tracker_mutex;
  std::unique_ptr<detail::ThreadCpuTracker> tracker;
  mo.while_running = [&](pid_t pid) {
    std::lock_guard lock(tracker_mutex);
    if (!tracker) tracker = std::make_unique<detail::ThreadCpuTracker>(pid);
    tracker->sample();
  };

  TraceRun run;
  run.out_dir = o.out_dir;
  GPUSCOPE_ASSIGN_OR_RETURN(run.monitor, telemetry::run_monitor(session, mo, out, err));
  std::vector<detail::ThreadUse> threads;
  if (tracker) threads = tracker->use();

  const pid_t command_pid = run.monitor.command ? static_cast<pid_t>(run.monitor.command->pid) : 0;
  GPUSCOPE_ASSIGN_OR_RETURN(
      Analysis a, analyse(o.out_dir, command_pid, threads, o.step_range, o.max_trace_events));
  run.processes_traced = a.processes;
  run.notes = a.notes;
  run.trace_events = a.events;
  run.trace_events_dropped = a.dropped;
  run.summary = std::move(a.summary);
  run.summary["command"] = o.command;
  if (run.monitor.command) {
    const ProcessExit& e = run.monitor.command->exit;
    nlohmann::json exit = {{"wall_s", e.wall_seconds}, {"describe", e.describe()}};
    if (e.exit_code) exit["code"] = *e.exit_code;
    if (e.term_signal) exit["signal"] = *e.term_signal;
    run.summary["exit"] = exit;
  }
  run.summary["telemetry"] = telemetry::summary_to_json(run.monitor);
  GPUSCOPE_RETURN_IF_ERROR(write_json(o.out_dir / "summary.json", run.summary));
  return run;
}

Result<nlohmann::json> analyse_trace_dir(const fs::path& dir,
                                         std::optional<std::string> step_range) {
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) {
    return Status(Code::not_found, fmt::format("{} is not a trace folder", dir.string()));
  }
  GPUSCOPE_ASSIGN_OR_RETURN(Analysis a, analyse(dir, 0, {}, step_range, 1'000'000));
  return a.summary;
}

void print_trace(const TraceRun& run, std::ostream& out) {
  detail::print_summary_json(run.summary, out);
  for (const std::string& note : run.notes) out << "Note: " << note << '\n';
  out << fmt::format(
      "Wrote {}: trace.json (open in ui.perfetto.dev or chrome://tracing), "
      "summary.json, telemetry.jsonl, {} record file(s)\n",
      run.out_dir.string(), run.processes_traced);
}

}  // namespace gpuscope::trace
