// The MPS daemon of `bench --share`'s mps mode: a private control daemon whose pipe and log
// folders live under the run folder (nothing system-wide changes, no root needed), started
// before the MPS trials and stopped after them in every case: by the destructor (a normal end,
// Ctrl-C, an error), by a guardian process should gpuscope be killed, or by the next
// `bench --share` from the journal left behind. Or a system daemon already running, used as
// it is (never started or stopped by gpuscope).
//
//   <state dir>/mps-<PID>.json   the journal: the private daemon's folders and control program,
//                                written before the daemon starts, removed once it is gone
#pragma once

#include <sys/types.h>

#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpuscope/bench_share.h"
#include "gpuscope/status.h"

namespace gpuscope::detail {
class Guardian;
}

namespace gpuscope::bench::detail {

// An MPS daemon that is already running, not ours: where it was seen. nullopt: none.
// Looks for a control socket in `pipe_dir` (and in $CUDA_MPS_PIPE_DIRECTORY when set) and for
// nvidia-cuda-mps-server / -control processes in `proc_dir` other than those serving
// `except_pipe_dir`.
std::optional<std::string> find_running_mps(const std::string& pipe_dir,
                                            const std::string& proc_dir,
                                            const std::string& except_pipe_dir = "");

// PIDs of MPS processes (nvidia-cuda-mps-*) whose environment names `pipe_dir` as their
// CUDA_MPS_PIPE_DIRECTORY.
std::vector<pid_t> mps_processes_of(const std::string& pipe_dir, const std::string& proc_dir);

struct MpsJournal {
  pid_t pid = 0;  // the gpuscope process that started the daemon
  std::string control_program, pipe_dir, log_dir;
  std::string run_dir;  // removed too, once empty but for the barrier's go files
  std::string proc_dir = "/proc";
};

std::string mps_journal_path(const std::string& state_dir, pid_t pid);
Status write_mps_journal(const std::string& path, const MpsJournal& journal);
Result<MpsJournal> read_mps_journal(const std::string& path);

// `echo quit | control` with the daemon's environment, waits (up to 10 s) for its processes to
// go, removes its pipe and log folders. Ok when nothing of it is left.
Status stop_private_mps(const MpsJournal& journal);
// Ends (SIGTERM, then SIGKILL after 10 s) the copies still running from the journal's run folder
// (their GPUSCOPE_SHARE_GO_FILE is in it): a daemon does not quit while its clients run.
void end_copies(const MpsJournal& journal);
// Removes the journal's run folder when nothing but go files is left in it.
void remove_run_dir(const MpsJournal& journal);

class MpsDaemon {
 public:
  // A system daemon (when one runs and options.use_system), or a private one started now under
  // `run_dir` with its journal and guardian. Fails with invalid_argument when a system daemon
  // runs and is not to be used, not_found when the control program is missing, internal when it
  // fails to start (its log's last line in the message); nothing is left behind then.
  static Result<std::unique_ptr<MpsDaemon>> start(const MpsOptions& options,
                                                  const std::string& run_dir);
  // Stops a private daemon (stop()); a system one is left alone.
  ~MpsDaemon();
  MpsDaemon(const MpsDaemon&) = delete;
  MpsDaemon& operator=(const MpsDaemon&) = delete;

  // What the copies' environment needs: the pipe and log folders of a private daemon, the
  // thread percentage when set.
  std::vector<std::pair<std::string, std::string>> client_env() const { return env_; }
  bool is_private() const { return private_; }
  // "private (pipe folder DIR)" or "system (WHERE)".
  std::string description() const { return description_; }
  // Stops a private daemon and removes its folders and journal; idempotent. A failure is
  // returned (and the journal kept for the next start).
  Status stop();

 private:
  MpsDaemon() = default;
  bool private_ = false;
  bool stopped_ = false;
  MpsJournal journal_;
  std::string journal_path_;
  std::vector<std::pair<std::string, std::string>> env_;
  std::string description_;
  std::unique_ptr<gpuscope::detail::Guardian> guardian_;
};

}  // namespace gpuscope::bench::detail
