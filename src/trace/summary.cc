#include "trace/summary.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <limits>
#include <optional>
#include <tuple>
#include <unordered_map>

#include "trace/intervals.h"
#include "trace/kernel_class.h"
#include "trace/step_period.h"

namespace gpuscope::trace::detail {
namespace {

constexpr double kNs = 1e-9;

std::int64_t overlap(std::int64_t a0, std::int64_t a1, std::int64_t b0, std::int64_t b1) {
  return std::max<std::int64_t>(0, std::min(a1, b1) - std::max(a0, b0));
}

double percentile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  const double rank = p * static_cast<double>(values.size() - 1);
  const auto lo = static_cast<std::size_t>(std::floor(rank));
  const auto hi = static_cast<std::size_t>(std::ceil(rank));
  return values[lo] + (values[hi] - values[lo]) * (rank - static_cast<double>(lo));
}

std::string copy_key(const GpuActivity& a) {
  if (a.kind == GpuActivity::Kind::memset) return "memset";
  return std::string(copy_kind_name(a.copy)) + host_memory_suffix(a);
}

// Step boundaries from marks or ranges of the main process (any process when it has none).
std::vector<std::int64_t> boundaries_from(const Timeline& t, const SummaryOptions& o,
                                          StepSource& source) {
  std::vector<std::int64_t> starts;
  std::int64_t last_end = 0;
  auto collect = [&](bool main_only) {
    starts.clear();
    if (o.step_range) {
      for (const HostInterval& h : t.host) {
        if (h.kind != HostInterval::Kind::range || t.names[h.name] != *o.step_range) continue;
        if (main_only && h.pid != t.main_pid) continue;
        starts.push_back(h.start_ns);
        last_end = std::max(last_end, h.end_ns);
      }
    } else {
      for (const Mark& m : t.marks) {
        if (t.names[m.name] != o.step_mark) continue;
        if (main_only && m.pid != t.main_pid) continue;
        starts.push_back(m.at_ns);
      }
    }
  };
  collect(true);
  if (starts.empty()) collect(false);
  std::sort(starts.begin(), starts.end());
  if (o.step_range && !starts.empty()) starts.push_back(std::max(last_end, starts.back()));
  if (starts.size() >= 2) source = o.step_range ? StepSource::range : StepSource::marks;
  return starts;
}

// The end of the step range (`name`) that starts at `start`, if one does.
std::optional<std::int64_t> range_end_at(const Timeline& t, const std::string& name,
                                         std::int64_t start) {
  for (const HostInterval& h : t.host) {
    if (h.kind == HostInterval::Kind::range && h.start_ns == start && t.names[h.name] == name)
      return h.end_ns;
  }
  return std::nullopt;
}

// When each GPU activity was launched: the start of the API call with its correlation id.
std::unordered_map<std::uint64_t, std::int64_t> launch_times(const Timeline& t) {
  std::unordered_map<std::uint64_t, std::int64_t> launch_at;
  for (const HostInterval& h : t.host) {
    if (h.kind == HostInterval::Kind::api && h.correlation != 0)
      launch_at[h.correlation] = h.start_ns;
  }
  return launch_at;
}

// When each step boundary was passed on the GPU as well as on the host: the boundary's own time
// or, when later, the end of the GPU work launched before it. A host far ahead of its GPU (CUDA
// graphs, nothing that waits) passes its marks long before their steps' work runs; the
// program's own CUDA events time the latter. Only work whose launch was recorded counts: without
// launch records (a light trace) the boundaries stand as the host passed them.
std::vector<std::int64_t> boundaries_on_gpu(
    const Timeline& t, const std::unordered_map<std::uint64_t, std::int64_t>& launch_at,
    const std::vector<std::int64_t>& bounds) {
  struct Launched {
    std::int64_t launch, start, end, latest_end;  // latest_end: of this and all launched before
  };
  std::vector<Launched> launched;
  for (const GpuActivity& a : t.gpu) {
    auto it = a.correlation != 0 ? launch_at.find(a.correlation) : launch_at.end();
    if (it != launch_at.end()) launched.push_back({it->second, a.start_ns, a.end_ns, a.end_ns});
  }
  std::sort(launched.begin(), launched.end(),
            [](const Launched& a, const Launched& b) { return a.launch < b.launch; });
  for (std::size_t i = 1; i < launched.size(); ++i)
    launched[i].latest_end = std::max(launched[i].latest_end, launched[i - 1].latest_end);
  std::vector<std::int64_t> ends;
  for (const std::int64_t b : bounds) {
    const auto after =
        std::lower_bound(launched.begin(), launched.end(), b,
                         [](const Launched& e, std::int64_t at) { return e.launch < at; });
    std::int64_t end = after == launched.begin() ? b : std::max(b, std::prev(after)->latest_end);
    // The first boundary: the GPU may still run work launched before the window, unrecorded.
    // The first work launched after the boundary then waits for it: the boundary is passed
    // when the GPU gets to that work, less the host's time from the boundary to its launch. A
    // wait of a launch's own latency (microseconds) is no such backlog.
    constexpr std::int64_t kBacklogNs = 100'000;
    if (ends.empty() && after != launched.end() && after->start - after->launch > kBacklogNs)
      end = std::max(end, b + after->start - after->launch);
    ends.push_back(end);
  }
  return ends;
}

std::vector<std::int64_t> boundaries_from_kernels(const Timeline& t, StepSource& source) {
  std::vector<const GpuActivity*> kernels;
  for (const GpuActivity& a : t.gpu) {
    if (a.kind == GpuActivity::Kind::kernel) kernels.push_back(&a);
  }
  std::sort(kernels.begin(), kernels.end(),
            [](const GpuActivity* a, const GpuActivity* b) { return a->start_ns < b->start_ns; });
  std::vector<std::uint32_t> names;
  std::vector<std::int64_t> gaps;
  std::int64_t busy_until = kernels.empty() ? 0 : kernels.front()->start_ns;
  for (const GpuActivity* k : kernels) {
    names.push_back(k->name);
    gaps.push_back(std::max<std::int64_t>(0, k->start_ns - busy_until));
    busy_until = std::max(busy_until, k->end_ns);
  }
  auto period = find_step_period(names, gaps);
  if (!period) return {};
  const std::unordered_map<std::uint64_t, std::int64_t> launch_at = launch_times(t);
  // Launch times when the API calls were recorded (the host's step), else the kernels' starts.
  auto time_of = [&](const GpuActivity* k) {
    auto it = k->correlation != 0 ? launch_at.find(k->correlation) : launch_at.end();
    return it != launch_at.end() ? it->second : k->start_ns;
  };
  std::vector<std::int64_t> result;
  // A step runs from its first kernel's launch to the next step's: the last one seen whole
  // has no next, so it is left out.
  for (std::size_t s = 0; s <= period->steps; ++s) {
    const std::size_t index = period->phase + s * period->period;
    if (index < kernels.size()) result.push_back(time_of(kernels[index]));
  }
  if (result.size() < 2 || !std::is_sorted(result.begin(), result.end())) return {};
  source = StepSource::kernel_period;
  return result;
}

}  // namespace

