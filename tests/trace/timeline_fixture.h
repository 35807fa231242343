// Timelines built by hand for the trace analysis tests.
#pragma once

#include <vector>

#include "trace/timeline.h"

namespace gpuscope::trace::detail {

constexpr std::int64_t kMs = 1'000'000;
constexpr std::int64_t kUs = 1'000;

// A data-starved loop: each 11 ms step waits 8 ms for its batch, copies it from pageable memory
// (1 ms), then runs four kernels (0.48 ms each, 20 us apart) and marks the step.
inline Timeline starved_loop(int steps, bool with_marks) {
  Timeline t;
  t.main_pid = 100;
  const std::uint32_t wait = t.intern("gpuscope.data_wait");
  const std::uint32_t mark = t.intern("gpuscope.step");
  const std::uint32_t launch = t.intern("cudaLaunchKernel");
  const std::uint32_t kernels[] = {t.intern("nvjet_sm90_tst_128x64_64x8_1x2_h_bz_bias_TNT"),
                                   t.intern("ampere_sgemm_128x64_nn"),
                                   t.intern("vectorized_elementwise_kernel<4, add>"),
                                   t.intern("multi_tensor_apply_kernel<FusedAdam>")};
  std::uint64_t correlation = 1;
  for (int s = 0; s < steps; ++s) {
    const std::int64_t t0 = 1000 * kMs + s * 11 * kMs;
    t.host.push_back({HostInterval::Kind::data_wait, 100, 100, t0, t0 + 8 * kMs, wait, 0});
    GpuActivity copy;
    copy.kind = GpuActivity::Kind::memcpy;
    copy.copy = CopyKind::host_to_device;
    copy.pageable = true;
    copy.bytes = 64 << 20;
    copy.start_ns = t0 + 8 * kMs;
    copy.end_ns = t0 + 9 * kMs;
    t.gpu.push_back(copy);
    std::int64_t at = t0 + 9 * kMs;
    for (std::uint32_t k : kernels) {
      t.host.push_back(
          {HostInterval::Kind::api, 100, 100, at - 5 * kUs, at - 2 * kUs, launch, correlation});
      GpuActivity a;
      a.kind = GpuActivity::Kind::kernel;
      a.name = k;
      a.start_ns = at;
      a.end_ns = at + 480 * kUs;
      a.correlation = correlation++;
      t.gpu.push_back(a);
      at += 500 * kUs;
    }
    if (with_marks) t.marks.push_back({100, 100, t0 + 11 * kMs - 1, mark});
  }
  return t;
}

// A GPU-bound loop whose host runs 3.5 steps ahead of its GPU: each 10 ms step launches four
// kernels of 2.5 ms in its first 40 us and marks its end; the GPU runs each kernel 35 ms after its
// launch. The window opened just before the first step and closed at the last mark, while the
// GPU still had 3.5 steps queued (recorded since the closing waits for the GPU).
inline Timeline queued_loop(int steps) {
  Timeline t;
  t.main_pid = 100;
  const std::uint32_t mark = t.intern("gpuscope.step");
  const std::uint32_t launch = t.intern("cudaLaunchKernel");
  const std::uint32_t kernel = t.intern("sm80_xmma_fprop_implicit_gemm_f32f32_tf32f32_f32");
  std::uint64_t correlation = 1;
  const std::int64_t t0 = 1000 * kMs;
  for (int s = 0; s < steps; ++s) {
    const std::int64_t host = t0 + s * 10 * kMs;
    for (int k = 0; k < 4; ++k) {
      const std::int64_t at = host + k * 10 * kUs;
      t.host.push_back({HostInterval::Kind::api, 100, 100, at, at + 5 * kUs, launch, correlation});
      GpuActivity a;
      a.kind = GpuActivity::Kind::kernel;
      a.name = kernel;
      a.start_ns = t0 + 35 * kMs + s * 10 * kMs + k * 2500 * kUs;
      a.end_ns = a.start_ns + 2500 * kUs;
      a.correlation = correlation++;
      t.gpu.push_back(a);
    }
    t.marks.push_back({100, 100, host + 10 * kMs - 1, mark});
  }
  t.window_start_ns = t0 - kMs;
  t.window_end_ns = t0 + steps * 10 * kMs;
  return t;
}

// A host that outruns its GPU (CUDA graphs, nothing waits): each step launches one 6 ms graph
// and marks its end 2 ms after the last; the GPU runs the launches back to back, the first 50 us
// after its launch. The program's own CUDA events would time 6 ms steps. `launch_records` false:
// a light trace, whose kernels carry no launch record.
inline Timeline outrunning_loop(int steps, bool launch_records = true) {
  Timeline t;
  t.main_pid = 100;
  const std::uint32_t mark = t.intern("gpuscope.step");
  const std::uint32_t launch = t.intern("cudaGraphLaunch");
  const std::uint32_t kernel = t.intern("nvjet_sm90_tst_256x128_64x4_1x2_h_bz_coopA_NNT");
  const std::int64_t t0 = 1000 * kMs;
  std::int64_t gpu_free = 0;
  for (int s = 0; s < steps; ++s) {
    const std::int64_t host = t0 + s * 2 * kMs;
    const auto correlation = static_cast<std::uint64_t>(s + 1);
    if (launch_records) {
      t.host.push_back(
          {HostInterval::Kind::api, 100, 100, host, host + 5 * kUs, launch, correlation});
    }
    GpuActivity a;
    a.kind = GpuActivity::Kind::kernel;
    a.name = kernel;
    a.graph = true;
    a.start_ns = std::max(host + 50 * kUs, gpu_free);
    a.end_ns = a.start_ns + 6 * kMs;
    a.correlation = correlation;
    gpu_free = a.end_ns;
    t.gpu.push_back(a);
    t.marks.push_back({100, 100, host + 2 * kMs - 1, mark});
  }
  t.window_start_ns = t0 - kMs;
  t.window_end_ns = t0 + steps * 2 * kMs;
  return t;
}

// One kernel of a hand-made step: its name, its span from the step's start, its GPU and stream.
struct StepKernel {
  const char* name;
  double from_ms = 0, to_ms = 0;
  int device = 0;
  std::uint32_t stream = 0;
};

// `steps` steps of 10 ms from 1 s in process 100, each running `kernels` (no launch records) and
// marked (gpuscope.step) at its end.
inline Timeline ten_ms_steps(int steps, const std::vector<StepKernel>& kernels) {
  Timeline t;
  t.main_pid = 100;
  const std::uint32_t mark = t.intern("gpuscope.step");
  for (int s = 0; s < steps; ++s) {
    const std::int64_t t0 = 1000 * kMs + s * 10 * kMs;
    for (const StepKernel& k : kernels) {
      GpuActivity a;
      a.kind = GpuActivity::Kind::kernel;
      a.name = t.intern(k.name);
      a.device = k.device;
      a.stream = k.stream;
      a.start_ns = t0 + static_cast<std::int64_t>(k.from_ms * kMs);
      a.end_ns = t0 + static_cast<std::int64_t>(k.to_ms * kMs);
      t.gpu.push_back(a);
    }
    t.marks.push_back({100, 100, t0 + 10 * kMs - 1, mark});
  }
  return t;
}

}  // namespace gpuscope::trace::detail
