#include "inject/clock.h"

#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

namespace gpuscope::inject {
namespace {

uint64_t read_clock(clockid_t id) {
  timespec ts{};
  clock_gettime(id, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1'000'000'000u + static_cast<uint64_t>(ts.tv_nsec);
}

// A cached tid is wrong in a fork child; the pid it was cached under tells.
thread_local uint32_t cached_tid = 0;
thread_local pid_t cached_pid = 0;

}  // namespace

uint64_t now_ns() {
  return read_clock(CLOCK_MONOTONIC);
}

uint64_t realtime_now_ns() {
  return read_clock(CLOCK_REALTIME);
}

uint32_t current_tid() {
  const pid_t pid = getpid();
  if (cached_tid == 0 || cached_pid != pid) {
    cached_tid = static_cast<uint32_t>(syscall(SYS_gettid));
    cached_pid = pid;
  }
  return cached_tid;
}

}  // namespace gpuscope::inject