namespace {

// Each copy kind with its two names: ours and CUPTI's.
struct CopyKindNames {
  CopyKind kind;
  const char* name;
  const char* cupti;
};
constexpr CopyKindNames kCopyKinds[] = {
    {CopyKind::host_to_device, "host_to_device", "HtoD"},
    {CopyKind::device_to_host, "device_to_host", "DtoH"},
    {CopyKind::device_to_device, "device_to_device", "DtoD"},
    {CopyKind::host_to_host, "host_to_host", "HtoH"},
    {CopyKind::peer, "peer", "PtoP"},
    {CopyKind::other, "other", "copy"},
};

const CopyKindNames& names_of(CopyKind kind) {
  for (const CopyKindNames& n : kCopyKinds) {
    if (n.kind == kind) return n;
  }
  return kCopyKinds[std::size(kCopyKinds) - 1];
}

}  // namespace

const char* copy_kind_name(CopyKind kind) {
  return names_of(kind).name;
}

const char* cupti_copy_name(CopyKind kind) {
  return names_of(kind).cupti;
}

const char* host_memory_suffix(const GpuActivity& a) {
  if (a.kind != GpuActivity::Kind::memcpy) return "";
  if (a.copy != CopyKind::host_to_device && a.copy != CopyKind::device_to_host) return "";
  return a.pageable ? " pageable" : " pinned";
}

