// Child processes: run a program without a shell, read its output line by line, and learn how
// it ended (exit code or signal). The only code that starts processes; a workload or a
// person's command is run through gpuscope/observe.h, which builds on this. Used by `burn` for its
// workers, and by every command that observes a workload as "a process under observation" (monitor
// -- CMD, bench, run).
//
// Children are started with posix_spawn (safe from a process with many threads); every pipe is
// close-on-exec in the parent, so a child never holds another child's pipe open. A child's stdin
// is /dev/null.
//
// Interrupts: while an InterruptForwarding lives, SIGINT and SIGTERM sent to this process are
// caught and sent on to every running child started with forward_interrupts, so a child can
// stop cleanly and still report what it measured.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "gpuscope/status.h"

namespace gpuscope {

using LineCallback = std::function<void(std::string_view line)>;

enum class StderrMode {
  inherit,  // the child writes to this process's stderr
  lines,    // each line goes to ProcessOptions::on_stderr_line
  discard,  // /dev/null
};

struct ProcessOptions {
  // argv[0] is the program: a path when it contains '/', else a name searched in $PATH.
  std::vector<std::string> argv;
  // Set in the child's environment on top of this process's own (replacing a variable of the
  // same name); unset_env removes variables. Environment changes are never made in this process.
  std::vector<std::pair<std::string, std::string>> set_env;
  std::vector<std::string> unset_env;

  // Called with each stdout line, without its '\n', on the thread that calls wait(). A last
  // line without '\n' is delivered when the child closes stdout; a line longer than
  // max_line_bytes is delivered in pieces of that size. Null: stdout is inherited.
  LineCallback on_stdout_line;
  StderrMode stderr_mode = StderrMode::inherit;
  LineCallback on_stderr_line;  // REQUIRES: set when stderr_mode is lines
  std::size_t max_line_bytes = std::size_t{1} << 20;

  // Seconds from start() after which the child is sent SIGTERM, and SIGKILL kill_grace_seconds
  // later if it is still there. Absent: no limit.
  std::optional<double> timeout_seconds;
  double kill_grace_seconds = 5.0;

  // The child leads a new process group. A terminal's Ctrl-C then reaches only this process
  // (which forwards it once, see InterruptForwarding) instead of reaching both; signals sent
  // through ChildProcess and the timeout go to the whole group (the child's own children too).
  bool own_process_group = false;
  // While the child runs, signals caught by an active InterruptForwarding are sent on to it.
  bool forward_interrupts = false;

  // After the child has exited, its pipes are read for at most this long: a grandchild that
  // inherited stdout and keeps running must not keep wait() from returning.
  double linger_seconds = 1.0;
};

// How a child ended: exactly one of exit_code and term_signal is set.
struct ProcessExit {
  std::optional<int> exit_code;    // it called exit()
  std::optional<int> term_signal;  // a signal ended it
  bool timed_out = false;          // ended by the timeout (term_signal says with which signal)
  double wall_seconds = 0;         // from start to exit

  bool success() const { return exit_code == 0; }
  // "exit code 3", "killed by signal 11 (SIGSEGV)", "timed out after 5 s, killed by signal 15
  // (SIGTERM)".
  std::string describe() const;
};

// A running child. Destroying one that was not waited for kills it (SIGKILL) and reaps it.
class ChildProcess {
 public:
  // Starts `options.argv[0]`. Fails with invalid_argument for an empty argv or a missing
  // on_stderr_line, not_found when the program does not exist (or is not in $PATH, or its name
  // is empty), permission_denied when it cannot be executed (no execute permission, a directory,
  // a file in an unknown binary format), io_error when pipes or the spawn fail otherwise.
  // The child starts with no signal blocked and the default action for SIGINT, SIGTERM, SIGHUP,
  // SIGQUIT, SIGPIPE and SIGXFSZ, whatever this process does with them.
  static Result<std::unique_ptr<ChildProcess>> start(ProcessOptions options);
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  pid_t pid() const;

