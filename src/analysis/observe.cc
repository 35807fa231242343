#include "analysis/observe.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <limits>
#include <set>
#include <tuple>
#include <unordered_map>
#include <utility>

#include "gpuscope/nvml.h"
#include "trace/intervals.h"
#include "trace/kernel_class.h"

namespace gpuscope::analysis::detail {
namespace {

using trace::detail::covered;
using trace::detail::GpuActivity;
using trace::detail::HostInterval;
using trace::detail::Interval;
using trace::detail::KernelKind;
using trace::detail::MathPrecision;
using trace::detail::merge;
using trace::detail::next_covered;
using trace::detail::Timeline;
using trace::detail::TraceSummary;

constexpr double kNs = 1e-9;
constexpr std::uint64_t kSmallCopyBytes = 64 * 1024;
constexpr std::size_t kChainMinKernels = 8;

// The GPU's busy time inside [from, to), merged.
std::vector<Interval> merged_busy(const Timeline& t, std::int64_t from, std::int64_t to) {
  std::vector<Interval> v;
  for (const GpuActivity& a : t.gpu) {
    if (a.end_ns <= from || a.start_ns >= to) continue;
    v.push_back({std::max(a.start_ns, from), std::min(a.end_ns, to)});
  }
  return merge(std::move(v));
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

bool is_layout_transpose(const std::string& lowered) {
  return lowered.find("nchwtonhwc") != std::string::npos ||
         lowered.find("nhwctonchw") != std::string::npos;
}

bool is_matmul(KernelKind k) {
  return k == KernelKind::gemm || k == KernelKind::convolution || k == KernelKind::attention;
}

// A loop that queues steps faster than its GPU runs them marks steps at the host's pace (on the
// H100 a no-tensor-cores loop marked 2.74 ms steps for 33 ms of GPU work each), and the work its
// traced steps launched runs after them. When the GPU work per step (matched by launch) is this
// much longer than the marked step, the GPU sets the pace.
constexpr double kHostAheadFactor = 1.5;

// Host ahead: the matrix time per step from the summary's kernel table (every kernel the traced
// steps launched), where the host's span holds only the first of them.
void matmul_from_kernel_table(const TraceSummary& s, double n, Observations& o) {
  double matmul = 0, tensor = 0, fp32 = 0, conv = 0, kernels = 0;
  for (const trace::detail::KernelTime& k : s.kernel_time) {
    const bool convolution = k.kind == trace::detail::kernel_kind_name(KernelKind::convolution);
    if (!convolution && k.kind != trace::detail::kernel_kind_name(KernelKind::gemm) &&
        k.kind != trace::detail::kernel_kind_name(KernelKind::attention))
      continue;
    matmul += k.seconds;
    kernels += static_cast<double>(k.count);
    if (k.tensor_cores) tensor += k.seconds;
    // As in observe(): not on tensor cores and not in a half, 8-bit or double type is fp32.
    if (!k.tensor_cores && k.precision != "fp16" && k.precision != "bf16" && k.precision != "fp8" &&
        k.precision != "fp64")
      fp32 += k.seconds;
    if (convolution) conv += k.seconds;
  }
  if (matmul / n > o.matmul_s) {
    o.matmul_s = matmul / n;
    o.matmul_kernels = kernels / n;
  }
  o.matmul_tensor_s = std::max(o.matmul_tensor_s, tensor / n);
  o.matmul_fp32_s = std::max(o.matmul_fp32_s, fp32 / n);
  o.conv_s = std::max(o.conv_s, conv / n);
}

bool is_launch(std::string_view api) {
  return api.find("Launch") != std::string_view::npos;
}

// A call that takes device memory from the driver or gives it back (cudaMalloc, cudaFree and
// the driver's cuMemAlloc, cuMemFree; not pinned host memory, not the stream-ordered *Async
// ones, which neither synchronize nor go to the driver each time).
enum class AllocatorCall { none, malloc, free };
AllocatorCall allocator_call(std::string_view api) {
  if (api.find("Host") != std::string_view::npos || api.find("Async") != std::string_view::npos)
    return AllocatorCall::none;
  if (api.starts_with("cudaMalloc") || api.starts_with("cuMemAlloc")) return AllocatorCall::malloc;
  if (api.starts_with("cudaFree") || api.starts_with("cuMemFree")) return AllocatorCall::free;
  return AllocatorCall::none;
}

// The optimizer chain of each step: the elementwise kernels launched after its last matrix
// kernel, in launch order (the kernels' start when launches were not recorded).
void optimizer_chains(const Timeline& t, const TraceSummary& s,
                      const std::unordered_map<std::uint32_t, trace::detail::KernelClass>& classes,
                      Observations& o) {
  if (s.steps.empty()) return;
  std::unordered_map<std::uint64_t, std::int64_t> launch_at;
  for (const HostInterval& h : t.host) {
    if (h.kind == HostInterval::Kind::api && h.correlation != 0)
      launch_at[h.correlation] = h.start_ns;
  }
  struct K {
    std::int64_t launched;
    const GpuActivity* a;
  };
  std::vector<K> kernels;
  for (const GpuActivity& a : t.gpu) {
    if (a.kind != GpuActivity::Kind::kernel) continue;
    auto it = a.correlation ? launch_at.find(a.correlation) : launch_at.end();
    kernels.push_back({it != launch_at.end() ? it->second : a.start_ns, &a});
  }
  std::sort(kernels.begin(), kernels.end(),
            [](const K& a, const K& b) { return a.launched < b.launched; });
  double count = 0, kernel_s = 0, span_s = 0, fused = 0;
  for (const trace::detail::StepStats& st : s.steps) {
    auto lo = std::lower_bound(kernels.begin(), kernels.end(), st.start_ns,
                               [](const K& k, std::int64_t x) { return k.launched < x; });
    auto hi = std::lower_bound(lo, kernels.end(), st.end_ns,
                               [](const K& k, std::int64_t x) { return k.launched < x; });
    auto last_matmul = hi;
    for (auto it = lo; it != hi; ++it) {
      const KernelKind kind = classes.at(it->a->name).kind;
      if (is_matmul(kind)) last_matmul = it;
      if (kind == KernelKind::optimizer) ++fused;
    }
    if (last_matmul == hi) continue;
    std::size_t n = 0;
    double ks = 0;
    std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = 0;
    for (auto it = last_matmul + 1; it != hi; ++it) {
      const KernelKind kind = classes.at(it->a->name).kind;
      if (kind != KernelKind::elementwise && kind != KernelKind::reduction) continue;
      ++n;
      ks += static_cast<double>(it->a->end_ns - it->a->start_ns) * kNs;
      first = std::min(first, it->a->start_ns);
      last = std::max(last, it->a->end_ns);
    }
    if (n < kChainMinKernels) continue;
    count += static_cast<double>(n);
    kernel_s += ks;
    span_s += static_cast<double>(last - first) * kNs;
  }
  const double steps = static_cast<double>(s.steps.size());
  o.optimizer_chain_kernels = count / steps;
  o.optimizer_chain_kernel_s = kernel_s / steps;
  o.optimizer_chain_span_s = span_s / steps;
  o.fused_optimizer_kernels = fused / steps;
}

// Seconds the GPU stays idle from `at` to its next work; 0 when it is busy at `at` or never again.
double idle_after(const std::vector<Interval>& busy, std::int64_t at) {
  const std::optional<std::int64_t> next = next_covered(busy, at);
  if (!next || covered(busy, at, at + 1) != 0) return 0;
  return static_cast<double>(*next - at) * kNs;
}

}  // namespace

std::pair<std::int64_t, std::int64_t> analysed_span(const Timeline& t, const TraceSummary& s) {
  if (!s.steps.empty()) return {s.steps.front().start_ns, s.steps.back().end_ns};
  if (t.window_end_ns > t.window_start_ns) return {t.window_start_ns, t.window_end_ns};
  std::int64_t from = std::numeric_limits<std::int64_t>::max(),
               to = std::numeric_limits<std::int64_t>::min();
  for (const GpuActivity& a : t.gpu) from = std::min(from, a.start_ns), to = std::max(to, a.end_ns);
  if (to <= from) return {0, 0};
  return {from, to};
}

std::pair<std::int64_t, std::int64_t> steps_span(const Timeline& t, const TraceSummary& s,
                                                 const std::string& step_mark) {
  std::vector<std::int64_t> marks;
  for (const trace::detail::Mark& m : t.marks) {
    if (m.pid == t.main_pid && t.names[m.name] == step_mark) marks.push_back(m.at_ns);
  }
  if (marks.size() < 2) return analysed_span(t, s);
  std::sort(marks.begin(), marks.end());
  // The first steps include start-up (cuDNN autotuning, compilation, the allocator growing).
  const std::size_t first = marks.size() >= 5 ? std::max<std::size_t>(1, marks.size() / 10) : 0;
  return {marks[first], marks.back()};
}

std::vector<GpuObservations> observe_gpus(const TelemetryContext& c, std::int64_t from_ns,
                                          std::int64_t to_ns) {
  std::vector<GpuObservations> out;
  if (!c.recording) return out;
  using telemetry::Metric;
  const double from_unix = static_cast<double>(from_ns - c.origin_ns) * kNs + c.origin_unix_s;
  const double to_unix = static_cast<double>(to_ns - c.origin_ns) * kNs + c.origin_unix_s;
  std::map<unsigned, std::vector<telemetry::GpuSample>> by_gpu;
  for (const telemetry::GpuSample& s : c.recording->samples) {
    if (!s.lost) by_gpu[s.gpu].push_back(s);
  }
  for (const telemetry::SampledGpu& id : c.recording->session.gpus) {
    GpuObservations g;
    g.gpu = static_cast<int>(id.target.gpu_index);
    g.name = id.target.name;
    if (id.target.memory_total_bytes)
      g.memory_total_bytes = static_cast<double>(*id.target.memory_total_bytes);
    g.power_limit_w = id.power_limit_w;
    auto pids = c.command_pids_by_gpu.find(id.target.gpu_index);
    g.used_by_command = pids != c.command_pids_by_gpu.end() && !pids->second.empty();
    const std::vector<telemetry::GpuSample>& samples = by_gpu[id.target.gpu_index];
    if (samples.empty()) {
      out.push_back(g);
      continue;
    }
    // The samples' own clock: t_s = unix_s - (their unix_s - t_s).
    const double shift = samples.front().unix_s - samples.front().t_s;
    double t0 = from_unix - shift, t1 = to_unix - shift;
    std::size_t inside = 0;
    for (const auto& s : samples) inside += s.t_s >= t0 && s.t_s <= t1;
    g.covers_steps = inside >= 3;
    if (!g.covers_steps) t0 = samples.front().t_s, t1 = samples.back().t_s;
    g.seconds = t1 - t0;
    auto mean = [&](Metric m) -> std::optional<double> {
      auto v = telemetry::mean_between(samples, m, t0, t1);
      return v ? std::optional<double>(v->value) : std::nullopt;
    };
    if (g.covers_steps) {
      g.sm_activity = mean(Metric::sm_activity);
      g.tensor_activity = mean(Metric::tensor_activity);
    }
    g.sm_clock_mean_hz = mean(Metric::sm_clock_hz);
    g.sm_clock_max_hz = telemetry::peak_between(samples, Metric::sm_clock_hz, samples.front().t_s,
                                                samples.back().t_s);
    g.power_mean_w = mean(Metric::power_w);
    if (!g.power_limit_w) g.power_limit_w = mean(Metric::power_limit_w);
    g.temperature_max_c = telemetry::peak_between(samples, Metric::temperature_c, t0, t1);
    if (!g.memory_total_bytes) g.memory_total_bytes = mean(Metric::memory_total_bytes);
    if (auto m = c.command_memory_peak_by_gpu.find(id.target.gpu_index);
        m != c.command_memory_peak_by_gpu.end()) {
      g.memory_peak_bytes = m->second;
    }
    std::map<unsigned, OtherProcess> others;
    double command_memory = 0;
    for (const auto& s : samples) {
      if (!s.processes) continue;
      double mine = 0;
      for (const telemetry::ProcessSample& p : *s.processes) {
        if (c.command_pids.count(p.pid)) {
          mine += p.used_memory_bytes ? static_cast<double>(*p.used_memory_bytes) : 0;
          g.used_by_command = true;
          continue;
        }
        OtherProcess& o = others[p.pid];
        o.pid = p.pid;
        if (!p.name.empty()) o.name = p.name;
        if (p.used_memory_bytes)
          o.memory_bytes =
              std::max(o.memory_bytes.value_or(0), static_cast<double>(*p.used_memory_bytes));
        if (p.sm_utilization)
          o.sm_utilization = std::max(o.sm_utilization.value_or(0), *p.sm_utilization);
      }
      command_memory = std::max(command_memory, mine);
    }
    if (!g.memory_peak_bytes && command_memory > 0) g.memory_peak_bytes = command_memory;
    if (!g.memory_peak_bytes)
      g.memory_peak_bytes = telemetry::peak_between(samples, Metric::memory_used_bytes,
                                                    samples.front().t_s, samples.back().t_s);
    for (auto& [pid, p] : others) g.others.push_back(p);
    for (const auto& [reason, time] : telemetry::throttle_between(samples, t0, t1)) {
      g.throttle_s[std::string(nvml::throttle_reason_name(reason))] = time.seconds;
    }
    out.push_back(std::move(g));
  }
  return out;
}

std::optional<double> untraced_step_s(const Timeline& t, const std::string& step_mark) {
  std::vector<std::int64_t> marks;
  for (const trace::detail::Mark& m : t.marks) {
    if (m.pid == t.main_pid && t.names[m.name] == step_mark) marks.push_back(m.at_ns);
  }
  std::sort(marks.begin(), marks.end());
  std::vector<double> before;
  // Untraced: before CUPTI recorded anything (a window opened on time records warm-up steps
  // before its traced ones).
  const std::int64_t recorded_from = t.recorded_from();
  // The first step is warm-up (cuDNN autotuning, the allocator growing): left out.
  for (std::size_t i = 1; i + 1 < marks.size(); ++i) {
    if (t.window_end_ns > t.window_start_ns && marks[i + 1] >= recorded_from) break;
    before.push_back(static_cast<double>(marks[i + 1] - marks[i]) * kNs);
  }
  if (before.size() < 3) return std::nullopt;
  return median(before);
}

Observations observe(const Timeline& t, const TraceSummary& s,
                     const std::optional<GpuObservations>& gpu, std::optional<double> untraced_s) {
  Observations o;
  o.telemetry = gpu;
  if (gpu) o.gpu = gpu->gpu;
  o.steps = s.steps.size();
  const double n = std::max<double>(1, static_cast<double>(s.steps.size()));
  o.traced_step_s = s.step_median_s.value_or(s.window_s);
  o.step_s = o.traced_step_s;
  if (untraced_s && !s.steps.empty()) {
    // A step is never shorter than the GPU's work in it, nor longer than traced.
    o.step_s =
        std::clamp(*untraced_s, std::min(s.gpu_busy_s / n, o.traced_step_s), o.traced_step_s);
  }
  std::vector<double> gpu_per_step;
  for (const trace::detail::StepStats& st : s.steps) gpu_per_step.push_back(st.gpu_busy_s);
  const double gpu_step_s = gpu_per_step.empty() ? 0 : median(gpu_per_step);
  const bool host_ahead = gpu_step_s > kHostAheadFactor * o.step_s;
  if (host_ahead) o.step_s = gpu_step_s;  // a step is never shorter than its GPU work
  o.busy_s = s.gpu_busy_s / n;
  o.kernels = static_cast<double>(s.kernels) / n;
  o.kernel_s = s.kernel_s / n;
  o.mean_kernel_s = s.mean_kernel_s;
  for (const trace::detail::IdleBucket& b : s.idle) {
    (b.upper_s <= 1e-3 ? o.idle_short_s : o.idle_long_s) += b.seconds / n;
  }
  o.data_wait_s = s.data_wait_s / n;
  o.syncs = static_cast<double>(s.syncs) / n;
  o.sync_s = s.sync_s / n;
  o.syncs_recorded = s.syncs_recorded;

  const auto [from, to] = analysed_span(t, s);
  const std::vector<Interval> busy = merged_busy(t, from, to);
  // A wait on a thread that launches no GPU work (NCCL's watchdog, a logger) holds back no
  // launch: only the launching threads' waits count, where launches were recorded.
  std::set<std::pair<pid_t, pid_t>> launching;
  for (const HostInterval& h : t.host) {
    if (h.end_ns > from && h.start_ns < to && h.kind == HostInterval::Kind::api &&
        is_launch(t.names[h.name]))
      launching.insert({h.pid, h.tid});
  }
  const auto counts = [&](const HostInterval& h) {
    return launching.empty() || launching.count({h.pid, h.tid}) != 0;
  };
  // Which traced steps hold a wait (the steps' bounds as the host passed them).
  std::vector<bool> waited(s.steps.size(), false);
  const auto wait_at = [&](std::int64_t at) {
    for (std::size_t i = 0; i < s.steps.size(); ++i) {
      if (at >= s.steps[i].start_ns && at < s.steps[i].end_ns) waited[i] = true;
    }
  };
  double wait_idle = 0, after_sync = 0, launches = 0, launch_s = 0, syncs = 0, sync_s = 0;
  // Allocator calls, the runtime's and the driver's apart (cudaMalloc calls cuMemAlloc: both
  // may be recorded, and the runtime's count when there are any).
  struct AllocatorCalls {
    double mallocs = 0, frees = 0, seconds = 0, idle_after_free = 0;
  } runtime_alloc, driver_alloc;
  for (const HostInterval& h : t.host) {
    if (h.end_ns <= from || h.start_ns >= to) continue;
    if (h.kind == HostInterval::Kind::data_wait) {
      const std::int64_t a = std::max(h.start_ns, from), b = std::min(h.end_ns, to);
      wait_idle += static_cast<double>((b - a) - covered(busy, a, b)) * kNs;
    } else if (h.kind == HostInterval::Kind::sync && counts(h)) {
      ++syncs;
      sync_s += static_cast<double>(h.end_ns - h.start_ns) * kNs;
      wait_at(h.start_ns);
      if (h.start_ns < from) continue;
      after_sync += idle_after(busy, h.end_ns);
    } else if (h.kind == HostInterval::Kind::api && is_launch(t.names[h.name])) {
      ++launches;
      launch_s += static_cast<double>(h.end_ns - h.start_ns) * kNs;
    } else if (h.kind == HostInterval::Kind::api && h.start_ns >= from) {
      const std::string& name = t.names[h.name];
      const AllocatorCall call = allocator_call(name);
      if (call == AllocatorCall::none) continue;
      AllocatorCalls& calls = name.starts_with("cuda") ? runtime_alloc : driver_alloc;
      (call == AllocatorCall::malloc ? calls.mallocs : calls.frees) += 1;
      calls.seconds += static_cast<double>(h.end_ns - h.start_ns) * kNs;
      // cudaFree waits for the whole device: the GPU then idles until the next launch.
      if (call == AllocatorCall::free) calls.idle_after_free += idle_after(busy, h.end_ns);
    }
  }
  const AllocatorCalls& alloc =
      runtime_alloc.mallocs + runtime_alloc.frees > 0 ? runtime_alloc : driver_alloc;
  o.device_mallocs = alloc.mallocs / n;
  o.device_frees = alloc.frees / n;
  o.allocator_s = alloc.seconds / n;
  o.idle_after_free_s = alloc.idle_after_free / n;
  if (!launching.empty()) {  // else the summary's count of every thread's waits stands
    o.syncs = syncs / n;
    o.sync_s = sync_s / n;
  }
  o.data_wait_idle_s = wait_idle / n;
  o.idle_after_sync_s = after_sync / n;
  o.launches = launches / n;
  if (launches > 0) o.launch_api_mean_s = launch_s / launches;

  std::unordered_map<std::uint32_t, trace::detail::KernelClass> classes;
  double after_copy = 0;  // a light trace's stand-in for after_sync
  for (const GpuActivity& a : t.gpu) {
    if (a.kind == GpuActivity::Kind::kernel && !classes.count(a.name))
      classes.emplace(a.name, trace::detail::classify_kernel(t.names[a.name]));
  }
  for (const GpuActivity& a : t.gpu) {
    if (a.end_ns <= from || a.start_ns >= to) continue;
    const double seconds = static_cast<double>(a.end_ns - a.start_ns) * kNs;
    if (a.kind == GpuActivity::Kind::memcpy) {
      if (a.copy == trace::detail::CopyKind::host_to_device) {
        o.h2d_copies += 1, o.h2d_bytes += static_cast<double>(a.bytes);
        if (a.pageable) {
          o.pageable_h2d_copies += 1;
          o.pageable_h2d_bytes += static_cast<double>(a.bytes);
          o.pageable_h2d_s += seconds;
        }
      } else if (a.copy == trace::detail::CopyKind::device_to_host) {
        o.d2h_copies += 1;
        if (a.bytes < kSmallCopyBytes) {
          o.small_d2h_copies += 1;
          // A light trace has no waits: the GPU idle after a value read back stands for theirs.
          if (!t.syncs_recorded && a.start_ns >= from) after_copy += idle_after(busy, a.end_ns);
          if (!t.syncs_recorded) wait_at(a.start_ns);
        }
      }
      continue;
    }
    if (a.kind != GpuActivity::Kind::kernel) continue;
    const trace::detail::KernelClass& c = classes.at(a.name);
    if (is_matmul(c.kind)) {
      o.matmul_s += seconds;
      o.matmul_kernels += 1;
      if (c.tensor_cores) o.matmul_tensor_s += seconds;
      // Not on tensor cores and not in a half type: fp32 (cuDNN's float kernels do not always
      // name their precision).
      if (!c.tensor_cores && c.precision != MathPrecision::fp16 &&
          c.precision != MathPrecision::bf16 && c.precision != MathPrecision::fp8 &&
          c.precision != MathPrecision::fp64)
        o.matmul_fp32_s += seconds;
      if (c.kind == KernelKind::convolution) o.conv_s += seconds;
    }
    if (c.kind == KernelKind::elementwise || c.kind == KernelKind::reduction ||
        c.kind == KernelKind::copy)
      o.memory_bound_s += seconds;
    if (is_layout_transpose(lower(t.names[a.name]))) {
      o.layout_transposes += 1;
      o.layout_transpose_s += seconds;
    }
  }
  // The summary's communication (NCCL kernels, peer copies), over the GPU's span of the steps.
  o.comm_kernels = static_cast<double>(s.communication_kernels);
  o.comm_copies = static_cast<double>(s.communication_copies);
  o.comm_s = s.communication_s;
  o.comm_exposed_s = s.communication_exposed_s;
  for (const auto& [device, seconds] : s.device_busy_s) o.device_busy_s[device] = seconds / n;
  for (const auto& [op, seconds] : s.communication_by_op) o.comm_by_op_s[op] = seconds / n;
  for (double* v :
       {&o.comm_kernels, &o.comm_copies, &o.comm_s, &o.comm_exposed_s, &o.h2d_copies, &o.h2d_bytes,
        &o.pageable_h2d_copies, &o.pageable_h2d_bytes, &o.pageable_h2d_s, &o.d2h_copies,
        &o.small_d2h_copies, &o.matmul_s, &o.matmul_tensor_s, &o.matmul_kernels, &o.matmul_fp32_s,
        &o.conv_s, &o.layout_transposes, &o.layout_transpose_s})
    *v /= n;
  if (!t.syncs_recorded) o.idle_after_sync_s = after_copy / n;
  if (!waited.empty()) {
    o.wait_step_share = static_cast<double>(std::count(waited.begin(), waited.end(), true)) /
                        static_cast<double>(waited.size());
  }
  if (host_ahead) matmul_from_kernel_table(s, n, o);
  optimizer_chains(t, s, classes, o);

  for (const trace::detail::ThreadUse& u : s.threads) {
    if (u.role == trace::detail::ThreadRole::main && u.pid == t.main_pid)
      o.main_thread_cpu_s = o.main_thread_cpu_s.value_or(0) + u.cpu_s;
  }
  std::set<pid_t> workers;
  for (const trace::detail::ThreadUse& u : s.threads) {
    if (u.role != trace::detail::ThreadRole::descendant || u.pid == t.main_pid) continue;
    o.worker_cpu_s += u.cpu_s;
    if (u.cpu_s >= 0.05) workers.insert(u.pid);
  }
  o.worker_processes = workers.size();
  return o;
}

void chart_data(const Timeline& t, const TraceSummary& s, std::size_t steps,
                ProcessDiagnosis& out) {
  for (const trace::detail::StepStats& st : s.steps) {
    out.per_step.push_back({st.wall_s, st.gpu_busy_s, st.data_wait_s, st.sync_s});
  }
  for (const trace::detail::IdleBucket& b : s.idle) out.idle.emplace_back(b.label, b.seconds);
  std::int64_t from = 0, to = 0;
  if (!s.steps.empty()) {
    from = s.steps.front().start_ns;
    to = s.steps[std::min(steps, s.steps.size()) - 1].end_ns;
    for (std::size_t i = 0; i < std::min(steps, s.steps.size()); ++i)
      out.timeline.step_starts_s.push_back(static_cast<double>(s.steps[i].start_ns - from) * kNs);
  } else {
    std::tie(from, to) = analysed_span(t, s);
    to = std::min(to, from + 50'000'000);  // 50 ms of a window without steps
  }
  auto rel = [from](std::int64_t x) { return static_cast<double>(x - from) * kNs; };
  for (const Interval& i : merged_busy(t, from, to))
    out.timeline.gpu_busy.push_back({rel(i.start), rel(i.end)});
  for (const HostInterval& h : t.host) {
    if (h.end_ns <= from || h.start_ns >= to) continue;
    const TimelineSlice::Interval i{rel(std::max(h.start_ns, from)), rel(std::min(h.end_ns, to))};
    if (h.kind == HostInterval::Kind::data_wait) out.timeline.data_wait.push_back(i);
    if (h.kind == HostInterval::Kind::sync) out.timeline.sync.push_back(i);
  }
}

}  // namespace gpuscope::analysis::detail
