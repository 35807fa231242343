// The guardian: a process the sweep starts before its first change, which restores the
// sweep's journal when its pipe to the sweep closes, i.e. when the sweeping process is gone
// however it ended (SIGKILL, a crash). It runs in its own session, ignoring SIGINT, SIGTERM
// and SIGHUP, so the terminal's signals and a hangup reach only the sweep.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "gpuscope/status.h"

namespace gpuscope::sweep::detail {

class Guardian {
 public:
  // Starts `argv` + {this process's PID} with the read end of a pipe as its stdin, and waits
  // (up to 10 s) for it to write "ready" to its stdout. Fails with internal when it cannot be
  // started or does not get ready.
  static Result<std::unique_ptr<Guardian>> start(std::vector<std::string> argv);
  // Closes the pipe: the guardian restores what is left in the journal (nothing after a
  // normal end) and exits; waits up to 5 s for it to.
  ~Guardian();
  Guardian(const Guardian&) = delete;
  Guardian& operator=(const Guardian&) = delete;

  pid_t pid() const { return pid_; }

 private:
  Guardian(pid_t pid, int pipe_fd) : pid_(pid), pipe_fd_(pipe_fd) {}
  pid_t pid_;
  int pipe_fd_;  // the write end; close-on-exec, so no other child holds it
};

}  // namespace gpuscope::sweep::detail