  // Sends `signal` to the child (its group with own_process_group). Ok, and no effect, once the
  // child has been reaped.
  Status send_signal(int signal);

  // Reads the child's output (calling the line callbacks) until it has exited and its pipes are
  // closed or linger_seconds have passed, enforcing the timeout; reaps it. Call it once.
  Result<ProcessExit> wait();

 private:
  struct State;
  explicit ChildProcess(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// start() then wait().
Result<ProcessExit> run_process(ProcessOptions options);

// Starts `argv` (argv[0] a path) as a process nobody here watches: in a session of its own (no
// terminal signal reaches it), with `stdin_fd` and `stdout_fd` as its stdin and stdout, stderr
// inherited, SIGPIPE at its default action. Nothing here reaps or kills it: the caller owns the
// PID. For the sweep's guardian, which must outlive this process. Fails with invalid_argument
// for an empty argv, internal when the spawn fails ("PATH: reason").
Result<pid_t> spawn_detached(const std::vector<std::string>& argv, int stdin_fd, int stdout_fd);

// Whether `program` can be started, resolved as posix_spawnp does: a path when it contains '/',
// else the first executable file of that name in $PATH. not_found ("cannot run X: command not
// found", also for an empty name) or permission_denied ("not executable"; a directory) otherwise.
// A file in an unknown binary format passes here and fails in ChildProcess::start.
Status check_program(const std::string& program);

// The one exit-code policy for a person's command that gpuscope runs (monitor -- CMD): what a
// POSIX shell answers, so that wrapping a command in gpuscope changes nothing a script sees.
//   - ran: its own exit code, or 128 + N when signal N ended it;
//   - could not start: 127 when it was not found (or its name is empty), 126 when it was found
//     but cannot be executed (permission, a directory, an unknown binary format). Any other
//     start failure (out of file descriptors, ...) is gpuscope's own: nullopt, and the caller
//     reports it with its usual exit code.
int command_exit_code(const ProcessExit& exit);
std::optional<int> command_start_exit_code(const Status& start_failure);

// Makes a write past the file-size limit (ulimit -f, RLIMIT_FSIZE) fail with EFBIG, which every
// writer reports like a full disk (whole rows kept, a clear error), instead of SIGXFSZ killing
// this process mid-row and orphaning its children. Children started by ChildProcess get the
// default action back. Call once, early in main.
void ignore_file_size_signal();

// Splits a byte stream into lines: feed() chunks as they arrive, finish() at end of stream.
class LineSplitter {
 public:
  LineSplitter(LineCallback on_line, std::size_t max_line_bytes)
      : on_line_(std::move(on_line)), max_line_bytes_(max_line_bytes) {}
  void feed(std::string_view bytes);
  void finish();  // delivers a last line that had no '\n'

 private:
  LineCallback on_line_;
  std::size_t max_line_bytes_;
  std::string partial_;
};

// Catches SIGINT and SIGTERM for as long as it lives and sends each one on to the running
// children that asked for it (ProcessOptions::forward_interrupts); restores the previous
// handlers when destroyed. From the third signal on, children are sent SIGKILL instead: someone
// pressing Ctrl-C three times wants everything gone. At most one may exist at a time.
class InterruptForwarding {
 public:
  // Fails with internal if one already exists or the handlers cannot be installed.
  static Result<std::unique_ptr<InterruptForwarding>> install();
  ~InterruptForwarding();
  InterruptForwarding(const InterruptForwarding&) = delete;
  InterruptForwarding& operator=(const InterruptForwarding&) = delete;

  // Signals caught since install(), and the last one (0 if none). Safe from any thread.
  static int signals_received();
  static int last_signal();

 private:
  InterruptForwarding() = default;
};

// "SIGINT", "SIGKILL", ...; "signal N" for others.
std::string signal_name(int signal);

}  // namespace gpuscope
