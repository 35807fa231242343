// Child processes through posix_spawn, their output through non-blocking pipes and poll(), and
// SIGINT/SIGTERM forwarding through a fixed table of pids that a signal handler can read.
#include "gpuscope/process.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "gpuscope/exit_codes.h"

extern char** environ;

namespace gpuscope {
namespace {

// ---------------------------------------------------------------------------------------------
// Interrupt forwarding. The handler may only touch lock-free atomics and call kill(), so the
// children to forward to live in a fixed table: a pid, or -pgid for a child leading a group.

constexpr int kMaxForwarded = 256;
std::array<std::atomic<pid_t>, kMaxForwarded> g_forward_targets{};
std::atomic<int> g_signals_received{0};
std::atomic<int> g_last_signal{0};
std::atomic<bool> g_forwarding_installed{false};
struct sigaction g_previous_int {};
struct sigaction g_previous_term {};

extern "C" void forward_interrupt(int signal) {
  const int saved_errno = errno;
  const int count = g_signals_received.fetch_add(1) + 1;
  g_last_signal.store(signal);
  const int to_send = count >= 3 ? SIGKILL : signal;
  for (std::atomic<pid_t>& slot : g_forward_targets) {
    const pid_t target = slot.load();
    if (target != 0) kill(target, to_send);
  }
  errno = saved_errno;
}

// The slot taken, or -1 when the table is full (the child then runs without forwarding).
int register_forward_target(pid_t target) {
  for (int i = 0; i < kMaxForwarded; ++i) {
    pid_t expected = 0;
    if (g_forward_targets[i].compare_exchange_strong(expected, target)) return i;
  }
  return -1;
}

void unregister_forward_target(int slot) {
  if (slot >= 0) g_forward_targets[slot].store(0);
}

// ---------------------------------------------------------------------------------------------
// Spawning

double seconds_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

Status errno_status(Code code, std::string_view what, int error) {
  return Status(code, fmt::format("{}: {}", what, std::strerror(error)));
}

Status spawn_error(const std::string& program, int error) {
  const bool searched = program.find('/') == std::string::npos;
  switch (error) {
    case ENOENT:
      return Status(Code::not_found,
                    searched ? fmt::format("cannot run '{}': no such program in $PATH", program)
                             : fmt::format("cannot run '{}': no such file", program));
    case EACCES:
    case EPERM:
      return Status(Code::permission_denied,
                    fmt::format("cannot run '{}': permission denied (not executable?)", program));
    case ENOEXEC:
      // Found and executable, but neither a binary for this machine nor a script with "#!".
      return Status(Code::permission_denied,
                    fmt::format("cannot run '{}': not an executable format", program));
    default:
      return errno_status(Code::io_error, fmt::format("cannot run '{}'", program), error);
  }
}

// NAME=VALUE strings for the child: ours, minus what is unset or replaced, plus set_env.
std::vector<std::string> child_environment(const ProcessOptions& options) {
  auto name_listed = [&](std::string_view name) {
    for (const auto& [key, value] : options.set_env) {
      if (key == name) return true;
    }
    for (const std::string& key : options.unset_env) {
      if (key == name) return true;
    }
    return false;
  };
  std::vector<std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    if (!name_listed(text.substr(0, text.find('=')))) env.emplace_back(text);
  }
  for (const auto& [key, value] : options.set_env) env.push_back(key + "=" + value);
  return env;
}

std::vector<char*> c_strings(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  pointers.reserve(strings.size() + 1);
  for (std::string& s : strings) pointers.push_back(s.data());
  pointers.push_back(nullptr);
  return pointers;
}

// A pipe whose ends are both close-on-exec, so that no other child inherits them.
Status make_pipe(int fds[2]) {
  if (pipe2(fds, O_CLOEXEC) != 0) return errno_status(Code::io_error, "pipe2", errno);
  return {};
}

void close_fd(int& fd) {
  if (fd >= 0) close(fd);
  fd = -1;
}

// posix_spawn's C objects, destroyed on every path.
struct SpawnSetup {
  posix_spawn_file_actions_t actions{};
  posix_spawnattr_t attributes{};
  SpawnSetup() {
    posix_spawn_file_actions_init(&actions);
    posix_spawnattr_init(&attributes);
  }
  ~SpawnSetup() {
    posix_spawn_file_actions_destroy(&actions);
    posix_spawnattr_destroy(&attributes);
  }
  SpawnSetup(const SpawnSetup&) = delete;
  SpawnSetup& operator=(const SpawnSetup&) = delete;
};

}  // namespace

