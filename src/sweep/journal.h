// The sweep's journal: each swept GPU's prior setting of the knob swept (its power limit, or
// its SM clock lock) in a file of the state directory, written before the first change and
// removed once the setting is back; and the per-GPU lock that lets one sweep at a time hold a
// GPU, whichever knob it turns.
//
//   <state dir>/power-limit-<UUID>.json     a power-limit entry (atomic: temp file, fsync, rename)
//   <state dir>/locked-clocks-<UUID>.json   an SM-clock-lock entry (likewise)
//   <state dir>/power-limit-<UUID>.lock     flock'd by the sweep holding the GPU (never removed)
//
// NVML cannot read back a clock lock: a clock entry records the prior setting as "unlocked",
// and restoring it is a reset (nvmlDeviceResetGpuLockedClocks).
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "gpuscope/nvml.h"
#include "gpuscope/status.h"
#include "gpuscope/sweep.h"

namespace gpuscope::sweep::detail {

inline constexpr const char* kJournalKind = "gpuscope.sweep.journal";
inline constexpr int kJournalVersion = 1;

struct JournalEntry {
  Knob knob = Knob::power_limit;  // an entry without "knob" (written before clocks) is a limit
  std::string uuid;
  unsigned index = 0;  // NVML index when written (the UUID is what counts)
  std::string name;
  double prior_limit_w = 0;  // power_limit only; a clock lock's prior is "unlocked"
  pid_t pid = 0;             // the sweeping process
  pid_t guardian_pid = 0;    // its guardian (0: none)
  double written_unix_s = 0;
};

std::string journal_path(const std::string& state_dir, const std::string& uuid,
                         Knob knob = Knob::power_limit);

// What restoring the entry sets: "390 W" | "unlocked SM clocks".
std::string prior_setting(const JournalEntry& entry);

// Creates the directory (and its parents) when missing.
Status ensure_state_dir(const std::string& state_dir);

// Writes the entry atomically and durably (temp file, fsync, rename, fsync of the directory).
Status write_journal(const std::string& state_dir, const JournalEntry& entry);
Result<JournalEntry> read_journal(const std::string& path);
// The journal files in the directory (none when it does not exist).
std::vector<std::string> list_journals(const std::string& state_dir);

// A GPU's lock: held while it lives.
class GpuLock {
 public:
  // Fails with io_error when the lock file cannot be opened, and (without `wait`) when another
  // process holds it, naming that process.
  static Result<std::unique_ptr<GpuLock>> acquire(const std::string& state_dir,
                                                  const std::string& uuid, bool wait);
  ~GpuLock();
  GpuLock(const GpuLock&) = delete;
  GpuLock& operator=(const GpuLock&) = delete;

 private:
  explicit GpuLock(int fd) : fd_(fd) {}
  int fd_;
};

// Sets the GPU named by the entry back to its prior limit and checks that it took (a clock
// entry: resets the lock); removes the journal when it did. A GPU that is gone (lost, not found)
// has its journal removed too (a GPU comes back from a reset at its default limit) and the failure
// returned.
Status restore_entry(const nvml::Session& session, const std::string& state_dir,
                     const JournalEntry& entry);

}  // namespace gpuscope::sweep::detail
