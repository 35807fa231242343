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

void Window::count_step(uint64_t now_ns) {
  // The first step counts from the library's start (the program's start up to it, too).
  const uint64_t previous = last_mark_ns_ != 0 ? last_mark_ns_ : origin_ns_;
  if (now_ns > previous) longest_step_ns_ = std::max(longest_step_ns_, now_ns - previous);
  last_mark_ns_ = std::max(last_mark_ns_, now_ns);
  ++steps_seen_;
}

WindowEvent Window::advance(uint64_t now_ns) {
  const bool by_steps = settings_.skip_steps || settings_.steps;
  const bool by_time = settings_.skip_s || settings_.duration_s;
  const uint64_t skip_steps = settings_.skip_steps.value_or(0);
  if (state_ == WindowState::before) {
    const char* reason = nullptr;
    bool on_time = false;
    if (!by_steps && !by_time) {
      reason = "always";
    } else if (by_steps && steps_seen_ >= skip_steps) {
      reason = "steps";
    } else if (by_time && steps_seen_ == 0 && !steps_expected_ &&
               now_ns >= origin_ns_ + seconds_to_ns(settings_.skip_s.value_or(0))) {
      reason = "time";
      on_time = true;
    }
    if (reason == nullptr) return {};
    state_ = WindowState::open;
    open_step_ = steps_seen_;
    open_ns_ = now_ns;
    if (!on_time) traced_from_ = steps_seen_;
    return {WindowEvent::opened, reason, steps_seen_};
  }
  if (state_ != WindowState::open) return {};
  // Opened on time, and the program marks steps after all: its traced steps begin now.
  if (!traced_from_ && by_steps && steps_seen_ > open_step_ && steps_seen_ >= skip_steps) {
    traced_from_ = steps_seen_;
    return {WindowEvent::steps_begin, "steps", steps_seen_};
  }
  if (traced_from_ && settings_.steps && steps_seen_ - *traced_from_ >= *settings_.steps) {
    return close(now_ns, "steps");
  }
  const bool awaiting_first_step = steps_expected_ && steps_seen_ == open_step_;
  if (settings_.duration_s && !awaiting_first_step) {
    const uint64_t since = std::max(open_ns_, last_mark_ns_);
    if (now_ns >= since + seconds_to_ns(*settings_.duration_s) + longest_step_ns_) {
      return close(now_ns, steps_seen_ > open_step_ ? "steps_stalled" : "duration");
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