// ---------------------------------------------------------------------------------------------

struct ChildProcess::State {
  ProcessOptions options;
  pid_t pid = -1;
  pid_t signal_target = -1;  // pid, or -pid when the child leads its own group
  int forward_slot = -1;
  int stdout_fd = -1;
  int stderr_fd = -1;
  std::chrono::steady_clock::time_point started;
  std::mutex mutex;  // guards `reaped` against send_signal() racing the reaping in wait()
  bool reaped = false;
  bool waited = false;

  // Reaps the child. REQUIRES: it has exited (waitid said so).
  int reap() {
    std::lock_guard lock(mutex);
    unregister_forward_target(forward_slot);
    forward_slot = -1;
    int raw = 0;
    while (waitpid(pid, &raw, 0) < 0 && errno == EINTR) {
    }
    reaped = true;
    return raw;
  }
};

ChildProcess::ChildProcess(std::unique_ptr<State> state) : state_(std::move(state)) {}

ChildProcess::~ChildProcess() {
  if (!state_) return;
  if (!state_->reaped && state_->pid > 0) {
    kill(state_->signal_target, SIGKILL);
    state_->reap();
  }
  close_fd(state_->stdout_fd);
  close_fd(state_->stderr_fd);
}

pid_t ChildProcess::pid() const {
  return state_->pid;
}

