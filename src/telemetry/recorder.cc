#include "telemetry/recorder.h"

#include <fmt/format.h>

namespace gpuscope::telemetry::detail {

Recorder::Recorder(std::vector<std::unique_ptr<Sink>> sinks, SummaryBuilder builder,
                   LiveState* live, Warn warn)
    : builder_(std::move(builder)), live_(live), warn_(std::move(warn)) {
  for (auto& sink : sinks) sinks_.push_back({std::move(sink), true});
}

Recorder::~Recorder() {
  if (!finished_) (void)finish(0);
}

void Recorder::start() {
  thread_ = std::thread([this] { loop(); });
}

void Recorder::push(Tick&& tick) {
  {
    std::lock_guard lock(mutex_);
    queue_.push_back(std::move(tick));
  }
  wake_.notify_one();
}

void Recorder::loop() {
  for (;;) {
    Tick tick;
    {
      std::unique_lock lock(mutex_);
      wake_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, and everything is written
      tick = std::move(queue_.front());
      queue_.pop_front();
    }
    consume(tick);
  }
}

void Recorder::consume(const Tick& tick) {
  for (const GpuSample& s : tick.gpus) {
    for (const std::string& problem : s.problems) {
      warn_(fmt::format("GPU {}: {}", s.gpu, problem));
    }
    if (s.lost) {
      warn_(
          fmt::format("GPU {} stopped answering at {:.1f} s; the other GPUs go on", s.gpu, s.t_s));
    }
  }
  for (std::size_t i = 0; i < sinks_.size(); ++i) {
    if (!sinks_[i].alive) continue;
    Status status = sinks_[i].sink->write(tick);
    if (!status.ok()) fail(i, status);
  }
  builder_.add(tick);
  if (live_ != nullptr) live_->add(tick);
}

void Recorder::fail(std::size_t sink, const Status& status) {
  Entry& e = sinks_[sink];
  e.alive = false;
  (void)e.sink->end(nullptr);  // closes it; its own failure is the one we report
  const std::string text =
      fmt::format("{} failed and was closed: {}", e.sink->describe(), status.message());
  {
    std::lock_guard lock(mutex_);
    failures_.push_back(text);
  }
  warn_(text);
}

Summary Recorder::finish(double wall_s, std::vector<ReadingCost> readings) {
  if (thread_.joinable()) {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_one();
    thread_.join();
  }
  // Ticks pushed without a running thread (tests) are written here.
  while (!queue_.empty()) {
    Tick tick = std::move(queue_.front());
    queue_.pop_front();
    consume(tick);
  }
  finished_ = true;
  Summary summary = builder_.summary(wall_s);
  summary.sampler.readings = std::move(readings);
  for (std::size_t i = 0; i < sinks_.size(); ++i) {
    if (!sinks_[i].alive) continue;
    Status status = sinks_[i].sink->end(&summary);
    if (!status.ok()) {
      sinks_[i].alive = false;
      const std::string text =
          fmt::format("{} failed at the end: {}", sinks_[i].sink->describe(), status.message());
      failures_.push_back(text);
      warn_(text);
    }
  }
  return summary;
}

std::vector<std::string> Recorder::failures() const {
  std::lock_guard lock(mutex_);
  return failures_;
}

}  // namespace gpuscope::telemetry::detail
