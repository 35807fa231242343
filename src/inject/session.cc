#include "inject/session.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <new>

#include "inject/clock.h"
#include "inject/json_line.h"
#include "inject/signals.h"

namespace gpuscope::inject {
namespace {

constexpr size_t kBufferBytes = 1 << 20;  // the writer's buffer: the bound on unflushed records
constexpr int kTickMs = 100;              // how often the flusher checks a time-based window

std::atomic<Session*> g_session{nullptr};
std::once_flag g_once;

const char* env(const char* name) {
  return std::getenv(name);
}

std::string read_small_file(const char* path, size_t limit) {
  std::string text;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) return text;
  char chunk[4096];
  while (text.size() < limit) {
    const ssize_t n = read(fd, chunk, sizeof chunk);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    text.append(chunk, static_cast<size_t>(n));
  }
  close(fd);
  return text;
}

// The command line as a JSON array of strings.
std::string cmdline_json() {
  const std::string raw = read_small_file("/proc/self/cmdline", 64 * 1024);
  std::string out = "[";
  size_t start = 0;
  bool first = true;
  while (start < raw.size()) {
    size_t end = raw.find('\0', start);
    if (end == std::string::npos) end = raw.size();
    if (!first) out += ',';
    append_json_string(out, std::string_view(raw).substr(start, end - start));
    first = false;
    start = end + 1;
  }
  return out + "]";
}

std::string exe_path() {
  char buffer[4096];
  const ssize_t n = readlink("/proc/self/exe", buffer, sizeof buffer - 1);
  return n > 0 ? std::string(buffer, static_cast<size_t>(n)) : std::string();
}

std::string host_name() {
  char buffer[256] = {};
  gethostname(buffer, sizeof buffer - 1);
  return buffer;
}

std::string window_json(const Config& config) {
  std::string out = "{";
  const auto field = [&](const char* name, auto value) {
    if (out.size() > 1) out += ',';
    append_json_string(out, name);
    out += ':';
    out += std::to_string(value);
  };
  if (config.skip_steps) field("skip_steps", *config.skip_steps);
  if (config.steps) field("steps", *config.steps);
  if (config.skip_s) field("skip_s", *config.skip_s);
  if (config.duration_s) field("duration_s", *config.duration_s);
  return out + "}";
}

void* flusher_main(void* session) {
  static_cast<Session*>(session)->flusher_loop_entry();
  return nullptr;
}

}  // namespace

Session* Session::get(const char* started_by) noexcept {
  try {
    std::call_once(g_once, [started_by] {
      Config config = read_config(env);
      if (config.dir.empty()) return;
      auto* session = new (std::nothrow) Session(std::move(config), started_by);
      if (session == nullptr) return;
      if (session->path_.empty()) {
        delete session;
        return;
      }
      g_session.store(session);
      // Never deleted: threads of the host program may still emit records during exit.
      install_signal_handlers(session);
      pthread_atfork(
          [] {
            if (auto* s = existing()) s->prepare_fork();
          },
          [] {
            if (auto* s = existing()) s->after_fork_parent();
          },
          [] {
            if (auto* s = existing()) s->after_fork_child();
          });
      std::atexit([] {
        if (auto* s = existing()) s->finish("exit");
      });
      session->start_flusher();
    });
  } catch (...) {
  }
  return g_session.load();
}

Session* Session::existing() noexcept {
  return g_session.load();
}

Session::Session(Config config, const char* started_by)
    : config_(std::move(config)),
      pid_(getpid()),
      origin_ns_(now_ns()),
      writer_(-1, kBufferBytes, config_.max_bytes),
      window_(WindowSettings{config_.skip_steps, config_.steps, config_.skip_s, config_.duration_s},
              origin_ns_),
      closing_(static_cast<uint64_t>(config_.gpu_wait_s * 1e9)) {
  if (!open_file()) return;
  write_header(started_by, getppid());
  std::lock_guard lock(window_mutex_);
  advance_window(origin_ns_);
}

