// diagnose_dir: a trace folder -> per-process observations -> the rules -> merged, ranked
// findings; and the diagnosis's JSON form.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <set>

#include "analysis/diagnose_rules.h"
#include "analysis/observe.h"
#include "gpuscope/datasheet.h"
#include "gpuscope/diagnose.h"
#include "trace/summary_json.h"
#include "trace/timeline_build.h"

namespace gpuscope::analysis {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;
using trace::ProcessTrace;

bool is_record_file(const fs::path& p) {
  const std::string name = p.filename().string();
  return name.rfind("gpuscope-trace-", 0) == 0 && p.extension() == ".jsonl";
}

// summary.json, when there is a readable one (it carries the command, the threads' CPU and the
// monitor's view of which processes were the command's).
std::optional<json> read_summary(const fs::path& dir) {
  std::ifstream in(dir / "summary.json");
  if (!in) return std::nullopt;
  json j = json::parse(in, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return std::nullopt;
  return j;
}

std::vector<trace::detail::ThreadUse> threads_from(const json& summary) {
  std::vector<trace::detail::ThreadUse> out;
  const json threads = summary.value("cpu", json::object()).value("threads", json::array());
  for (const json& t : threads) {
    if (!t.is_object()) continue;
    trace::detail::ThreadUse u;
    u.pid = t.value("pid", 0);
    u.tid = t.value("tid", 0);
    u.thread_name = t.value("thread", "");
    u.process_name = t.value("process", "");
    const std::string role = t.value("role", "other");
    u.role = role == "main"         ? trace::detail::ThreadRole::main
             : role == "descendant" ? trace::detail::ThreadRole::descendant
                                    : trace::detail::ThreadRole::other;
    u.cpu_s = t.value("cpu_s", 0.0);
    out.push_back(u);
  }
  return out;
}

// What summary.json adds to the record files. A summary.json of the wrong shape is ignored
// (with a note), never fatal: the record files are the trace.
struct SummaryFacts {
  std::vector<std::string> command;
  std::map<unsigned, std::set<unsigned>> command_pids_by_gpu;
  std::map<unsigned, double> command_memory_peak_by_gpu;
  std::vector<trace::detail::ThreadUse> threads;
  std::optional<double> wall_s;
};

std::optional<SummaryFacts> facts_from(const json& summary) {
  try {
    SummaryFacts f;
    f.command = summary.value("command", std::vector<std::string>{});
    const json tel = summary.value("telemetry", json::object());
    for (const json& g : tel.value("gpus", json::array())) {
      if (!g.is_object() || !g.contains("index") || !g["index"].is_number_unsigned()) continue;
      const unsigned index = g["index"].get<unsigned>();
      for (const json& pid : g.value("command_pids", json::array())) {
        if (pid.is_number_unsigned()) f.command_pids_by_gpu[index].insert(pid.get<unsigned>());
      }
      if (g.contains("command_memory_peak_bytes") && g["command_memory_peak_bytes"].is_number())
        f.command_memory_peak_by_gpu[index] = g["command_memory_peak_bytes"].get<double>();
    }
    f.threads = threads_from(summary);
    if (summary.contains("exit")) f.wall_s = summary.at("exit").value("wall_s", 0.0);
    return f;
  } catch (const json::exception&) {
    return std::nullopt;
  }
}

detail::Rates rates_for(const DiagnoseOptions& options,
                        const std::vector<detail::GpuObservations>& gpus, std::optional<int> gpu) {
  detail::Rates r;
  auto take = [&](const std::map<Precision, double>& m, std::string source) {
    if (auto it = m.find(Precision::fp32); it != m.end()) r.fp32 = it->second;
    if (auto it = m.find(Precision::tf32); it != m.end()) r.tf32 = it->second;
    if (auto it = m.find(Precision::bf16); it != m.end()) r.bf16 = it->second;
    r.source = std::move(source);
  };
  std::map<Precision, double> datasheet;
  std::string model;
  for (const detail::GpuObservations& g : gpus) {
    if (gpu && g.gpu != *gpu) continue;
    GpuDescription d;
    d.nvml_name = g.name;
    if (g.memory_total_bytes)
      d.memory_total_bytes = static_cast<std::uint64_t>(*g.memory_total_bytes);
    if (auto peak = find_datasheet(d)) {
      datasheet = peak->flops_per_s;
      model = peak->model;
    }
    break;
  }
  if (!options.measured_rates.empty()) {
    // Burn measures what it was asked to; the datasheet fills the precisions it did not.
    std::map<Precision, double> merged = options.measured_rates;
    for (const auto& [p, v] : datasheet) merged.emplace(p, v);
    take(merged, datasheet.empty() ? "burn (measured)" : "burn (measured), datasheet " + model);
  } else if (!datasheet.empty()) {
    take(datasheet, "datasheet " + model);
  }
  return r;
}

std::string subject_of(const ProcessTrace& p, std::optional<int> gpu, bool several) {
  std::string s =
      several ? fmt::format("rank pid {}", p.header.pid) : fmt::format("pid {}", p.header.pid);
  if (gpu) s += fmt::format(" (GPU {})", *gpu);
  return s;
}

// The NVML index a process ran on: where the monitor saw it, else its CUDA device.
std::optional<int> gpu_of(const ProcessTrace& p, const detail::TelemetryContext& c) {
  for (const auto& [gpu, pids] : c.command_pids_by_gpu) {
    if (pids.count(static_cast<unsigned>(p.header.pid))) return static_cast<int>(gpu);
  }
  if (!p.kernels.empty()) return static_cast<int>(p.kernels.front().device);
  return std::nullopt;
}

// The first step of a window misses the kernels launched before it opened (CUPTI records only
// launches made while it is on), which a GPU-bound program still runs then: its GPU looks idle.
// With at least three steps in the window, the analysis starts at the second.
void skip_first_window_step(trace::detail::Timeline& t, const std::string& step_mark) {
  if (t.window_end_ns <= t.window_start_ns) return;
  std::vector<std::int64_t> inside;
  for (const trace::detail::Mark& m : t.marks) {
    if (m.pid == t.main_pid && t.names[m.name] == step_mark && m.at_ns >= t.window_start_ns &&
        m.at_ns <= t.window_end_ns)
      inside.push_back(m.at_ns);
  }
  if (inside.size() < 4) return;
  std::sort(inside.begin(), inside.end());
  t.window_start_ns = inside[1];
}

std::map<Precision, double> rates_from_burn(const json& burn) {
  std::map<Precision, double> rates;
  if (!burn.is_object()) return rates;
  for (const json& target : burn.value("targets", json::array())) {
    if (!target.is_object()) continue;
    for (const json& g : target.value("gemm", json::array())) {
      if (!g.is_object() || g.value("status", "") != "measured") continue;
      auto p = parse_precision(g.value("precision", ""));
      const json flops = g.value("flop_per_s", json::object());
      if (!p || !flops.is_object() || !flops.contains("median") || !flops["median"].is_number())
        continue;
      const double v = flops["median"].get<double>();
      rates[*p] = std::max(rates[*p], v);
    }
    break;  // the first GPU's
  }
  return rates;
}

}  // namespace

Result<Diagnosis> diagnose_dir(const fs::path& dir, const DiagnoseOptions& options) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) {
    return Status(Code::not_found, fmt::format("{}: no such folder", dir.string()));
  }
  if (!fs::is_directory(dir, ec)) {
    return Status(Code::invalid_argument,
                  fmt::format("{} is not a trace folder (a file); give the folder `gpuscope trace "
                              "-o DIR` or `gpuscope diagnose -o DIR` wrote",
                              dir.string()));
  }
  std::vector<fs::path> files;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (is_record_file(entry.path())) files.push_back(entry.path());
  }
  std::sort(files.begin(), files.end());
  const std::optional<json> summary = read_summary(dir);
  if (files.empty() && !summary) {
    return Status(Code::invalid_argument,
                  fmt::format("{} is not a trace folder: it holds no gpuscope-trace-*.jsonl record "
                              "file and no summary.json (record one with `gpuscope diagnose -o "
                              "DIR -- CMD`)",
                              dir.string()));
  }
  std::vector<ProcessTrace> processes;
  for (const fs::path& f : files) {
    auto p = trace::read_process_trace(f);
    if (!p.ok()) {
      return Status(p.status().code(),
                    fmt::format("{}: damaged record file: {}", f.string(), p.status().message()));
    }
    processes.push_back(std::move(*p));
  }
  std::sort(processes.begin(), processes.end(), [](const ProcessTrace& a, const ProcessTrace& b) {
    return a.header.pid < b.header.pid;
  });

  Diagnosis d;
  d.dir = dir;
  SummaryFacts facts;
  if (summary) {
    if (auto f = facts_from(*summary)) {
      facts = std::move(*f);
    } else {
      d.notes.push_back(
          "summary.json is not what gpuscope trace writes: ignored (no CPU per "
          "thread, no command)");
    }
  }
  d.command = facts.command;
  std::vector<const ProcessTrace*> gpu_processes;
  for (const ProcessTrace& p : processes) {
    if (!p.kernels.empty()) gpu_processes.push_back(&p);
    if (p.malformed_lines > 0) {
      d.notes.push_back(fmt::format("{}: {} damaged line(s) skipped", p.path.filename().string(),
                                    p.malformed_lines));
    }
  }
  if (gpu_processes.empty()) {
    std::string why = "no GPU work seen";
    for (const std::string& n : trace::detail::trace_notes({}, processes)) why += "; " + n;
    return Status(Code::not_found,
                  fmt::format("{}: {} (no kernel was recorded in any of {} record file(s))",
                              dir.string(), why, processes.size()));
  }

  detail::TelemetryContext tc;
  for (const ProcessTrace& p : processes)
    tc.command_pids.insert(static_cast<unsigned>(p.header.pid));
  for (const auto& [gpu, pids] : facts.command_pids_by_gpu) {
    tc.command_pids.insert(pids.begin(), pids.end());
    tc.command_pids_by_gpu[gpu].insert(pids.begin(), pids.end());
  }
  tc.command_memory_peak_by_gpu = facts.command_memory_peak_by_gpu;
  const fs::path telemetry_file = dir / "telemetry.jsonl";
  if (fs::exists(telemetry_file, ec)) {
    auto rec = telemetry::read_recording(telemetry_file.string());
    if (rec.ok()) {
      tc.recording = std::move(*rec);
    } else {
      d.notes.push_back("telemetry.jsonl unreadable (" + rec.status().message() +
                        "): no NVML evidence (throttling, memory, other processes)");
    }
  } else {
    d.notes.push_back("no telemetry.jsonl: no NVML evidence (throttling, memory, other processes)");
  }
  tc.origin_ns = static_cast<std::int64_t>(processes.front().header.origin_ns);
  tc.origin_unix_s = static_cast<double>(processes.front().header.origin_realtime_ns) * 1e-9;
  // Every traced process used the GPUs where its kernels ran (the monitor may have missed it).
  for (const ProcessTrace* p : gpu_processes) {
    if (auto g = gpu_of(*p, tc))
      tc.command_pids_by_gpu[static_cast<unsigned>(*g)].insert(
          static_cast<unsigned>(p->header.pid));
  }

  const std::vector<trace::detail::ThreadUse> threads = facts.threads;
  const bool several = gpu_processes.size() > 1;
  trace::detail::SummaryOptions so;
  so.step_range = options.step_range;
  std::vector<Finding> all;
  std::vector<detail::GpuObservations> job_gpus;
  std::vector<detail::Observations> observed;  // one per GPU process, as d.processes
  for (const ProcessTrace* p : gpu_processes) {
    // One GPU process: every record file (its workers' too) on one timeline. Several (ranks):
    // each on its own, so each rank's steps and idle time are its own.
    std::vector<ProcessTrace> mine;
    if (several) {
      mine.push_back(*p);
    } else {
      mine = processes;
    }
    trace::detail::Timeline t =
        trace::detail::build_timeline(mine, static_cast<pid_t>(p->header.pid));
    const std::optional<double> untraced = detail::untraced_step_s(t, so.step_mark);
    skip_first_window_step(t, so.step_mark);
    const trace::detail::TraceSummary s = trace::detail::summarize(t, threads, so);
    const auto [from, to] = detail::steps_span(t, s, so.step_mark);
    std::vector<detail::GpuObservations> gpus = detail::observe_gpus(tc, from, to);
    if (job_gpus.empty()) job_gpus = gpus;
    const std::optional<int> gpu = gpu_of(*p, tc);
    std::optional<detail::GpuObservations> mine_gpu;
    for (const auto& g : gpus) {
      if (gpu && g.gpu == *gpu) mine_gpu = g;
    }
    detail::Observations o = detail::observe(t, s, mine_gpu, untraced);
    o.gpu = gpu;
    o.subject = subject_of(*p, gpu, several);
    o.rates = rates_for(options, gpus, gpu);
    o.run_wall_s = facts.wall_s;
    if (d.rates_source.empty()) d.rates_source = o.rates.source;

    ProcessDiagnosis pd;
    pd.subject = o.subject;
    pd.pid = p->header.pid;
    pd.gpu = gpu;
    if (mine_gpu) pd.gpu_name = mine_gpu->name;
    pd.step_source = trace::detail::step_source_name(s.step_source);
    pd.steps = s.steps.size();
    pd.step_s = o.step_s;
    pd.traced_step_s = o.traced_step_s;
    pd.gpu_busy_share = o.step_s > 0 ? std::min(1.0, o.busy_s / o.step_s) : 0;
    detail::chart_data(t, s, 3, pd);
    if (o.traced_step_s > 1.1 * o.step_s) {
      // Tracing slows a program whose host sets its pace (launch-bound, or a slow host): CUPTI
      // costs the host per launch and per CUDA call. A light trace records no calls and costs
      // about half (bench/RESULTS.md, sessions 11-12).
      d.notes.push_back(fmt::format(
          "{}: tracing slowed its steps from {:.2f} ms (untraced steps) to {:.2f} ms; the "
          "gains are computed on the untraced step time{}",
          o.subject, o.step_s * 1e3, o.traced_step_s * 1e3,
          s.syncs_recorded ? " (its host sets its pace, and tracing costs the host per CUDA "
                             "call: --light records no synchronizations or CUDA calls and "
                             "costs such a program less)"
                           : ""));
    }
    if (!s.syncs_recorded) {
      d.notes.push_back(o.subject +
                        ": a light trace (--light): synchronizations and CUDA calls were not "
                        "recorded; a wait every step shows only as a small copy to the host");
    }
    if (s.step_source == trace::detail::StepSource::none) {
      d.notes.push_back(o.subject +
                        ": no steps found (no step marks, no repeating kernel sequence): the "
                        "window is analysed as one step");
    }
    observed.push_back(std::move(o));
    d.processes.push_back(std::move(pd));
  }
  // The rules, once every rank is observed: a rank's exposed communication counts its wait for
  // the slowest rank apart.
  detail::share_out_waits(observed);
  for (std::size_t i = 0; i < observed.size(); ++i) {
    ProcessDiagnosis& pd = d.processes[i];
    pd.findings = detail::run_rules(observed[i]);
    all.insert(all.end(), pd.findings.begin(), pd.findings.end());
    const bool healthy_subject = std::none_of(pd.findings.begin(), pd.findings.end(), is_major);
    if (healthy_subject && !several) all.push_back(detail::healthy(observed[i]));
    if (healthy_subject && several) pd.findings.push_back(detail::healthy(observed[i]));
  }
  if (auto imbalance = detail::rank_imbalance(observed)) all.push_back(*imbalance);
  if (auto idle = detail::idle_gpus(job_gpus)) all.push_back(*idle);
  d.findings = merge_same(std::move(all));
  if (several && std::none_of(d.findings.begin(), d.findings.end(), is_major)) {
    // Every rank healthy: one healthy finding listing them.
    for (const ProcessDiagnosis& pd : d.processes) {
      for (const Finding& f : pd.findings)
        if (f.id == "healthy") d.findings.push_back(f);
    }
    d.findings = merge_same(std::move(d.findings));
  }
  rank(d.findings);
  // With nothing major, the verdict leads the notes (it exists only then).
  std::stable_partition(d.findings.begin(), d.findings.end(),
                        [](const Finding& f) { return f.id == "healthy"; });
  return d;
}