Result<std::unique_ptr<ChildProcess>> ChildProcess::start(ProcessOptions options) {
  if (options.argv.empty()) {
    return Status(Code::invalid_argument, "no program to run (empty argv)");
  }
  if (options.argv.front().empty()) {
    return Status(Code::not_found, "cannot run '': command not found (the name is empty)");
  }
  if (options.stderr_mode == StderrMode::lines && !options.on_stderr_line) {
    return Status(Code::invalid_argument, "stderr_mode lines needs on_stderr_line");
  }
  if (options.max_line_bytes == 0) options.max_line_bytes = 1;

  auto state = std::make_unique<State>();
  int out_pipe[2] = {-1, -1};
  int err_pipe[2] = {-1, -1};
  auto close_all = [&] {
    for (int* fd : {&out_pipe[0], &out_pipe[1], &err_pipe[0], &err_pipe[1]}) close_fd(*fd);
  };

  SpawnSetup setup;
  posix_spawn_file_actions_addopen(&setup.actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  if (options.on_stdout_line) {
    if (Status s = make_pipe(out_pipe); !s.ok()) return s;
    posix_spawn_file_actions_adddup2(&setup.actions, out_pipe[1], STDOUT_FILENO);
  }
  if (options.stderr_mode == StderrMode::lines) {
    if (Status s = make_pipe(err_pipe); !s.ok()) {
      close_all();
      return s;
    }
    posix_spawn_file_actions_adddup2(&setup.actions, err_pipe[1], STDERR_FILENO);
  } else if (options.stderr_mode == StderrMode::discard) {
    posix_spawn_file_actions_addopen(&setup.actions, STDERR_FILENO, "/dev/null", O_WRONLY, 0);
  }

  // The child starts with no signal blocked and the default action for the signals a parent
  // commonly catches or ignores (ours are caught while forwarding; a shell may ignore others).
  sigset_t empty, defaults;
  sigemptyset(&empty);
  sigemptyset(&defaults);
  for (int sig : {SIGINT, SIGTERM, SIGHUP, SIGQUIT, SIGPIPE, SIGXFSZ}) sigaddset(&defaults, sig);
  short flags = POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF;
  if (options.own_process_group) {
    flags = static_cast<short>(flags | POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&setup.attributes, 0);
  }
  posix_spawnattr_setflags(&setup.attributes, flags);
  posix_spawnattr_setsigmask(&setup.attributes, &empty);
  posix_spawnattr_setsigdefault(&setup.attributes, &defaults);

  std::vector<std::string> argv_strings = options.argv;
  std::vector<std::string> env_strings = child_environment(options);
  std::vector<char*> argv = c_strings(argv_strings);
  std::vector<char*> envp = c_strings(env_strings);

  const std::string& program = options.argv.front();
  const bool path_given = program.find('/') != std::string::npos;
  pid_t pid = -1;
  const int rc = path_given ? posix_spawn(&pid, program.c_str(), &setup.actions, &setup.attributes,
                                          argv.data(), envp.data())
                            : posix_spawnp(&pid, program.c_str(), &setup.actions, &setup.attributes,
                                           argv.data(), envp.data());
  close_fd(out_pipe[1]);
  close_fd(err_pipe[1]);
  if (rc != 0) {
    close_all();
    return spawn_error(program, rc);
  }

  state->pid = pid;
  state->signal_target = options.own_process_group ? -pid : pid;
  state->started = std::chrono::steady_clock::now();
  state->stdout_fd = out_pipe[0];
  state->stderr_fd = err_pipe[0];
  for (int fd : {state->stdout_fd, state->stderr_fd}) {
    if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  if (options.forward_interrupts) {
    // Signals caught before the child was in the table did not reach it: it gets one now, so
    // that a child started just after a Ctrl-C stops too.
    const int missed = g_signals_received.load();
    state->forward_slot = register_forward_target(state->signal_target);
    if (g_forwarding_installed.load() && missed > 0) {
      kill(state->signal_target, g_last_signal.load());
    }
  }
  state->options = std::move(options);
  return std::unique_ptr<ChildProcess>(new ChildProcess(std::move(state)));
}

Result<pid_t> spawn_detached(const std::vector<std::string>& argv, int stdin_fd, int stdout_fd) {
  if (argv.empty() || argv.front().empty()) {
    return Status(Code::invalid_argument, "no program to run (empty argv)");
  }
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_adddup2(&actions, stdin_fd, STDIN_FILENO);
  posix_spawn_file_actions_adddup2(&actions, stdout_fd, STDOUT_FILENO);
  posix_spawnattr_t attributes;
  posix_spawnattr_init(&attributes);
  sigset_t defaults;
  sigemptyset(&defaults);
  sigaddset(&defaults, SIGPIPE);
  posix_spawnattr_setsigdefault(&attributes, &defaults);
  posix_spawnattr_setflags(&attributes,
                           static_cast<short>(POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF));
  std::vector<std::string> argv_strings = argv;
  std::vector<char*> args = c_strings(argv_strings);
  pid_t pid = -1;
  const int rc = posix_spawn(&pid, args[0], &actions, &attributes, args.data(), environ);
  posix_spawn_file_actions_destroy(&actions);
  posix_spawnattr_destroy(&attributes);
  if (rc != 0) {
    return Status(Code::internal, fmt::format("{}: {}", argv.front(), std::strerror(rc)));
  }
  return pid;
}

Status ChildProcess::send_signal(int signal) {
  std::lock_guard lock(state_->mutex);
  if (state_->reaped) return {};
  if (kill(state_->signal_target, signal) != 0 && errno != ESRCH) {
    return errno_status(Code::internal, fmt::format("kill({}, {})", state_->signal_target, signal),
                        errno);
  }
  return {};
}

Result<ProcessExit> ChildProcess::wait() {
  State& s = *state_;
  if (s.waited) return Status(Code::internal, "ChildProcess::wait() called twice");
  s.waited = true;
  const ProcessOptions& o = s.options;

  struct Stream {
    int* fd;
    LineSplitter splitter;
  };
  std::vector<Stream> streams;
  if (s.stdout_fd >= 0) streams.push_back({&s.stdout_fd, {o.on_stdout_line, o.max_line_bytes}});
  if (s.stderr_fd >= 0) streams.push_back({&s.stderr_fd, {o.on_stderr_line, o.max_line_bytes}});

  ProcessExit result;
  bool exited = false;
  int raw_status = 0;
  double exit_time = 0;
  double term_sent_at = -1;
  bool kill_sent = false;
  std::array<char, 65536> buffer{};

  for (;;) {
    const double now = seconds_since(s.started);
    if (!exited) {
      siginfo_t info{};
      // WNOWAIT: learn that it exited without reaping it, so that it leaves the forwarding
      // table before its pid can be reused.
      const int rc = waitid(P_PID, static_cast<id_t>(s.pid), &info, WEXITED | WNOHANG | WNOWAIT);
      if (rc == 0 && info.si_pid == s.pid) {
        raw_status = s.reap();
        exited = true;
        exit_time = now;
        result.wall_seconds = now;
      } else if (rc != 0 && errno != EINTR) {
        return errno_status(Code::internal, fmt::format("waitid({})", s.pid), errno);
      }
    }

    std::vector<pollfd> fds;
    std::vector<Stream*> polled;
    for (Stream& stream : streams) {
      if (*stream.fd >= 0) {
        fds.push_back({*stream.fd, POLLIN, 0});
        polled.push_back(&stream);
      }
    }
    if (exited && (fds.empty() || now - exit_time >= o.linger_seconds)) break;

    if (!exited && o.timeout_seconds && now >= *o.timeout_seconds) {
      if (term_sent_at < 0) {
        result.timed_out = true;
        term_sent_at = now;
        kill(s.signal_target, SIGTERM);
      } else if (!kill_sent && now >= term_sent_at + o.kill_grace_seconds) {
        kill_sent = true;
        kill(s.signal_target, SIGKILL);
      }
    }

    // Short waits: exit is noticed by polling waitid, and a child with no pipes open is only
    // waited for.
    const int wait_ms = fds.empty() ? 10 : 50;
    const int ready = poll(fds.empty() ? nullptr : fds.data(), fds.size(), wait_ms);
    if (ready <= 0) continue;  // timeout, or EINTR from a forwarded Ctrl-C
    for (std::size_t i = 0; i < fds.size(); ++i) {
      if (fds[i].revents == 0) continue;
      Stream& stream = *polled[i];
      for (;;) {
        const ssize_t n = read(*stream.fd, buffer.data(), buffer.size());
        if (n > 0) {
          stream.splitter.feed(std::string_view(buffer.data(), static_cast<std::size_t>(n)));
          continue;
        }
        if (n < 0 && errno == EINTR) continue;
        if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) break;
        stream.splitter.finish();  // end of stream (or a read error: the same to us)
        close_fd(*stream.fd);
        break;
      }
    }
  }
  for (Stream& stream : streams) {
    if (*stream.fd >= 0) {
      stream.splitter.finish();
      close_fd(*stream.fd);
    }
  }
  if (WIFEXITED(raw_status)) {
    result.exit_code = WEXITSTATUS(raw_status);
  } else if (WIFSIGNALED(raw_status)) {
    result.term_signal = WTERMSIG(raw_status);
  }
  return result;
}

Result<ProcessExit> run_process(ProcessOptions options) {
  GPUSCOPE_ASSIGN_OR_RETURN(std::unique_ptr<ChildProcess> child,
                            ChildProcess::start(std::move(options)));
  return child->wait();
}

Status check_program(const std::string& program) {
  enum class Found { runnable, missing, directory, not_executable };
  auto look = [](const std::string& path) {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return Found::missing;
    if (S_ISDIR(st.st_mode)) return Found::directory;
    return ::access(path.c_str(), X_OK) == 0 ? Found::runnable : Found::not_executable;
  };
  if (program.empty()) {
    return Status(Code::not_found, "cannot run '': command not found (the name is empty)");
  }
  if (program.find('/') != std::string::npos) {
    switch (look(program)) {
      case Found::runnable:
        return Status{};
      case Found::missing:
        return Status(Code::not_found, fmt::format("cannot run {}: no such file", program));
      case Found::directory:
        return Status(Code::permission_denied, fmt::format("cannot run {}: a directory", program));
      case Found::not_executable:
        return Status(Code::permission_denied,
                      fmt::format("cannot run {}: not an executable file", program));
    }
  }
  // Searching $PATH passes over directories, as posix_spawnp and shells do.
  const char* path_env = std::getenv("PATH");
  const std::string path = path_env != nullptr ? path_env : "/usr/local/bin:/usr/bin:/bin";
  bool denied = false;
  for (std::size_t start = 0;;) {
    const std::size_t colon = path.find(':', start);
    const std::string dir = path.substr(start, colon - start);
    const Found found = look((dir.empty() ? "." : dir) + "/" + program);
    if (found == Found::runnable) return Status{};
    denied = denied || found == Found::not_executable;
    if (colon == std::string::npos) break;
    start = colon + 1;
  }
  if (denied) {
    return Status(Code::permission_denied, fmt::format("cannot run {}: not executable", program));
  }
  return Status(Code::not_found, fmt::format("cannot run {}: command not found", program));
}

int command_exit_code(const ProcessExit& exit) {
  if (exit.term_signal) return 128 + *exit.term_signal;
  return exit.exit_code.value_or(kExitError);
}

std::optional<int> command_start_exit_code(const Status& start_failure) {
  switch (start_failure.code()) {
    case Code::not_found:
      return kExitCommandNotFound;
    case Code::permission_denied:
      return kExitCommandNotExecutable;
    default:
      return std::nullopt;
  }
}

void ignore_file_size_signal() {
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  sigemptyset(&ignore.sa_mask);
  sigaction(SIGXFSZ, &ignore, nullptr);
}

std::string ProcessExit::describe() const {
  std::string how;
  if (exit_code) {
    how = fmt::format("exit code {}", *exit_code);
  } else if (term_signal) {
    how = fmt::format("killed by signal {} ({})", *term_signal, signal_name(*term_signal));
  } else {
    how = "ended in an unknown way";
  }
  if (timed_out) return fmt::format("timed out after {:.0f} s, {}", wall_seconds, how);
  return how;
}

// ---------------------------------------------------------------------------------------------

void LineSplitter::feed(std::string_view bytes) {
  while (!bytes.empty()) {
    const std::size_t newline = bytes.find('\n');
    partial_.append(bytes.substr(0, newline));
    while (partial_.size() > max_line_bytes_) {
      on_line_(std::string_view(partial_).substr(0, max_line_bytes_));
      partial_.erase(0, max_line_bytes_);
    }
    if (newline == std::string_view::npos) return;
    on_line_(partial_);
    partial_.clear();
    bytes.remove_prefix(newline + 1);
  }
}

void LineSplitter::finish() {
  if (partial_.empty()) return;
  on_line_(partial_);
  partial_.clear();
}

// ---------------------------------------------------------------------------------------------

Result<std::unique_ptr<InterruptForwarding>> InterruptForwarding::install() {
  if (g_forwarding_installed.exchange(true)) {
    return Status(Code::internal, "interrupt forwarding is already installed");
  }
  g_signals_received.store(0);
  g_last_signal.store(0);
  struct sigaction action {};
  action.sa_handler = forward_interrupt;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  if (sigaction(SIGINT, &action, &g_previous_int) != 0 ||
      sigaction(SIGTERM, &action, &g_previous_term) != 0) {
    const int error = errno;
    sigaction(SIGINT, &g_previous_int, nullptr);
    g_forwarding_installed.store(false);
    return errno_status(Code::internal, "sigaction", error);
  }
  return std::unique_ptr<InterruptForwarding>(new InterruptForwarding());
}

InterruptForwarding::~InterruptForwarding() {
  sigaction(SIGINT, &g_previous_int, nullptr);
  sigaction(SIGTERM, &g_previous_term, nullptr);
  g_forwarding_installed.store(false);
}

int InterruptForwarding::signals_received() {
  return g_signals_received.load();
}

int InterruptForwarding::last_signal() {
  return g_last_signal.load();
}

std::string signal_name(int signal) {
  switch (signal) {
    case SIGHUP:
      return "SIGHUP";
    case SIGINT:
      return "SIGINT";
    case SIGQUIT:
      return "SIGQUIT";
    case SIGILL:
      return "SIGILL";
    case SIGTRAP:
      return "SIGTRAP";
    case SIGABRT:
      return "SIGABRT";
    case SIGBUS:
      return "SIGBUS";
    case SIGFPE:
      return "SIGFPE";
    case SIGKILL:
      return "SIGKILL";
    case SIGUSR1:
      return "SIGUSR1";
    case SIGSEGV:
      return "SIGSEGV";
    case SIGUSR2:
      return "SIGUSR2";
    case SIGPIPE:
      return "SIGPIPE";
    case SIGALRM:
      return "SIGALRM";
    case SIGTERM:
      return "SIGTERM";
    default:
      return fmt::format("signal {}", signal);
  }
}

}  // namespace gpuscope
