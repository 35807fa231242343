#include "telemetry/process_tree.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

namespace gpuscope::telemetry::detail {

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

Status check_program(const std::string& program) {
  auto check = [](const std::string& path) -> Status {
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0) return Status(Code::not_found, "no such file");
    if (S_ISDIR(st.st_mode) || ::access(path.c_str(), X_OK) != 0) {
      return Status(Code::permission_denied, "not an executable file");
    }
    return Status{};
  };
  if (program.empty()) return Status(Code::invalid_argument, "the command is empty");
  if (program.find('/') != std::string::npos) {
    Status s = check(program);
    if (!s.ok()) return Status(s.code(), fmt::format("cannot run {}: {}", program, s.message()));
    return s;
  }
  const char* path_env = std::getenv("PATH");
  std::string path = path_env != nullptr ? path_env : "/usr/local/bin:/usr/bin:/bin";
  bool denied = false;
  std::istringstream dirs(path);
  std::string dir;
  while (std::getline(dirs, dir, ':')) {
    Status s = check((dir.empty() ? "." : dir) + "/" + program);
    if (s.ok()) return s;
    denied = denied || s.code() == Code::permission_denied;
  }
  if (denied) {
    return Status(Code::permission_denied, fmt::format("cannot run {}: not executable", program));
  }
  return Status(Code::not_found, fmt::format("cannot run {}: command not found", program));
}

}  // namespace gpuscope::telemetry::detail
