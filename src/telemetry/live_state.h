// What the live view shows, kept up to date by the monitor's writer thread and read by the view
// (another thread) as snapshots.
#pragma once

#include <deque>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "gpuscope/telemetry.h"
#include "telemetry/latest.h"

namespace gpuscope::telemetry::detail {

// The plotted readings at one tick (the latest known value of each).
struct HistoryPoint {
  double t_s = 0;
  std::optional<double> sm_activity, tensor_activity, gpu_utilization;
};

struct LiveSnapshot {
  std::vector<LatestGpu> gpus;
  std::vector<std::deque<HistoryPoint>> history;  // per GPU, oldest first
  double now_s = 0;                               // of the last tick
  double interval_s = 0;
  std::vector<std::string> command;
  std::vector<std::string> command_output;  // its last lines
  std::vector<std::string> messages;        // warnings, newest last
  std::string listening;                    // "127.0.0.1:9400" when serving /metrics
};

class LiveState {
 public:
  static constexpr std::size_t kHistoryPoints = 6000;  // 10 min at 100 ms
  static constexpr std::size_t kOutputLines = 200;

  LiveState(const std::vector<SampledGpu>& gpus, double interval_s,
            std::vector<std::string> command, std::string listening);
  void add(const Tick& tick);
  void add_output(std::string line);
  void add_message(std::string message);
  LiveSnapshot snapshot() const;

 private:
  mutable std::mutex mutex_;
  Latest latest_;
  LiveSnapshot base_;
};

}  // namespace gpuscope::telemetry::detail