json diagnosis_to_json(const Diagnosis& d) {
  json j;
  j["kind"] = "gpuscope.diagnose";
  j["schema_version"] = kDiagnoseSchemaVersion;
  j["dir"] = d.dir.string();
  j["command"] = d.command;
  j["findings"] = to_json(d.findings);
  json procs = json::array();
  for (const ProcessDiagnosis& p : d.processes) {
    json per_step = json::array();
    for (const StepBreakdown& s : p.per_step) {
      per_step.push_back({{"wall_s", s.wall_s},
                          {"gpu_busy_s", s.gpu_busy_s},
                          {"data_wait_s", s.data_wait_s},
                          {"sync_s", s.sync_s}});
    }
    json idle = json::array();
    for (const auto& [gap, seconds] : p.idle) idle.push_back({{"gap", gap}, {"seconds", seconds}});
    json e = {{"subject", p.subject},
              {"pid", p.pid},
              {"step_source", p.step_source},
              {"steps", p.steps},
              {"step_s", p.step_s},
              {"traced_step_s", p.traced_step_s},
              {"gpu_busy_share", p.gpu_busy_share},
              {"per_step", per_step},
              {"idle", idle},
              {"findings", to_json(p.findings)}};
    if (p.gpu) e["gpu"] = *p.gpu;
    procs.push_back(std::move(e));
  }
  j["processes"] = procs;
  j["notes"] = d.notes;
  j["rates_source"] = d.rates_source;
  return j;
}

std::map<Precision, double> rates_from_burn_json(const json& burn) {
  try {
    return rates_from_burn(burn);
  } catch (const json::exception&) {
    return {};
  }
}

}  // namespace gpuscope::analysis
