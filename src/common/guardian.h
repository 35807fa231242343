// A guardian: a helper process started before gpuscope changes something outside itself (a
// power limit, an MPS daemon), which undoes it when its pipe to gpuscope closes, i.e. when the
// gpuscope process is gone however it ended (SIGKILL, a crash). It runs in its own session,
// ignoring SIGINT, SIGTERM and SIGHUP, so the terminal's signals and a hangup reach only
// gpuscope. What to undo is in a journal the owner writes before the change and removes after
// undoing it itself; the guardian finds nothing to do after a normal end.
//
// Users: the power-limit sweep (`sweep --guardian-for PID`) and `bench --share`'s private MPS
// daemon (`bench --mps-guardian JOURNAL PID`).
#pragma once

#include <sys/types.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "gpuscope/status.h"

namespace gpuscope::detail {

class Guardian {
 public:
  // Starts `argv` + {this process's PID} with the read end of a pipe as its stdin, and waits
  // (up to 10 s) for it to write "ready" to its stdout. `purpose` names it in messages ("the
  // sweep's guardian"). Fails with internal when it cannot be started or does not get ready.
  static Result<std::unique_ptr<Guardian>> start(std::vector<std::string> argv,
                                                 const std::string& purpose);
  // Closes the pipe: the guardian undoes what is left in its journal (nothing after a normal
  // end) and exits; waits up to 5 s for it to.
  ~Guardian();
  Guardian(const Guardian&) = delete;
  Guardian& operator=(const Guardian&) = delete;

  pid_t pid() const { return pid_; }

 private:
  Guardian(pid_t pid, int pipe_fd) : pid_(pid), pipe_fd_(pipe_fd) {}
  pid_t pid_;
  int pipe_fd_;  // the write end; close-on-exec, so no other child holds it
};

// The guardian process's body: ignores SIGINT/SIGTERM/SIGHUP/SIGPIPE, writes "ready" to stdout
// and closes it, waits for EOF on stdin (its owner is gone), then returns `undo()`'s exit code.
int guardian_main(const std::function<int()>& undo);

}  // namespace gpuscope::detail
