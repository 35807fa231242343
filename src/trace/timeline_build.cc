#include "trace/timeline_build.h"

#include <algorithm>
#include <limits>
#include <string>
#include <unordered_map>

namespace gpuscope::trace::detail {
namespace {

constexpr const char* kDataWaitRange = "gpuscope.data_wait";

// Correlation ids count per process: made unique across processes.
std::uint64_t unique(pid_t pid, std::uint32_t correlation) {
  if (correlation == 0) return 0;
  return (static_cast<std::uint64_t>(static_cast<std::uint32_t>(pid)) << 32) | correlation;
}

std::int64_t ns(std::uint64_t t) {
  return static_cast<std::int64_t>(t);
}

}  // namespace

pid_t main_process(const std::vector<ProcessTrace>& processes, pid_t command_pid) {
  const ProcessTrace* best = nullptr;
  auto rank = [command_pid](const ProcessTrace& p) {
    // The command itself first, then its direct children, then anything else.
    if (p.header.pid == command_pid) return 0;
    if (p.header.ppid == command_pid) return 1;
    return 2;
  };
  for (const ProcessTrace& p : processes) {
    if (best == nullptr || p.steps.size() > best->steps.size() ||
        (p.steps.size() == best->steps.size() && rank(p) < rank(*best))) {
      best = &p;
    }
  }
  return best != nullptr ? static_cast<pid_t>(best->header.pid) : command_pid;
}

Timeline build_timeline(const std::vector<ProcessTrace>& processes, pid_t command_pid) {
  Timeline t;
  t.main_pid = main_process(processes, command_pid);
  t.syncs_recorded = processes.empty() ||
                     std::any_of(processes.begin(), processes.end(), [](const ProcessTrace& p) {
                       return p.header.kinds.find("sync") != std::string::npos;
                     });
  for (const ProcessTrace& p : processes) {
    const auto pid = static_cast<pid_t>(p.header.pid);
    std::unordered_map<std::uint32_t, std::uint32_t> ids;  // file string id -> timeline id
    auto name = [&](std::uint32_t id) {
      auto it = ids.find(id);
      if (it != ids.end()) return it->second;
      const std::uint32_t interned = t.intern(std::string(p.name(id)));
      ids.emplace(id, interned);
      return interned;
    };
    // What every record of work on the GPU says (kernels, copies, memsets).
    auto gpu_work = [&](GpuActivity::Kind kind, const auto& w) {
      GpuActivity a;
      a.kind = kind;
      a.device = static_cast<int>(w.device);
      a.stream = w.stream;
      a.start_ns = ns(w.start_ns);
      a.end_ns = ns(w.end_ns);
      a.pid = pid;
      a.correlation = unique(pid, w.correlation);
      if (w.graph_id != 0) a.graph = w.graph_id;
      return a;
    };
    for (const KernelRecord& k : p.kernels) {
      GpuActivity a = gpu_work(GpuActivity::Kind::kernel, k);
      a.name = name(k.name);
      t.gpu.push_back(a);
    }
    for (const CopyRecord& c : p.copies) {
      GpuActivity a = gpu_work(GpuActivity::Kind::memcpy, c);
      a.bytes = c.bytes;
      a.copy = copy_kind_from_cupti(c.kind);
      a.pageable = c.src_memory == "pageable" || c.dst_memory == "pageable";
      t.gpu.push_back(a);
    }
    for (const MemsetRecord& m : p.memsets) {
      GpuActivity a = gpu_work(GpuActivity::Kind::memset, m);
      a.bytes = m.bytes;
      t.gpu.push_back(a);
    }
    std::unordered_map<std::uint32_t, pid_t> thread_of;  // correlation -> the calling thread
    for (const ApiCall& api : p.api_calls) {
      HostInterval h;
      h.kind = HostInterval::Kind::api;
      h.pid = pid;
      h.tid = static_cast<pid_t>(api.tid);
      h.start_ns = ns(api.start_ns);
      h.end_ns = ns(api.end_ns);
      h.name = name(api.name);
      h.correlation = unique(pid, api.correlation);
      if (api.correlation != 0) thread_of[api.correlation] = h.tid;
      t.host.push_back(h);
    }
    for (const SyncRecord& s : p.syncs) {
      // cudaStreamWaitEvent orders two streams on the device; the host does not wait.
      if (s.type == "stream_wait_event") continue;
      HostInterval h;
      h.kind = HostInterval::Kind::sync;
      h.pid = pid;
      auto it = thread_of.find(s.correlation);
      h.tid = it != thread_of.end() ? it->second : pid;
      h.start_ns = ns(s.start_ns);
      h.end_ns = ns(s.end_ns);
      h.name = t.intern("sync: " + s.type);
      h.correlation = unique(pid, s.correlation);
      t.host.push_back(h);
    }
    for (const NvtxRange& r : p.ranges) {
      HostInterval h;
      h.pid = pid;
      h.tid = static_cast<pid_t>(r.tid);
      h.start_ns = ns(r.start_ns);
      h.end_ns = ns(r.end_ns);
      h.name = name(r.name);
      h.kind = t.names[h.name] == kDataWaitRange ? HostInterval::Kind::data_wait
                                                 : HostInterval::Kind::range;
      t.host.push_back(h);
    }
    for (const NvtxMark& m : p.marks) {
      t.marks.push_back({pid, static_cast<pid_t>(m.tid), ns(m.ts_ns), name(m.name)});
    }
    const std::uint32_t step_mark =
        t.intern(p.header.step_mark.empty() ? "gpuscope.step" : p.header.step_mark);
    for (const StepMark& s : p.steps) {
      t.marks.push_back({pid, static_cast<pid_t>(s.tid), ns(s.ts_ns), step_mark});
    }
    if (pid == t.main_pid && p.window.begin_ns) {
      t.recording_start_ns = ns(*p.window.begin_ns);
      t.window_start_ns = ns(p.window.steps_begin_ns.value_or(*p.window.begin_ns));
      t.window_end_ns = p.window.end_ns ? ns(*p.window.end_ns) : 0;
    }
  }
  // A window still open when the process was killed ends with its last record.
  if (t.window_start_ns > 0 && t.window_end_ns <= t.window_start_ns) {
    std::int64_t last = t.window_start_ns;
    for (const GpuActivity& a : t.gpu) last = std::max(last, a.end_ns);
    for (const HostInterval& h : t.host) last = std::max(last, h.end_ns);
    t.window_end_ns = last;
  }
  return t;
}

}  // namespace gpuscope::trace::detail
