#include "trace/trace_export.h"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <set>

#include "trace/kernel_class.h"

namespace gpuscope::trace::detail {
namespace {

std::string bytes_text(std::uint64_t bytes) {
  if (bytes >= (1ull << 20))
    return fmt::format("{:.1f} MiB", static_cast<double>(bytes) / (1 << 20));
  if (bytes >= (1ull << 10))
    return fmt::format("{:.1f} KiB", static_cast<double>(bytes) / (1 << 10));
  return fmt::format("{} B", bytes);
}

std::string copy_name(const GpuActivity& a) {
  if (a.kind == GpuActivity::Kind::memset) return "memset " + bytes_text(a.bytes);
  return std::string(cupti_copy_name(a.copy)) + host_memory_suffix(a) + " " + bytes_text(a.bytes);
}

std::int64_t origin_of(const Timeline& t) {
  std::int64_t origin =
      t.window_start_ns > 0 ? t.window_start_ns : std::numeric_limits<std::int64_t>::max();
  for (const GpuActivity& a : t.gpu) origin = std::min(origin, a.start_ns);
  for (const HostInterval& h : t.host) origin = std::min(origin, h.start_ns);
  for (const Mark& m : t.marks) origin = std::min(origin, m.at_ns);
  return origin == std::numeric_limits<std::int64_t>::max() ? 0 : origin;
}

}  // namespace

ExportCounts export_chrome_trace(const Timeline& t, const TraceSummary& summary,
                                 const std::vector<CounterSample>& counters,
                                 const ExportOptions& options, std::ostream& out) {
  ChromeTraceWriter w(out, origin_of(t), options.limits);

  // Track names first (metadata events are never dropped).
  std::set<std::pair<int, std::uint32_t>> streams;
  for (const GpuActivity& a : t.gpu) streams.insert({a.device, a.stream});
  std::set<int> devices;
  for (const auto& [device, stream] : streams) devices.insert(device);
  for (const CounterSample& c : counters) devices.insert(c.device);
  for (int device : devices)
    w.process_name(kGpuTrackPid + device, fmt::format("GPU {}", device), device);
  for (const auto& [device, stream] : streams) {
    w.thread_name(kGpuTrackPid + device, stream, fmt::format("stream {}", stream),
                  static_cast<int>(stream));
  }
  std::set<std::pair<pid_t, pid_t>> threads, range_threads;
  for (const HostInterval& h : t.host) {
    (h.kind == HostInterval::Kind::range || h.kind == HostInterval::Kind::data_wait ? range_threads
                                                                                    : threads)
        .insert({h.pid, h.tid});
  }
  for (const Mark& m : t.marks) threads.insert({m.pid, m.tid});
  std::set<pid_t> pids;
  for (const auto& [pid, tid] : threads) pids.insert(pid);
  for (const auto& [pid, tid] : range_threads) pids.insert(pid);
  if (!summary.steps.empty()) pids.insert(t.main_pid);
  for (pid_t pid : pids) {
    w.process_name(pid,
                   pid == t.main_pid ? fmt::format("process {} (observed)", pid)
                                     : fmt::format("process {}", pid),
                   1000 + static_cast<int>(pid == t.main_pid ? 0 : 1));
  }
  for (const auto& [pid, tid] : threads) {
    w.thread_name(pid, tid, tid == pid ? "main thread" : fmt::format("thread {}", tid), 2);
  }
  for (const auto& [pid, tid] : range_threads) {
    w.thread_name(
        pid, tid + kRangeTrackOffset,
        tid == pid ? "main thread: NVTX ranges" : fmt::format("thread {}: NVTX ranges", tid), 3);
  }
  constexpr std::int64_t kStepsTid = 0;
  if (!summary.steps.empty()) w.thread_name(t.main_pid, kStepsTid, "steps", 0);

  // Steps first: the few most useful events must survive the cap.
  for (std::size_t i = 0; i < summary.steps.size(); ++i) {
    const StepStats& s = summary.steps[i];
    nlohmann::json args = {
        {"wall_ms", s.wall_s * 1e3},
        {"gpu_busy_ms", s.gpu_busy_s * 1e3},
        {"data_wait_ms", s.data_wait_s * 1e3},
        {"syncs", summary.syncs_recorded ? nlohmann::json(s.syncs) : nlohmann::json(nullptr)},
        {"kernels", s.kernels},
        {"copies", s.copies}};
    w.complete(t.main_pid, kStepsTid, fmt::format("step {}", i), "step", s.start_ns,
               s.end_ns - s.start_ns, &args);
  }
  for (const Mark& m : t.marks) w.instant(m.pid, m.tid, t.names[m.name], "nvtx", m.at_ns);
  for (const HostInterval& h : t.host) {
    if (h.kind == HostInterval::Kind::range || h.kind == HostInterval::Kind::data_wait) {
      w.complete(h.pid, h.tid + kRangeTrackOffset, t.names[h.name],
                 h.kind == HostInterval::Kind::data_wait ? "data_wait" : "nvtx", h.start_ns,
                 h.end_ns - h.start_ns);
    } else if (h.kind == HostInterval::Kind::sync) {
      w.complete(h.pid, h.tid, t.names[h.name], "sync", h.start_ns, h.end_ns - h.start_ns);
    }
  }
  for (const GpuActivity& a : t.gpu) {
    if (a.kind == GpuActivity::Kind::kernel) {
      const KernelClass c = classify_kernel(t.names[a.name]);
      nlohmann::json args = {{"kind", kernel_kind_name(c.kind)}, {"correlation", a.correlation}};
      if (c.precision != MathPrecision::unknown)
        args["precision"] = math_precision_name(c.precision);
      if (a.graph) args["graph"] = *a.graph;
      w.complete(kGpuTrackPid + a.device, a.stream, t.names[a.name], "kernel", a.start_ns,
                 a.end_ns - a.start_ns, &args);
    } else {
      nlohmann::json args = {{"bytes", a.bytes}};
      w.complete(kGpuTrackPid + a.device, a.stream, copy_name(a),
                 a.kind == GpuActivity::Kind::memset ? "memset" : "memcpy", a.start_ns,
                 a.end_ns - a.start_ns, &args);
    }
  }
  for (const CounterSample& c : counters) {
    for (const auto& [name, value] : c.values) {
      w.counter(kGpuTrackPid + c.device, name, c.at_ns, {{"value", value}});
    }
  }
  if (options.api_calls) {
    for (const HostInterval& h : t.host) {
      if (h.kind != HostInterval::Kind::api) continue;
      nlohmann::json args = {{"correlation", h.correlation}};
      w.complete(h.pid, h.tid, t.names[h.name], "cuda_api", h.start_ns, h.end_ns - h.start_ns,
                 &args);
    }
  }
  w.finish(options.metadata);
  return {w.events_written(), w.events_dropped()};
}

}  // namespace gpuscope::trace::detail