bool Session::open_file() {
  mkdir(config_.dir.c_str(), 0755);  // gpuscope makes the folder; this covers a bare run
  for (int attempt = 0; attempt < 100; ++attempt) {
    std::string path = config_.dir + "/gpuscope-trace-" + std::to_string(getpid());
    if (attempt > 0) path += "." + std::to_string(attempt);
    path += ".jsonl";
    const int fd = open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_APPEND | O_CLOEXEC, 0644);
    if (fd >= 0) {
      writer_.reset(fd);
      path_ = std::move(path);
      return true;
    }
    if (errno != EEXIST) break;
  }
  path_.clear();
  return false;
}

void Session::write_header(const char* started_by, pid_t parent) {
  std::lock_guard lock(writer_.mutex());
  std::string errors = "[";
  for (const auto& error : config_.errors) {
    if (errors.size() > 1) errors += ',';
    append_json_string(errors, error);
  }
  errors += ']';
  JsonLine line(scratch_, "header");
  line.s("format", "gpuscope-trace-records").u("version", 1);
  line.i("pid", getpid()).i("ppid", parent).s("host", host_name()).s("exe", exe_path());
  line.raw("cmdline", cmdline_json()).s("started_by", started_by);
  line.s("clock", kClockName).u("origin_ns", origin_ns_).u("origin_realtime_ns", realtime_now_ns());
  line.raw("window", window_json(config_)).s("step_mark", config_.step_mark);
  line.u("max_bytes", config_.max_bytes).u("flush_ms", config_.flush_ms);
  line.s("kinds", kind_list(config_.kinds)).s("api", config_.api_all ? "all" : "calls");
  line.b("defer", config_.defer).b("teardown", config_.teardown).raw("config_errors", errors);
  writer_.append(line.end(), RecordKind::other, /*forced=*/true);
  writer_.flush();
}

void Session::on_step(uint64_t ts, uint32_t tid) noexcept {
  ensure_open();
  try {
    std::lock_guard lock(window_mutex_);
    window_.count_step(ts);
    const uint64_t n = window_.steps_seen() - 1;
    with_writer([&](RecordWriter& writer, std::string& scratch) {
      writer.append(JsonLine(scratch, "step").u("n", n).u("ts", ts).u("tid", tid).end(),
                    RecordKind::step);
    });
    advance_window(ts);
  } catch (...) {
  }
}

void Session::on_steps_expected() noexcept {
  try {
    std::lock_guard lock(window_mutex_);
    window_.expect_steps();
  } catch (...) {
  }
}

void Session::attach_backend(ActivityBackend* backend) noexcept {
  ensure_open();
  try {
    std::lock_guard lock(window_mutex_);
    backend_ = backend;
    if (backend_ != nullptr && window_.state() == WindowState::open) backend_->enable();
    advance_window(now_ns());
  } catch (...) {
  }
}

void Session::advance_window(uint64_t now) noexcept {
  for (int i = 0; i < 4; ++i) {
    const WindowEvent event = window_.advance(now);
    if (event.kind == WindowEvent::none) return;
    apply(event, now);
  }
}

void Session::apply(const WindowEvent& event, uint64_t now) noexcept {
  if (event.kind == WindowEvent::steps_begin) {  // opened on time; the traced steps begin now
    with_writer([&](RecordWriter& writer, std::string& scratch) {
      writer.append(JsonLine(scratch, "window_steps").u("ts", now).u("step", event.step).end(),
                    RecordKind::other, /*forced=*/false);
    });
    return;
  }
  const bool opened = event.kind == WindowEvent::opened;
  const uint64_t before = now_ns();
  // At the close CUPTI keeps recording: the flusher stops it once the GPU has finished the
  // window's work (close_step), off the program's threads.
  if (backend_ != nullptr && opened) backend_->enable();
  const uint64_t cost = now_ns() - before;
  with_writer([&](RecordWriter& writer, std::string& scratch) {
    JsonLine line(scratch, opened ? "window_begin" : "window_end");
    line.u("ts", now).u("step", event.step).s("reason", event.reason);
    if (backend_ != nullptr && opened) line.u("enable_ns", cost);
    writer.append(line.end(), RecordKind::other, /*forced=*/!opened);
  });
}

void Session::flush_all(bool forced_cupti) noexcept {
  if (backend_ != nullptr) backend_->flush(forced_cupti);
  try {
    std::lock_guard lock(writer_.mutex());
    writer_.flush();
  } catch (...) {
  }
}

