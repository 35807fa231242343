// CPU time of an observed program's threads, from /proc: its own threads (the main one apart)
// and those of its descendants (DataLoader workers, spawned helpers, torchrun ranks).
//
// A tracker samples /proc every so often while the program runs, so threads and processes that
// end before the window does (workers of one epoch) still count: each thread's CPU time is its
// last reading minus its first, or its whole last reading when it appeared after the first
// sample.
#pragma once

#include <sys/types.h>

#include <map>
#include <string>
#include <utility>
#include <vector>

namespace gpuscope::trace::detail {

struct ThreadReading {
  pid_t pid = 0;
  pid_t tid = 0;
  std::string thread_name;   // /proc/PID/task/TID/comm
  std::string process_name;  // the comm of the process's main thread
  double cpu_s = 0;          // user + system
};

// Every thread of `root` and of its descendants. `proc` is the proc file system's root (tests
// point it at a folder laid out the same way). Processes that vanish while read are skipped.
std::vector<ThreadReading> read_threads(pid_t root, const std::string& proc = "/proc");

enum class ThreadRole {
  main,        // the observed program's main thread
  other,       // its other threads (pin-memory thread, the CUDA driver's, ...)
  descendant,  // threads of processes it started (loader workers, ranks)
};
const char* role_name(ThreadRole role);

struct ThreadUse {
  pid_t pid = 0;
  pid_t tid = 0;
  std::string thread_name;
  std::string process_name;
  ThreadRole role = ThreadRole::other;
  double cpu_s = 0;  // used within the tracked span
};

class ThreadCpuTracker {
 public:
  explicit ThreadCpuTracker(pid_t root, std::string proc = "/proc")
      : root_(root), proc_(std::move(proc)) {}
  void sample();
  // Threads that used CPU within the span between the first and the last sample, most first.
  std::vector<ThreadUse> use() const;
  int samples() const { return samples_; }

 private:
  struct Seen {
    ThreadReading first, last;
    bool appeared_later = false;
  };
  pid_t root_;
  std::string proc_;
  int samples_ = 0;
  std::map<std::pair<pid_t, pid_t>, Seen> threads_;
};

// CPU seconds per role.
std::map<ThreadRole, double> cpu_by_role(const std::vector<ThreadUse>& threads);

}  // namespace gpuscope::trace::detail
