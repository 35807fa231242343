// The recording session of one process: its configuration, record file, recording window and
// the machinery that gets records to disk (a flusher thread, signal handlers, fork and exit
// hooks). Created by whichever entry point runs first (NVTX or CUDA injection); a fork child
// gets its own file.
//
// Nothing here throws into the host program: every public function catches what it calls.
#pragma once

#include <sys/types.h>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <string>
#include <string_view>

#include "inject/config.h"
#include "inject/record_writer.h"
#include "inject/window.h"

namespace gpuscope::inject {

// What CUPTI can do in this process; the session drives it when the window opens and closes.
struct ActivityBackend {
  virtual ~ActivityBackend() = default;
  virtual void enable() = 0;   // window opened: record the configured kinds
  virtual void disable() = 0;  // stop recording (after the GPU caught up)
  // Whether the GPU has finished the work queued before the first call (which queues a marker
  // behind it); true when there is nothing to wait on. Called by the flusher after the close.
  virtual bool gpu_done() = 0;
  virtual void flush(bool forced) = 0;   // deliver buffered records (cuptiActivityFlushAll)
  virtual bool wants_draining() = 0;     // delivered records are piling up: drain soon
  virtual void drain() = 0;              // format delivered records into the file
  virtual void teardown() = 0;           // the window's records are in: detach CUPTI
  virtual void forget_after_fork() = 0;  // fork child: CUDA is unusable, drop everything
};

class Session {
 public:
  // The process's session, created on first call; nullptr when GPUSCOPE_TRACE_DIR is unset or no
  // record file can be created there. `started_by` ("nvtx", "cuda") goes into the header.
  static Session* get(const char* started_by) noexcept;
  // The session if one exists, without creating it.
  static Session* existing() noexcept;

  const Config& config() const { return config_; }

  // In a fork child, creates the child's file on its first record. Every entry point calls it
  // before recording. REQUIRES: the window's mutex not held.
  void ensure_open() noexcept;

  // Runs `write(writer, scratch)` under the writer's lock, unless the session has finished.
  template <typename F>
  void with_writer(F&& write) noexcept {
    try {
      std::lock_guard lock(writer_.mutex());
      if (finished_) return;
      write(writer_, scratch_);
    } catch (...) {
    }
  }

  // A step mark: writes the "step" record and moves the window.
  void on_step(uint64_t ts, uint32_t tid) noexcept;
  // The steps-expected mark (the Python shim saw an optimizer made): the window waits for steps.
  void on_steps_expected() noexcept;

  // CUPTI is ready (or not): the window may open right away.
  void attach_backend(ActivityBackend* backend) noexcept;

  // Finishes the file: window closed, CUPTI flushed, drop counts, "end". Idempotent.
  void finish(const char* reason) noexcept;

  // The path of this process's record file.
  const std::string& path() const { return path_; }

  pid_t pid() const { return pid_; }

  // For the signal handler and fork hooks (signals.cc): not for other callers.
  void handle_signal_in_flusher(int sig, bool fatal) noexcept;
  void prepare_fork() noexcept;
  void after_fork_parent() noexcept;
  void after_fork_child() noexcept;
  bool flusher_running() const { return flusher_running_.load(); }
  int wake_fd() const { return wake_pipe_[1]; }
  void flusher_loop_entry() noexcept;  // the flusher thread's body

 private:
  Session(Config config, const char* started_by);
  bool open_file();
  void write_header(const char* started_by, pid_t parent);
  void start_flusher() noexcept;
  void flusher_loop() noexcept;
  // REQUIRES: window_mutex_ held.
  void advance_window(uint64_t now) noexcept;
  void apply(const WindowEvent& event, uint64_t now) noexcept;
  void flush_all(bool forced_cupti) noexcept;
  // One flusher tick of what follows the close (WindowClosing).
  void close_step(ActivityBackend& backend, uint64_t now) noexcept;

  Config config_;
  std::string path_;
  pid_t pid_;
  uint64_t origin_ns_;
  RecordWriter writer_;
  std::string scratch_;  // formatting space, used under the writer's lock
  bool finished_ = false;

  std::mutex window_mutex_;  // taken before the writer's mutex, never after
  Window window_;
  WindowClosing closing_;  // the flusher's, after the window closed
  ActivityBackend* backend_ = nullptr;

  pid_t parent_pid_ = 0;
  std::atomic<bool> child_pending_{false};  // a fork child whose file is not open yet
  std::atomic<bool> flusher_running_{false};
  std::atomic<bool> stop_flusher_{false};
  int wake_pipe_[2] = {-1, -1};
};

}  // namespace gpuscope::inject