void Session::finish(const char* reason) noexcept {
  try {
    if (getpid() != pid_ || child_pending_.load()) return;
    {
      std::lock_guard lock(writer_.mutex());
      if (finished_) return;
    }
    stop_flusher_.store(true);
    if (wake_pipe_[1] >= 0) {
      const char byte = 'x';
      [[maybe_unused]] const ssize_t n = write(wake_pipe_[1], &byte, 1);
    }
    for (int i = 0; i < 200 && flusher_running_.load(); ++i) usleep(5000);
    std::lock_guard window_lock(window_mutex_);
    const uint64_t now = now_ns();
    const WindowEvent closed = window_.close(now, reason);
    if (closed.kind != WindowEvent::none) apply(closed, now);
    if (backend_ != nullptr) {
      backend_->flush(/*forced=*/true);
      backend_->drain();
    }
    std::lock_guard lock(writer_.mutex());
    finished_ = true;
    JsonLine dropped(scratch_, "dropped");
    dropped.s("reason", config_.max_bytes != 0 ? "max_bytes" : "none");
    for (size_t k = 0; k < static_cast<size_t>(RecordKind::count_); ++k) {
      const auto kind = static_cast<RecordKind>(k);
      if (writer_.dropped(kind) != 0) dropped.u(record_kind_name(kind), writer_.dropped(kind));
    }
    dropped.u("total", writer_.dropped_total());
    writer_.append(dropped.end(), RecordKind::other, /*forced=*/true);
    JsonLine end(scratch_, "end");
    end.u("ts", now_ns()).s("reason", reason).u("steps", window_.steps_seen());
    end.u("records", writer_.records() + 1).u("dropped", writer_.dropped_total());
    writer_.append(end.end(), RecordKind::other, /*forced=*/true);
    writer_.flush();
  } catch (...) {
  }
}

void Session::start_flusher() noexcept {
  if (wake_pipe_[0] >= 0) {
    close(wake_pipe_[0]);
    close(wake_pipe_[1]);
  }
  if (pipe2(wake_pipe_, O_CLOEXEC | O_NONBLOCK) != 0) {
    wake_pipe_[0] = wake_pipe_[1] = -1;
    return;
  }
  stop_flusher_.store(false);
  // The thread must never take the host program's signals: block them all while creating it.
  sigset_t all, previous;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &previous);
  pthread_t thread;
  pthread_attr_t attr;
  pthread_attr_init(&attr);
  pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
  flusher_running_.store(true);
  if (pthread_create(&thread, &attr, flusher_main, this) != 0) flusher_running_.store(false);
  pthread_attr_destroy(&attr);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
}

void Session::flusher_loop_entry() noexcept {
  flusher_loop();
  flusher_running_.store(false);
}

void Session::flusher_loop() noexcept {
  uint64_t last_flush = now_ns();
  const uint64_t flush_every = uint64_t{config_.flush_ms} * 1'000'000;
  while (!stop_flusher_.load()) {
    pollfd wake{wake_pipe_[0], POLLIN, 0};
    poll(&wake, 1, kTickMs);
    char drain[64];
    while (read(wake_pipe_[0], drain, sizeof drain) > 0) {
    }
    if (stop_flusher_.load()) break;
    if (const int sig = take_signal_request(); sig != 0) {
      handle_signal_in_flusher(sig, signal_is_fatal(sig));
      signal_request_done(sig);
      continue;
    }
    const uint64_t now = now_ns();
    ActivityBackend* backend = nullptr;
    bool window_open = false;
    bool window_closed = false;
    {
      std::lock_guard lock(window_mutex_);
      advance_window(now);
      window_open = window_.state() == WindowState::open;
      window_closed = window_.state() == WindowState::closed;
      backend = backend_;
    }
    // Records are formatted outside the window, or inside it once half the buffer pool waits.
    if (backend != nullptr && (!window_open || backend->wants_draining())) backend->drain();
    // After the window closes: the wait for the GPU, then CUPTI stopped, flushed and detached
    // (WindowClosing). Inside the window CUPTI hands buffers back as they fill; only when
    // records are formatted as they come (no defer) is it flushed periodically too.
    if (window_closed && backend != nullptr) {
      closing_.begin(now);
      close_step(*backend, now);
    }
    if (now - last_flush >= flush_every) {
      if (backend != nullptr && window_open && !config_.defer) backend->flush(/*forced=*/false);
      std::lock_guard lock(writer_.mutex());
      writer_.flush();
      last_flush = now;
    }
  }
}

