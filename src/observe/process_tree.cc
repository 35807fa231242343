// Which processes belong to an observed process: it and its descendants, as /proc shows them.
#include <fmt/format.h>

#include <fstream>
#include <sstream>
#include <string>

#include "gpuscope/observe.h"

namespace gpuscope::observe {

std::optional<pid_t> parent_pid(pid_t pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat;
  if (!in || !std::getline(in, stat)) return std::nullopt;
  // "PID (COMM) STATE PPID ...": COMM may hold spaces and parentheses, so parse after the last ')'.
  const auto close = stat.rfind(')');
  if (close == std::string::npos) return std::nullopt;
  std::istringstream rest(stat.substr(close + 1));
  char state = 0;
  long ppid = -1;
  if (!(rest >> state >> ppid) || ppid < 0) return std::nullopt;
  return static_cast<pid_t>(ppid);
}

bool descends_from(pid_t pid, pid_t root) {
  for (int depth = 0; depth < 128 && pid > 1; ++depth) {
    if (pid == root) return true;
    auto parent = parent_pid(pid);
    if (!parent) return false;
    pid = *parent;
  }
  return pid == root;
}

}  // namespace gpuscope::observe
