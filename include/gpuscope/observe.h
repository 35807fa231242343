// A process under observation: the one way gpuscope runs a workload or a person's command
// (bench rows, burn workers, `monitor -- CMD` and `trace`, study steps, the sweep's workload).
//
//   observe::Options o;
//   o.argv = {"gpuscope-torch", "--model", "resnet50"};   // no shell: argv as given
//   o.visible_devices = "MIG-6a1e...";                    // CUDA_VISIBLE_DEVICES for the child
//   o.timeout_seconds = 600;                              // SIGTERM, then SIGKILL after the grace
//   o.on_json_line = [&](const observe::JsonLine& l) { ... l.object ... };
//   observe::Outcome end = observe::run(std::move(o));
//   if (!end.started()) ...end.start_status...; else ...end.exit, end.interrupted...
//
// What it adds to ChildProcess (gpuscope/process.h, the only code that starts processes):
//   - the GPU it may use, through CUDA_VISIBLE_DEVICES (a GPU or MIG UUID, or an index list);
//   - the Ctrl-C policy (Interrupts): by default the child leads its own process group and a
//     terminal's Ctrl-C reaches it once, sent on by this process's InterruptForwarding (which the
//     command installs for its whole run); Outcome::interrupted says whether one came meanwhile;
//   - timeouts with a grace period, and stop() (SIGTERM, then SIGKILL) to end it early;
//   - the exit-code policy of a person's command (128 + N for signal N, 126/127 when it could
//     not start): Outcome::command_exit_code();
//   - its process tree (in_tree(): the child and its descendants, as /proc shows them);
//   - watchers attached for its whole life (a sampler learns the PID when it starts and is told
//     when it ended, before wait() returns);
//   - a JSON-lines reader of its stdout (the result protocol of gpuscope-torch and the burn
//     worker): each line with its parsed object, stamped on the caller's clock.
#pragma once

#include <sys/types.h>

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuscope/process.h"
#include "gpuscope/status.h"

namespace gpuscope::observe {

// Who sees a terminal's Ctrl-C (SIGINT) and a SIGTERM sent to gpuscope.
enum class Interrupts {
  // The child leads its own process group; while an InterruptForwarding lives, the signals it
  // catches are sent on to the child's group (once each; the third one is SIGKILL). A child
  // then stops cleanly and still reports what it measured. The default.
  forward,
  // Its own process group, nothing forwarded: only this process ends it (stop(), the timeout).
  isolate,
  // Stays in gpuscope's process group: a terminal's signals reach it directly.
  share,
};

// One stdout line of the child, read by the JSON-lines reader.
struct JsonLine {
  std::string_view text;                   // without its '\n'
  const nlohmann::json* object = nullptr;  // the line parsed, when it is a JSON object; else null
  double received_s = 0;                   // Options::clock when it was read
};
using JsonLineCallback = std::function<void(const JsonLine& line)>;

// Something attached to a process for its whole life (a sampler, a recorder). Both calls are
// made from the thread that reads the child's output; started() before the first line is read,
// ended() after the last one, before wait() returns. Neither is called for a process that
// could not be started.
class Watcher {
 public:
  virtual ~Watcher() = default;
  virtual void started(pid_t pid) = 0;
  virtual void ended(const ProcessExit& exit) = 0;
};

struct Options {
  // argv[0] is the program: a path when it contains '/', else a name searched in $PATH.
  std::vector<std::string> argv;
  // Set in the child's environment on top of this process's own; unset_env removes variables.
  std::vector<std::pair<std::string, std::string>> env;
  std::vector<std::string> unset_env;
  // What the child may use, as CUDA_VISIBLE_DEVICES: a GPU UUID ("GPU-..."), a MIG instance's
  // UUID ("MIG-..."), or a CUDA index list. Absent: this process's own value is inherited.
  std::optional<std::string> visible_devices;

  Interrupts interrupts = Interrupts::forward;
  // Seconds from the start after which the child's group is sent SIGTERM, then SIGKILL after
  // kill_grace_seconds more. Absent: no limit.
  std::optional<double> timeout_seconds;
  double kill_grace_seconds = 5.0;

  // stdout: at most one of these. on_json_line reads it as JSON lines (every line, parsed or
  // not); on_stdout_line gets the raw lines; neither: stdout is inherited.
  JsonLineCallback on_json_line;
  LineCallback on_stdout_line;
  // The clock of JsonLine::received_s; null: seconds since start().
  std::function<double()> clock;

  // stderr: inherited, discarded, or as lines (on_stderr_line, optional with stderr_tail_lines).
  StderrMode stderr_mode = StderrMode::inherit;
  LineCallback on_stderr_line;
  // With StderrMode::lines, the last this many lines are kept in Outcome::stderr_tail.
  std::size_t stderr_tail_lines = 0;

  // After the child has exited, its pipes are read for at most this long (a grandchild that
  // inherited stdout must not keep wait() from returning).
  double linger_seconds = 1.0;

  // Told when it starts and when it has ended; not owned, must outlive the process.
  std::vector<Watcher*> watchers;
};

// How an observed process ended.
struct Outcome {
  // Not ok: it never started (exit is then empty), or, rarely, it could not be waited for.
  Status start_status;
  ProcessExit exit;          // how it ended, when it started
  pid_t pid = 0;             // 0 when it never started
  bool interrupted = false;  // an interrupt was caught by InterruptForwarding while it ran
  std::deque<std::string> stderr_tail;  // the last Options::stderr_tail_lines stderr lines

  bool started() const { return start_status.ok(); }
  bool success() const { return started() && exit.success(); }
  // The exit code a shell would give for this command: its own, 128 + N after signal N, 127
  // when it was not found, 126 when it cannot be executed; nullopt for any other start failure
  // (gpuscope's own, reported with its usual exit code).
  std::optional<int> command_exit_code() const;
};

// A running observed process. Destroying one that was not waited for kills it (SIGKILL to its
// group) and reaps it; stop() is the gentle way.
class Process {
 public:
  // Starts `options.argv`. Fails as ChildProcess::start does (invalid_argument, not_found,
  // permission_denied, io_error), and with invalid_argument when both on_json_line and
  // on_stdout_line are set. Its output is read, and the watchers told, on a thread of its own.
  static Result<std::unique_ptr<Process>> start(Options options);
  ~Process();
  Process(const Process&) = delete;
  Process& operator=(const Process&) = delete;

  pid_t pid() const;
  // Whether it has ended and its output has been read (wait() will not block).
  bool done() const;
  // True when `pid` is this process or one of its descendants (visible in /proc).
  bool in_tree(pid_t pid) const;

  // Sends `signal` to the child (its group unless Interrupts::share); ok once it was reaped.
  Status send_signal(int signal);
  // Ends it: SIGTERM, SIGKILL if it is still there after `grace_seconds`; then waits.
  Outcome stop(double grace_seconds);
  // Waits until it has ended and its output is read. Call once (stop() counts).
  Outcome wait();

 private:
  struct State;
  explicit Process(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

// Process::start then wait(); a process that cannot start is an Outcome with start_status set.
Outcome run(Options options);

// The parent of `pid` from /proc/PID/stat; nullopt when it is not visible.
std::optional<pid_t> parent_pid(pid_t pid);
// True when `pid` is `root` or descends from it. A PID of another PID namespace is not visible
// and so never counts.
bool descends_from(pid_t pid, pid_t root);

}  // namespace gpuscope::observe
