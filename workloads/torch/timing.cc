#include "timing.h"

#include <ATen/cuda/CUDAEvent.h>
#include <c10/cuda/CUDAStream.h>

#include <algorithm>
#include <chrono>
#include <deque>
#include <numeric>

namespace gpuscope::workloads {

struct StepClock::Impl {
  bool cuda = false;
  // Events are reused across windows: creating one costs a driver call.
  std::deque<at::cuda::CUDAEvent> events;
  size_t used = 0;
  std::vector<std::chrono::steady_clock::time_point> host_marks;
};

StepClock::StepClock(const DeviceInfo& device) : impl_(std::make_unique<Impl>()) {
  impl_->cuda = device.is_cuda();
}

StepClock::~StepClock() = default;

void StepClock::mark() {
  if (!impl_->cuda) {
    impl_->host_marks.push_back(std::chrono::steady_clock::now());
    return;
  }
  if (impl_->used == impl_->events.size()) impl_->events.emplace_back(cudaEventDefault);
  impl_->events[impl_->used++].record(c10::cuda::getCurrentCUDAStream());
}

std::vector<double> StepClock::intervals_s() {
  std::vector<double> out;
  if (!impl_->cuda) {
    for (size_t i = 1; i < impl_->host_marks.size(); ++i) {
      out.push_back(
          std::chrono::duration<double>(impl_->host_marks[i] - impl_->host_marks[i - 1]).count());
    }
    impl_->host_marks.clear();
    return out;
  }
  if (impl_->used == 0) return out;
  impl_->events[impl_->used - 1].synchronize();
  for (size_t i = 1; i < impl_->used; ++i) {
    out.push_back(impl_->events[i - 1].elapsed_time(impl_->events[i]) / 1e3);
  }
  impl_->used = 0;
  return out;
}

double percentile(const std::vector<double>& sorted_values, double fraction) {
  if (sorted_values.empty()) return 0;
  const double position = fraction * static_cast<double>(sorted_values.size() - 1);
  const auto below = static_cast<size_t>(position);
  const size_t above = std::min(below + 1, sorted_values.size() - 1);
  const double weight = position - static_cast<double>(below);
  return sorted_values[below] * (1 - weight) + sorted_values[above] * weight;
}

Summary summarize(std::vector<double> values) {
  Summary s;
  s.count = values.size();
  if (values.empty()) return s;
  std::sort(values.begin(), values.end());
  s.min = values.front();
  s.max = values.back();
  s.mean = std::accumulate(values.begin(), values.end(), 0.0) / static_cast<double>(s.count);
  s.median = percentile(values, 0.5);
  s.p10 = percentile(values, 0.1);
  s.p90 = percentile(values, 0.9);
  s.relative_spread = s.median > 0 ? (s.p90 - s.p10) / s.median : 0;
  return s;
}

}  // namespace gpuscope::workloads