void Session::close_step(ActivityBackend& backend, uint64_t now) noexcept {
  // With no wait asked (GPUSCOPE_TRACE_GPU_WAIT_S=0) the GPU is not touched at all.
  const bool gpu_done = closing_.waiting_for_gpu() && config_.gpu_wait_s > 0 && backend.gpu_done();
  switch (closing_.tick(now, gpu_done)) {
    case WindowClosing::Action::none:
    case WindowClosing::Action::wait_gpu:
      return;
    case WindowClosing::Action::stop: {
      const uint64_t before = now_ns();
      backend.disable();
      const uint64_t cost = now_ns() - before;
      with_writer([&](RecordWriter& writer, std::string& scratch) {
        JsonLine line(scratch, "window_gpu_end");
        line.u("ts", closing_.gpu_end_ns()).s("status", closing_.gpu_status());
        line.u("waited_ns", closing_.waited_ns()).u("disable_ns", cost);
        writer.append(line.end(), RecordKind::other, /*forced=*/true);
      });
      backend.flush(/*forced=*/false);
      backend.drain();
      return;
    }
    case WindowClosing::Action::flush:
      backend.flush(/*forced=*/false);
      backend.drain();
      return;
    case WindowClosing::Action::flush_and_teardown:
      backend.flush(/*forced=*/true);
      backend.drain();
      backend.teardown();
      return;
  }
}

void Session::handle_signal_in_flusher(int sig, bool fatal) noexcept {
  // The interrupted thread may hold either mutex: try, never wait.
  const uint64_t now = now_ns();
  if (fatal && window_mutex_.try_lock()) {
    const WindowEvent closed = window_.close(now, "signal");
    if (closed.kind != WindowEvent::none) apply(closed, now);
    if (backend_ != nullptr) {
      backend_->flush(/*forced=*/true);
      backend_->drain();
    }
    window_mutex_.unlock();
  }
  if (writer_.mutex().try_lock()) {
    JsonLine line(scratch_, "signal");
    line.i("sig", sig).u("ts", now).b("fatal", fatal);
    writer_.append(line.end(), RecordKind::other, /*forced=*/true);
    writer_.flush();
    writer_.mutex().unlock();
  }
}

void Session::prepare_fork() noexcept {
  window_mutex_.lock();
  writer_.mutex().lock();
}

void Session::after_fork_parent() noexcept {
  JsonLine line(scratch_, "fork");
  line.u("ts", now_ns()).u("tid", current_tid());
  writer_.append(line.end(), RecordKind::other);
  writer_.mutex().unlock();
  window_mutex_.unlock();
}

void Session::after_fork_child() noexcept {
  // One thread lives on, holding both mutexes (prepare_fork): the state is ours to rewrite. The
  // child's file waits for its first record (ensure_open), so a child that only execs (or a
  // DataLoader worker that records nothing) leaves no file and starts no thread.
  parent_pid_ = pid_;
  pid_ = getpid();
  origin_ns_ = now_ns();
  if (backend_ != nullptr) backend_->forget_after_fork();
  backend_ = nullptr;
  window_ =
      Window(WindowSettings{config_.skip_steps, config_.steps, config_.skip_s, config_.duration_s},
             origin_ns_);
  closing_ = WindowClosing(static_cast<uint64_t>(config_.gpu_wait_s * 1e9));
  finished_ = false;
  flusher_running_.store(false);
  child_pending_.store(true);
  writer_.mutex().unlock();
  window_mutex_.unlock();
}

void Session::ensure_open() noexcept {
  if (!child_pending_.load(std::memory_order_acquire)) return;
  try {
    std::lock_guard window_lock(window_mutex_);
    if (!child_pending_.load()) return;
    const bool opened = open_file();
    if (!opened) {
      std::lock_guard lock(writer_.mutex());
      finished_ = true;
    } else {
      write_header("fork", parent_pid_);
      advance_window(now_ns());
    }
    child_pending_.store(false, std::memory_order_release);
    if (opened) start_flusher();
  } catch (...) {
  }
}

}  // namespace gpuscope::inject
