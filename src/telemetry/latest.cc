#include "telemetry/latest.h"

namespace gpuscope::telemetry::detail {

Latest::Latest(const std::vector<GpuIdentity>& gpus) {
  for (const GpuIdentity& id : gpus) gpus_.push_back(LatestGpu{id, {}, {}, false, {}});
}

void Latest::add(const Tick& tick) {
  for (const GpuSample& sample : tick.gpus) {
    for (LatestGpu& gpu : gpus_) {
      if (gpu.identity.index != sample.gpu) continue;
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
