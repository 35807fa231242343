#include "telemetry/live_state.h"

namespace gpuscope::telemetry::detail {

LiveState::LiveState(const std::vector<SampledGpu>& gpus, double interval_s,
                     std::vector<std::string> command, std::string listening)
    : latest_(gpus) {
  base_.history.resize(gpus.size());
  base_.interval_s = interval_s;
  base_.command = std::move(command);
  base_.listening = std::move(listening);
}

void LiveState::add(const Tick& tick) {
  std::lock_guard lock(mutex_);
  latest_.add(tick);
  base_.now_s = tick.t_s;
  const auto& gpus = latest_.gpus();
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    bool sampled = false;
    for (const GpuSample& s : tick.gpus)
      sampled = sampled || (s.gpu == gpus[i].identity.target.gpu_index && !s.lost);
    if (!sampled) continue;
    auto& history = base_.history[i];
    const MetricValues& v = gpus[i].values;
    history.push_back({tick.t_s, v.get(Metric::sm_activity), v.get(Metric::tensor_activity),
                       v.get(Metric::gpu_utilization)});
    while (history.size() > kHistoryPoints) history.pop_front();
  }
}

void LiveState::add_output(std::string line) {
  std::lock_guard lock(mutex_);
  base_.command_output.push_back(std::move(line));
  if (base_.command_output.size() > kOutputLines) {
    base_.command_output.erase(base_.command_output.begin());
  }
}

void LiveState::add_message(std::string message) {
  std::lock_guard lock(mutex_);
  base_.messages.push_back(std::move(message));
}

LiveSnapshot LiveState::snapshot() const {
  std::lock_guard lock(mutex_);
  LiveSnapshot s = base_;
  s.gpus = latest_.gpus();
  return s;
}

}  // namespace gpuscope::telemetry::detail
