// The monitor's writer thread: takes ticks from the sampler, hands each to every live sink and
// to the summary, so that a slow disk or a stalled SQLite commit never delays sampling. A sink
// that fails is closed and reported; the others go on.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "gpuscope/monitor.h"
#include "gpuscope/telemetry.h"
#include "telemetry/live_state.h"

namespace gpuscope::telemetry::detail {

class Recorder {
 public:
  using Warn = std::function<void(const std::string&)>;
  // `live` may be null. `warn` is called on the writer thread for each lost GPU, reading problem
  // and sink failure.
  Recorder(std::vector<std::unique_ptr<Sink>> sinks, SummaryBuilder builder, LiveState* live,
           Warn warn);
  ~Recorder();  // finishes if finish() was not called

  void start();
  void push(Tick&& tick);  // from the sampling thread
  // Writes what is queued, ends every sink with the summary (with the sampler's reading costs),
  // stops the thread.
  Summary finish(double wall_s, std::vector<ReadingCost> readings = {});

  std::vector<std::string> failures() const;

 private:
  void loop();
  void consume(const Tick& tick);
  void fail(std::size_t sink, const Status& status);

  struct Entry {
    std::unique_ptr<Sink> sink;
    bool alive = true;
  };
  std::vector<Entry> sinks_;
  SummaryBuilder builder_;
  LiveState* live_;
  Warn warn_;

  mutable std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<Tick> queue_;
  bool stopping_ = false;
  bool finished_ = false;
  std::vector<std::string> failures_;
  std::thread thread_;
};

}  // namespace gpuscope::telemetry::detail
