#include "common/guardian.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>
#include <string>
#include <thread>

#include "gpuscope/process.h"

namespace gpuscope::detail {
namespace {

Status spawn_error(const std::string& purpose, const std::string& what, int error) {
  return Status(Code::internal,
                fmt::format("cannot start {}: {}: {}", purpose, what, std::strerror(error)));
}

// Reads the guardian's first line from `fd`, for at most `timeout_ms`.
bool got_ready(int fd, int timeout_ms) {
  std::string text;
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(timeout_ms);
  while (text.find('\n') == std::string::npos) {
    const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(
                          deadline - std::chrono::steady_clock::now())
                          .count();
    if (left <= 0) return false;
    pollfd p{fd, POLLIN, 0};
    const int rc = ::poll(&p, 1, static_cast<int>(left));
    if (rc < 0 && errno == EINTR) continue;
    if (rc <= 0) return false;
    char buffer[64];
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    text.append(buffer, static_cast<std::size_t>(n));
  }
  return text.starts_with("ready");
}

}  // namespace

Result<std::unique_ptr<Guardian>> Guardian::start(std::vector<std::string> argv,
                                                  const std::string& purpose) {
  argv.push_back(std::to_string(::getpid()));
  int control[2], ready[2];
  if (::pipe2(control, O_CLOEXEC) != 0) return spawn_error(purpose, "pipe", errno);
  if (::pipe2(ready, O_CLOEXEC) != 0) {
    const int error = errno;
    ::close(control[0]);
    ::close(control[1]);
    return spawn_error(purpose, "pipe", error);
  }
  Result<pid_t> pid = spawn_detached(argv, control[0], ready[1]);
  ::close(control[0]);
  ::close(ready[1]);
  if (!pid.ok()) {
    ::close(control[1]);
    ::close(ready[0]);
    return Status(Code::internal,
                  fmt::format("cannot start {}: {}", purpose, pid.status().message()));
  }
  const bool is_ready = got_ready(ready[0], 10'000);
  ::close(ready[0]);
  auto guardian = std::unique_ptr<Guardian>(new Guardian(*pid, control[1]));
  if (!is_ready) {
    return Status(Code::internal,
                  fmt::format("{} ({}) did not start; nothing was changed", purpose, argv[0]));
  }
  return guardian;
}

Guardian::~Guardian() {
  ::close(pipe_fd_);
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  while (std::chrono::steady_clock::now() < deadline) {
    const pid_t done = ::waitpid(pid_, nullptr, WNOHANG);
    if (done == pid_ || (done < 0 && errno != EINTR)) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

int guardian_main(const std::function<int()>& undo) {
  std::signal(SIGINT, SIG_IGN);
  std::signal(SIGTERM, SIG_IGN);
  std::signal(SIGHUP, SIG_IGN);
  std::signal(SIGPIPE, SIG_IGN);
  const char ready[] = "ready\n";
  if (::write(STDOUT_FILENO, ready, sizeof ready - 1) < 0) return 1;
  ::close(STDOUT_FILENO);
  char buffer[256];
  for (;;) {
    const ssize_t n = ::read(STDIN_FILENO, buffer, sizeof buffer);
    if (n == 0) break;
    if (n < 0 && errno != EINTR) break;
  }
  return undo();
}

}  // namespace gpuscope::detail
