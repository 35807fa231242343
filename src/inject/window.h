// The recording window: when CUPTI activity is recorded in a process. Pure logic (no clock, no
// CUPTI) so tests can drive it step by step.
//
// One window per process. Step settings (skip_steps, steps) count the step marks; time settings
// (skip_s, duration_s) count seconds, and are for a program that marks no steps. With no setting
// at all it opens at once and covers the whole run. Otherwise:
//   - it opens at `skip_steps` steps seen, or at `skip_s` seconds from the library's start in
//     the process when no step has been marked by then and none is expected (expect_steps: the
//     Python shim saw an optimizer made, so steps will come, after a compilation maybe);
//   - the traced steps begin at `skip_steps` steps seen: when the window opened; or later, when it
//     opened on time and the program then marks steps (a slow start: torch.compile, loading):
//     the `steps_begin` event;
//   - it closes `steps` steps after the traced steps began; or, while no step comes, `duration_s`
//     plus the longest step seen so far (the first from the library's start) after the window
//     opened or the last step mark (a program that marks no steps, or stopped marking them: an
//     evaluation after training), though not before the first step once steps are expected; or
//     when the process ends.
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
  enum Kind { none, opened, steps_begin, closed } kind = none;
  // opened: "always", "steps", "time"; steps_begin: "steps"; closed: "steps", "duration",
  // "steps_stalled", or a reason of close()'s
  const char* reason = "";
  uint64_t step = 0;  // steps seen when it happened (the first step inside / after)
};

class Window {
 public:
  Window(WindowSettings settings, uint64_t origin_ns);

  // A step mark at `now_ns`: one more step finished.
  void count_step(uint64_t now_ns);
  // Steps will be marked (an optimizer was made): no opening on time.
  void expect_steps() { steps_expected_ = true; }

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
  std::optional<uint64_t> traced_from_;  // the step the traced steps begin at
  uint64_t last_mark_ns_ = 0;            // 0: no step marked yet
  uint64_t longest_step_ns_ = 0;
  bool steps_expected_ = false;
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
