// The recording window: when CUPTI activity is recorded in a process. Pure logic (no clock, no
// CUPTI) so tests can drive it step by step.
//
// One window per process. Step settings (skip_steps, steps) count the step marks; time settings
// (skip_s, duration_s) count seconds from the library's start in the process. It opens at the
// first of: `skip_steps` steps seen, `skip_s` seconds passed (each only if that kind of setting
// is given); with no setting at all it opens at once and covers the whole run. It closes at the
// first of: `steps` steps inside it, `duration_s` seconds inside it, or the process ending.
#pragma once

#include <cstdint>
#include <optional>

namespace gpuscope::inject {

struct WindowSettings {
  std::optional<uint64_t> skip_steps = {};
  std::optional<uint64_t> steps = {};
  std::optional<double> skip_s = {};
  std::optional<double> duration_s = {};
};

enum class WindowState { before, open, closed };

struct WindowEvent {
  enum Kind { none, opened, closed } kind = none;
  const char* reason = "";  // opened: "always", "steps", "time"; closed: "steps", "duration", ...
  uint64_t step = 0;        // steps seen when it happened (the first step inside / after)
};

class Window {
 public:
  Window(WindowSettings settings, uint64_t origin_ns);

  // A step mark: one more step finished.
  void count_step() { ++steps_seen_; }

  // At most one transition due at `now_ns`; call until it returns `none`.
  WindowEvent advance(uint64_t now_ns);

  // Closes an open window for a reason outside the settings ("exit", "signal", ...).
  WindowEvent close(uint64_t now_ns, const char* reason);

  WindowState state() const { return state_; }
  uint64_t steps_seen() const { return steps_seen_; }

 private:
  WindowSettings settings_;
  uint64_t origin_ns_;
  WindowState state_ = WindowState::before;
  uint64_t steps_seen_ = 0;
  uint64_t open_step_ = 0;
  uint64_t open_ns_ = 0;
};

// What follows the window's close, one flusher tick at a time. The host may run far ahead of its
// GPU (a program that queues many steps): the kernels launched inside the window are then still
// queued when it closes, and stopping CUPTI at once would lose them. So CUPTI keeps recording
// until the GPU has finished the work queued before the close (or `gpu_wait_ns` passed), then is
// stopped, flushed on three ticks (the last forced) and detached.
class WindowClosing {
 public:
  enum class Action {
    none,                // nothing to do (not closing, or finished)
    wait_gpu,            // the GPU is still busy with the window's work: ask again next tick
    stop,                // the GPU is done (or the wait timed out): stop recording, then flush
    flush,               // deliver what CUPTI holds
    flush_and_teardown,  // the last, forced flush; then detach CUPTI
  };

  explicit WindowClosing(uint64_t gpu_wait_ns) : gpu_wait_ns_(gpu_wait_ns) {}

  // The window closed at `now_ns`; the next tick starts the sequence. Idempotent.
  void begin(uint64_t now_ns);

  // The action for the tick at `now_ns`; `gpu_done` says whether the GPU has finished the work
  // queued before the close (asked only while waiting).
  Action tick(uint64_t now_ns, bool gpu_done);

  bool waiting_for_gpu() const { return phase_ == Phase::waiting; }
  // After `stop`: "done" (the GPU finished), or "timeout"; and when that was decided.
  const char* gpu_status() const { return gpu_status_; }
  uint64_t gpu_end_ns() const { return gpu_end_ns_; }
  uint64_t waited_ns() const { return gpu_end_ns_ - closed_ns_; }

 private:
  enum class Phase { idle, waiting, flushing, done };
  uint64_t gpu_wait_ns_;
  Phase phase_ = Phase::idle;
  uint64_t closed_ns_ = 0;
  uint64_t gpu_end_ns_ = 0;
  const char* gpu_status_ = "";
  int flushes_left_ = 0;
};

}  // namespace gpuscope::inject
