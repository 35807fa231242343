// From the record files of every traced process (gpuscope/trace.h) to one Timeline: strings
// interned across files, correlation ids made unique per process, synchronizations given the
// thread of the API call that waited, and the window of the observed process.
#pragma once

#include <sys/types.h>

#include <vector>

#include "gpuscope/trace.h"
#include "trace/timeline.h"

namespace gpuscope::trace::detail {

// The observed process: the one with the most step marks, then the one closest to
// `command_pid` (the command itself, or its first traced descendant).
pid_t main_process(const std::vector<ProcessTrace>& processes, pid_t command_pid);

// REQUIRES: every process's times are on one clock (the record files' CLOCK_MONOTONIC).
Timeline build_timeline(const std::vector<ProcessTrace>& processes, pid_t command_pid);

}  // namespace gpuscope::trace::detail
