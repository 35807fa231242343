// observe::Process: a ChildProcess with the GPU it may use, the Ctrl-C policy, a reader thread
// (the JSON-lines reader, the stderr tail, the watchers) and stop().
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <csignal>
#include <cstdlib>
#include <mutex>
#include <thread>

#include "gpuscope/observe.h"

namespace gpuscope::observe {
namespace {

using Clock = std::chrono::steady_clock;

// The child's options from ours. The callbacks it gets write to `outcome`/`tail` of the state.
ProcessOptions child_options(const Options& o) {
  ProcessOptions po;
  po.argv = o.argv;
  po.set_env = o.env;
  // NVLink multicast stays off in every process gpuscope starts (the lent GPU machines ask it),
  // unless the user set it, or the caller does.
  constexpr const char* kNvls = "NCCL_NVLS_ENABLE";
  const bool caller_sets = std::any_of(o.env.begin(), o.env.end(),
                                       [&](const auto& entry) { return entry.first == kNvls; });
  if (!caller_sets && std::getenv(kNvls) == nullptr) po.set_env.emplace_back(kNvls, "0");
  if (o.visible_devices) po.set_env.emplace_back("CUDA_VISIBLE_DEVICES", *o.visible_devices);
  po.unset_env = o.unset_env;
  po.own_process_group = o.interrupts != Interrupts::share;
  po.forward_interrupts = o.interrupts == Interrupts::forward;
  po.timeout_seconds = o.timeout_seconds;
  po.kill_grace_seconds = o.kill_grace_seconds;
  po.linger_seconds = o.linger_seconds;
  po.stderr_mode = o.stderr_mode;
  return po;
}

}  // namespace

std::optional<int> Outcome::command_exit_code() const {
  if (!started()) return command_start_exit_code(start_status);
  return gpuscope::command_exit_code(exit);
}

struct Process::State {
  std::unique_ptr<ChildProcess> child;
  std::vector<Watcher*> watchers;
  pid_t pid = 0;
  int signals_before = 0;
  std::thread reader;

  std::mutex mutex;
  std::condition_variable ended;
  bool done = false;  // guarded by mutex
  bool waited = false;
  Outcome outcome;

  // The reader thread: the watchers, the output, the reaping.
  void read() {
    for (Watcher* w : watchers) w->started(pid);
    Result<ProcessExit> exit = child->wait();
    if (exit.ok()) {
      outcome.exit = *exit;
    } else {
      outcome.start_status = exit.status();
    }
    outcome.interrupted = InterruptForwarding::signals_received() > signals_before;
    for (Watcher* w : watchers) w->ended(outcome.exit);
    std::lock_guard lock(mutex);
    done = true;
    ended.notify_all();
  }
};

Process::Process(std::unique_ptr<State> state) : state_(std::move(state)) {}

Process::~Process() {
  if (!state_) return;
  if (state_->reader.joinable()) {
    if (!done()) (void)state_->child->send_signal(SIGKILL);
    state_->reader.join();
  }
}

Result<std::unique_ptr<Process>> Process::start(Options options) {
  if (options.on_json_line && options.on_stdout_line) {
    return Status(Code::invalid_argument, "stdout is read either as JSON lines or as lines");
  }
  auto state = std::make_unique<State>();
  State* s = state.get();
  ProcessOptions po = child_options(options);

  if (options.on_json_line) {
    std::function<double()> clock = options.clock;
    if (!clock) {
      clock = [t0 = Clock::now()] {
        return std::chrono::duration<double>(Clock::now() - t0).count();
      };
    }
    po.on_stdout_line = [on_line = std::move(options.on_json_line),
                         clock = std::move(clock)](std::string_view text) {
      JsonLine line;
      line.text = text;
      line.received_s = clock();
      const nlohmann::json parsed =
          nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
      if (parsed.is_object()) line.object = &parsed;
      on_line(line);
    };
  } else {
    po.on_stdout_line = std::move(options.on_stdout_line);
  }
  if (options.stderr_mode == StderrMode::lines) {
    po.on_stderr_line = [s, keep = options.stderr_tail_lines,
                         on_line = std::move(options.on_stderr_line)](std::string_view text) {
      if (keep > 0) {
        s->outcome.stderr_tail.emplace_back(text);
        if (s->outcome.stderr_tail.size() > keep) s->outcome.stderr_tail.pop_front();
      }
      if (on_line) on_line(text);
    };
  }

  s->watchers = std::move(options.watchers);
  s->signals_before = InterruptForwarding::signals_received();
  GPUSCOPE_ASSIGN_OR_RETURN(s->child, ChildProcess::start(std::move(po)));
  s->pid = s->child->pid();
  s->outcome.pid = s->pid;
  s->reader = std::thread([s] { s->read(); });
  return std::unique_ptr<Process>(new Process(std::move(state)));
}

pid_t Process::pid() const {
  return state_->pid;
}

bool Process::done() const {
  std::lock_guard lock(state_->mutex);
  return state_->done;
}

bool Process::in_tree(pid_t pid) const {
  return state_->pid > 0 && descends_from(pid, state_->pid);
}

Status Process::send_signal(int signal) {
  return state_->child->send_signal(signal);
}

Outcome Process::stop(double grace_seconds) {
  (void)send_signal(SIGTERM);
  {
    std::unique_lock lock(state_->mutex);
    const bool ended = state_->ended.wait_for(lock, std::chrono::duration<double>(grace_seconds),
                                              [this] { return state_->done; });
    if (!ended) (void)send_signal(SIGKILL);
  }
  return wait();
}

Outcome Process::wait() {
  if (state_->waited) {
    Outcome twice;
    twice.start_status = Status(Code::internal, "observe::Process::wait() called twice");
    return twice;
  }
  state_->waited = true;
  if (state_->reader.joinable()) state_->reader.join();
  return state_->outcome;
}

Outcome run(Options options) {
  Result<std::unique_ptr<Process>> process = Process::start(std::move(options));
  if (!process.ok()) {
    Outcome refused;
    refused.start_status = process.status();
    return refused;
  }
  return (*process)->wait();
}

}  // namespace gpuscope::observe
