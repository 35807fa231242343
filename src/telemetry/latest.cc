#include "telemetry/latest.h"

namespace gpuscope::telemetry::detail {

Latest::Latest(const std::vector<SampledGpu>& gpus) {
  for (const SampledGpu& id : gpus) gpus_.push_back(LatestGpu{id, {}, {}, false, {}});
}

void Latest::add(const Tick& tick) {
  for (const GpuSample& sample : tick.gpus) {
    for (LatestGpu& gpu : gpus_) {
      if (gpu.identity.target.gpu_index != sample.gpu) continue;
      if (sample.lost) {
        gpu.lost = true;
        gpu.values = MetricValues{};
        gpu.processes.clear();
        break;
      }
      for (const MetricInfo& info : metric_catalogue()) {
        if (auto v = sample.values.get(info.metric)) gpu.values.set(info.metric, v);
      }
      if (sample.processes) gpu.processes = *sample.processes;
      gpu.t_s = sample.t_s;
      break;
    }
  }
}

}  // namespace gpuscope::telemetry::detail
