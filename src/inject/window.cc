#include "inject/window.h"

#include <algorithm>

namespace gpuscope::inject {
namespace {

uint64_t seconds_to_ns(double seconds) {
  return static_cast<uint64_t>(seconds * 1e9);
}

}  // namespace

Window::Window(WindowSettings settings, uint64_t origin_ns)
    : settings_(settings), origin_ns_(origin_ns) {}

WindowEvent Window::advance(uint64_t now_ns) {
  const bool by_steps = settings_.skip_steps || settings_.steps;
  const bool by_time = settings_.skip_s || settings_.duration_s;
  if (state_ == WindowState::before) {
    const char* reason = nullptr;
    if (!by_steps && !by_time) {
      reason = "always";
    } else if (by_steps && steps_seen_ >= settings_.skip_steps.value_or(0)) {
      reason = "steps";
    } else if (by_time && now_ns >= origin_ns_ + seconds_to_ns(settings_.skip_s.value_or(0))) {
      reason = "time";
    }
    if (reason == nullptr) return {};
    state_ = WindowState::open;
    open_step_ = steps_seen_;
    open_ns_ = now_ns;
    return {WindowEvent::opened, reason, steps_seen_};
  }
  if (state_ == WindowState::open) {
    if (settings_.steps && steps_seen_ - open_step_ >= *settings_.steps) {
      return close(now_ns, "steps");
    }
    if (settings_.duration_s && now_ns >= open_ns_ + seconds_to_ns(*settings_.duration_s)) {
      return close(now_ns, "duration");
    }
  }
  return {};
}

WindowEvent Window::close(uint64_t /*now_ns*/, const char* reason) {
  if (state_ != WindowState::open) return {};
  state_ = WindowState::closed;
  return {WindowEvent::closed, reason, steps_seen_};
}

void WindowClosing::begin(uint64_t now_ns) {
  if (phase_ != Phase::idle) return;
  phase_ = Phase::waiting;
  closed_ns_ = now_ns;
}

WindowClosing::Action WindowClosing::tick(uint64_t now_ns, bool gpu_done) {
  switch (phase_) {
    case Phase::idle:
    case Phase::done:
      return Action::none;
    case Phase::waiting: {
      const bool timed_out = now_ns >= closed_ns_ + gpu_wait_ns_;
      if (!gpu_done && !timed_out) return Action::wait_gpu;
      gpu_status_ = gpu_done ? "done" : "timeout";
      gpu_end_ns_ = std::max(now_ns, closed_ns_);
      phase_ = Phase::flushing;
      flushes_left_ = 2;
      return Action::stop;
    }
    case Phase::flushing:
      if (--flushes_left_ > 0) return Action::flush;
      phase_ = Phase::done;
      return Action::flush_and_teardown;
  }
  return Action::none;
}

}  // namespace gpuscope::inject
