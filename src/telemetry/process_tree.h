// Which processes belong to an observed command: the command itself and its descendants, as
// /proc shows them. A PID from another PID namespace (a driver that reports host PIDs inside a
// container) is not visible and so never counts.
#pragma once

#include <sys/types.h>
#include <optional>

namespace gpuscope::telemetry::detail {

// The parent of `pid` from /proc/PID/stat; nullopt when it is not visible.
std::optional<pid_t> parent_pid(pid_t pid);
// True when `pid` is `root` or descends from it.
bool descends_from(pid_t pid, pid_t root);

}  // namespace gpuscope::telemetry::detail