CopyKind copy_kind_from_cupti(std::string_view name) {
  for (const CopyKindNames& n : kCopyKinds) {
    if (n.kind != CopyKind::other && name == n.cupti) return n.kind;
  }
  return CopyKind::other;
}

const char* step_source_name(StepSource source) {
  switch (source) {
    case StepSource::none:
      return "none";
    case StepSource::marks:
      return "marks";
    case StepSource::range:
      return "range";
    case StepSource::kernel_period:
      return "kernel_period";
  }
  return "none";
}

std::uint32_t Timeline::intern(const std::string& s) {
  auto it = name_index.find(s);
  if (it != name_index.end()) return it->second;
  const auto id = static_cast<std::uint32_t>(names.size());
  names.push_back(s);
  name_index.emplace(s, id);
  return id;
}

TraceSummary summarize(const Timeline& t, const std::vector<ThreadUse>& threads,
                       const SummaryOptions& options) {
  TraceSummary s;
  s.syncs_recorded = t.syncs_recorded;
  auto bounds = boundaries_from(t, options, s.step_source);
  if (s.step_source == StepSource::none) {
    bounds = boundaries_from_kernels(t, s.step_source);
  } else {
    for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
      s.all_step_s.push_back(static_cast<double>(bounds[i + 1] - bounds[i]) * kNs);
    }
    // Only the steps inside the window have GPU records: those are the ones broken down.
    if (t.window_end_ns > t.window_start_ns) {
      std::vector<std::int64_t> inside;
      s.first_recorded_step = static_cast<std::size_t>(
          std::lower_bound(bounds.begin(), bounds.end(), t.recorded_from()) - bounds.begin());
      for (std::size_t i = 0; i < bounds.size(); ++i) {
        if (bounds[i] < t.window_start_ns || bounds[i] > t.window_end_ns) continue;
        if (inside.empty()) s.first_traced_step = i;
        inside.push_back(bounds[i]);
      }
      s.first_recorded_step = std::min(s.first_recorded_step, s.first_traced_step);
      bounds = std::move(inside);
      // Ranges: the last one inside ends inside too, though the next start lies beyond.
      if (s.step_source == StepSource::range && !bounds.empty()) {
        if (const auto end = range_end_at(t, *options.step_range, bounds.back());
            end && *end <= t.window_end_ns) {
          bounds.push_back(*end);
        }
      }
      if (bounds.size() < 2) {
        s.step_source = StepSource::none;
        bounds = boundaries_from_kernels(t, s.step_source);
      }
    }
  }

  // The span analysed: the steps' when there are steps, else the window (or what was recorded).
  std::int64_t from = t.window_start_ns, to = t.window_end_ns;
  if (to <= from) {
    from = std::numeric_limits<std::int64_t>::max();
    to = std::numeric_limits<std::int64_t>::min();
    for (const GpuActivity& a : t.gpu)
      from = std::min(from, a.start_ns), to = std::max(to, a.end_ns);
    for (const HostInterval& h : t.host)
      from = std::min(from, h.start_ns), to = std::max(to, h.end_ns);
    if (to <= from) from = to = 0;
  }
  if (s.step_source != StepSource::none) from = bounds.front(), to = bounds.back();
  s.window_s = static_cast<double>(to - from) * kNs;

  // GPU work belongs to the span (and to a step) by when it was launched, when its launch was
  // recorded, else by when it ran: a host far ahead of its GPU launches a step's kernels long
  // before they run.
  const std::unordered_map<std::uint64_t, std::int64_t> launch_at = launch_times(t);
  auto at = [&](const GpuActivity& a) {
    auto it = a.correlation != 0 ? launch_at.find(a.correlation) : launch_at.end();
    return it != launch_at.end() ? it->second : a.start_ns;
  };
  // The GPU's span, where its busy and idle time are counted. With steps: from their first
  // boundary to their last as the GPU passed them, so that the steps' times add up to it.
  // Without: the host's span, slid to end when the GPU finished the work launched in it.
  std::int64_t gpu_from = from, gpu_to = to;
  std::vector<std::int64_t> ends = bounds;
  if (s.step_source != StepSource::none) {
    ends = boundaries_on_gpu(t, launch_at, bounds);
    gpu_from = ends.front();
    gpu_to = ends.back();
    s.window_s = static_cast<double>(gpu_to - gpu_from) * kNs;
  } else {
    for (const GpuActivity& a : t.gpu) {
      const std::int64_t launched = at(a);
      if (launched >= from && launched < to) gpu_to = std::max(gpu_to, a.end_ns);
    }
    gpu_from = from + (gpu_to - to);
  }

  std::vector<Interval> busy, communication, other_work;
  std::map<int, std::vector<const GpuActivity*>> by_device;
  std::unordered_map<std::uint32_t, KernelClass> classes;
  const auto class_of = [&](const GpuActivity& a) -> const KernelClass& {
    auto c = classes.find(a.name);
    if (c == classes.end()) c = classes.emplace(a.name, classify_kernel(t.names[a.name])).first;
    return c->second;
  };
  const auto communicates = [&](const GpuActivity& a) {
    return a.kind == GpuActivity::Kind::kernel
               ? class_of(a).kind == KernelKind::communication
               : a.kind == GpuActivity::Kind::memcpy && a.copy == CopyKind::peer;
  };
  std::map<std::tuple<std::string, std::string, bool>, KernelTime> kernel_time;
  std::unordered_map<std::uint32_t, TopKernel> top;
  for (const GpuActivity& a : t.gpu) {
    if (a.end_ns > gpu_from && a.start_ns < gpu_to) {
      const Interval inside{std::max(a.start_ns, gpu_from), std::min(a.end_ns, gpu_to)};
      busy.push_back(inside);
      (communicates(a) ? communication : other_work).push_back(inside);
      by_device[a.device].push_back(&a);
    }
    const std::int64_t launched = at(a);
    if (launched < from || launched >= to) continue;
    const double seconds = static_cast<double>(a.end_ns - a.start_ns) * kNs;
    if (a.kind == GpuActivity::Kind::kernel) {
      ++s.kernels;
      s.kernel_s += seconds;
      if (a.graph) ++s.graph_kernels;
      const KernelClass& c = class_of(a);
      if (c.kind == KernelKind::communication) {
        ++s.communication_kernels;
        s.communication_s += seconds;
        s.communication_by_op[std::string(c.collective)] += seconds;
      }
      KernelTime& kt =
          kernel_time[{kernel_kind_name(c.kind), math_precision_name(c.precision), c.tensor_cores}];
      kt.kind = kernel_kind_name(c.kind);
      kt.precision = math_precision_name(c.precision);
      kt.tensor_cores = c.tensor_cores;
      ++kt.count;
      kt.seconds += seconds;
      TopKernel& tk = top[a.name];
      tk.name = t.names[a.name];
      ++tk.count;
      tk.seconds += seconds;
    } else {
      CopyStats& cs = s.copies[copy_key(a)];
      ++cs.count;
      cs.bytes += a.bytes;
      cs.seconds += seconds;
      if (communicates(a)) {
        ++s.communication_copies;
        s.communication_s += seconds;
        s.communication_by_op["peer_copy"] += seconds;
      }
    }
  }
  const std::vector<Interval> merged = merge(busy);
  s.gpu_busy_s = static_cast<double>(covered(merged, gpu_from, gpu_to)) * kNs;
  const std::vector<Interval> others = merge(std::move(other_work));
  for (const Interval& c : merge(std::move(communication))) {
    s.communication_exposed_s +=
        static_cast<double>((c.end - c.start) - covered(others, c.start, c.end)) * kNs;
  }
  s.gpu_busy_share = s.window_s > 0 ? s.gpu_busy_s / s.window_s : 0;
  s.mean_kernel_s = s.kernels > 0 ? s.kernel_s / static_cast<double>(s.kernels) : 0;
  for (auto& [key, kt] : kernel_time) s.kernel_time.push_back(kt);
  std::sort(s.kernel_time.begin(), s.kernel_time.end(),
            [](const KernelTime& a, const KernelTime& b) { return a.seconds > b.seconds; });
  for (auto& [id, tk] : top) s.top_kernels.push_back(tk);
  std::sort(s.top_kernels.begin(), s.top_kernels.end(),
            [](const TopKernel& a, const TopKernel& b) { return a.seconds > b.seconds; });
  if (s.top_kernels.size() > 10) s.top_kernels.resize(10);

  s.idle = {{"<10us", 10e-6, 0, 0},
            {"10us-100us", 100e-6, 0, 0},
            {"100us-1ms", 1e-3, 0, 0},
            {"1ms-10ms", 10e-3, 0, 0},
            {">=10ms", std::numeric_limits<double>::infinity(), 0, 0}};
  for (auto& [device, activities] : by_device) {
    s.devices.push_back(device);
    std::sort(activities.begin(), activities.end(),
              [](const GpuActivity* a, const GpuActivity* b) { return a->start_ns < b->start_ns; });
    // Idle and busy time add up to the span: the gaps at its two ends count too.
    auto add_gap = [&s](std::int64_t gap_ns) {
      if (gap_ns <= 0) return;
      const double gap = static_cast<double>(gap_ns) * kNs;
      for (IdleBucket& b : s.idle) {
        if (gap < b.upper_s) {
          ++b.gaps;
          b.seconds += gap;
          break;
        }
      }
    };
    std::int64_t busy_until = gpu_from;
    std::vector<Interval> device_busy;
    for (const GpuActivity* a : activities) {
      add_gap(a->start_ns - busy_until);
      busy_until = std::max(busy_until, a->end_ns);
      device_busy.push_back({std::max(a->start_ns, gpu_from), std::min(a->end_ns, gpu_to)});
    }
    add_gap(gpu_to - busy_until);
    s.device_busy_s[device] = static_cast<double>(total(merge(std::move(device_busy)))) * kNs;
  }

  for (const HostInterval& h : t.host) {
    const std::int64_t inside = overlap(h.start_ns, h.end_ns, from, to);
    if (h.kind == HostInterval::Kind::sync && h.start_ns >= from && h.start_ns < to) {
      ++s.syncs;
      s.sync_s += static_cast<double>(h.end_ns - h.start_ns) * kNs;
    } else if (h.kind == HostInterval::Kind::data_wait) {
      s.data_wait_s += static_cast<double>(inside) * kNs;
    }
  }

  for (std::size_t i = 0; i + 1 < bounds.size(); ++i) {
    StepStats st;
    st.start_ns = bounds[i];
    st.end_ns = bounds[i + 1];
    st.wall_s = static_cast<double>(ends[i + 1] - ends[i]) * kNs;
    std::vector<Interval> step_busy;  // the step's own GPU work, whenever it ran
    for (const GpuActivity& a : t.gpu) {
      const std::int64_t launched = at(a);
      if (launched < st.start_ns || launched >= st.end_ns) continue;
      step_busy.push_back({a.start_ns, a.end_ns});
      if (a.kind == GpuActivity::Kind::kernel) {
        ++st.kernels;
        st.kernel_s += static_cast<double>(a.end_ns - a.start_ns) * kNs;
      } else if (a.kind == GpuActivity::Kind::memcpy) {
        ++st.copies;
        st.copy_bytes += a.bytes;
        st.pageable_copies += a.pageable ? 1 : 0;
      }
    }
    const std::vector<Interval> step_merged = merge(std::move(step_busy));
    st.gpu_busy_s = static_cast<double>(total(step_merged)) * kNs;
    for (const HostInterval& h : t.host) {
      if (h.kind == HostInterval::Kind::data_wait) {
        st.data_wait_s +=
            static_cast<double>(overlap(h.start_ns, h.end_ns, st.start_ns, st.end_ns)) * kNs;
      } else if (h.kind == HostInterval::Kind::sync && h.start_ns >= st.start_ns &&
                 h.start_ns < st.end_ns) {
        ++st.syncs;
        st.sync_s += static_cast<double>(h.end_ns - h.start_ns) * kNs;
      }
    }
    s.steps.push_back(st);
  }
  if (!s.steps.empty()) {
    std::vector<double> walls;
    for (const StepStats& st : s.steps) walls.push_back(st.wall_s);
    s.step_median_s = percentile(walls, 0.5);
    s.step_p10_s = percentile(walls, 0.1);
    s.step_p90_s = percentile(walls, 0.9);
  }

  s.threads = threads;
  for (const auto& [role, seconds] : cpu_by_role(threads))
    s.cpu_s_by_role[role_name(role)] = seconds;
  return s;
}

}  // namespace gpuscope::trace::detail
