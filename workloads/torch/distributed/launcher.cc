#include "distributed/launcher.h"

#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <random>
#include <utility>

#include "json_writer.h"

namespace gpuscope::workloads {
namespace {

using Clock = std::chrono::steady_clock;

// SIGINT and SIGTERM sent to the launcher, counted by its handler; the watch loop forwards them.
std::atomic<int> g_stop_signals{0};

extern "C" void count_stop_signal(int) {
  g_stop_signals.fetch_add(1);
}

// The launcher's handlers for SIGINT and SIGTERM while its ranks run, the previous ones back
// when it ends. No SA_RESTART: a signal wakes the watch loop's poll.
class StopSignals {
 public:
  StopSignals() {
    g_stop_signals.store(0);
    struct sigaction action {};
    action.sa_handler = count_stop_signal;
    sigemptyset(&action.sa_mask);
    sigaction(SIGINT, &action, &previous_int_);
    sigaction(SIGTERM, &action, &previous_term_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &previous_int_, nullptr);
    sigaction(SIGTERM, &previous_term_, nullptr);
  }
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction previous_int_ {};
  struct sigaction previous_term_ {};
};

struct RankProcess {
  int rank = 0;
  pid_t pid = -1;
  int out_fd = -1;  // the rank's stdout; -1 once closed
  std::string pending;
  std::optional<int> status;  // waitpid's status once it ended
};

bool line_has_type(const std::string& line, std::string_view type) {
  return line.find("\"type\":\"" + std::string(type) + "\"") != std::string::npos;
}

pid_t start_rank(const LaunchPlan& plan, int rank, int port, int& out_fd) {
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return -1;
  const pid_t launcher = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(fds[0]);
    close(fds[1]);
    return -1;
  }
  if (pid == 0) {
    // A group of its own: a Ctrl-C at the terminal, or a signal to the launcher's group, reaches
    // the launcher alone, which passes one SIGTERM on (a second would end a rank before it
    // reports). Killed with the launcher, even by SIGKILL: no rank outlives it holding a GPU.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != launcher) _exit(127);  // it ended before prctl
    dup2(fds[1], STDOUT_FILENO);
    setenv("RANK", std::to_string(rank).c_str(), 1);
    setenv("LOCAL_RANK", std::to_string(rank).c_str(), 1);
    setenv("WORLD_SIZE", std::to_string(plan.world_size).c_str(), 1);
    setenv("MASTER_ADDR", "127.0.0.1", 1);
    setenv("MASTER_PORT", std::to_string(port).c_str(), 1);
    // NVLink multicast (NVLS) stays off on the machines gpuscope is lent.
    setenv("NCCL_NVLS_ENABLE", "0", 1);
    std::vector<char*> argv;
    argv.push_back(const_cast<char*>(plan.program.c_str()));
    for (const std::string& a : plan.args) argv.push_back(const_cast<char*>(a.c_str()));
    argv.push_back(nullptr);
    execv(plan.program.c_str(), argv.data());
    _exit(127);
  }
  close(fds[1]);
  out_fd = fds[0];
  return pid;
}

std::string describe_end(int status) {
  if (WIFSIGNALED(status)) {
    return std::string("was killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
           strsignal(WTERMSIG(status)) + ")";
  }
  return "exited with status " + std::to_string(WEXITSTATUS(status));
}

bool failed(int status) {
  if (WIFSIGNALED(status)) return true;
  const int code = WEXITSTATUS(status);
  return code != kTorchExitOk && code != kTorchExitSkipped && code != kTorchExitInterrupted;
}

}  // namespace

std::string with_rank(const std::string& line, int rank) {
  if (line.empty() || line.front() != '{') return line;
  const std::string field = "\"rank\":" + std::to_string(rank);
  const std::string version = "{\"v\":" + std::to_string(kProtocolVersion);
  // A rank's own lines carry their rank already.
  if (line.starts_with(version + ",\"rank\":") || line.starts_with("{\"rank\":")) return line;
  if (line.starts_with(version + ",")) {
    return version + "," + field + line.substr(version.size());
  }
  return "{" + field + (line.size() > 2 ? "," : "") + line.substr(1);
}

namespace {

// Whether `port` (0: any) can be bound on the loopback interface now; the bound one in `bound`.
bool bindable(int port, int& bound) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  address.sin_port = htons(static_cast<uint16_t>(port));
  socklen_t size = sizeof(address);
  const bool ok = bind(fd, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0 &&
                  getsockname(fd, reinterpret_cast<sockaddr*>(&address), &size) == 0;
  if (ok) bound = ntohs(address.sin_port);
  close(fd);
  return ok;
}

}  // namespace

std::pair<int, int> ephemeral_ports(const std::string& range_file) {
  std::ifstream in(range_file);
  int low = 0, high = 0;
  if (in >> low >> high && low > 0 && low <= high && high <= 65535) return {low, high};
  return {32768, 60999};  // Linux's default
}

int free_port(const std::string& range_file) {
  // Below the kernel's ephemeral range: a port found by binding to 0 is an ephemeral one, which
  // the kernel may give to any connection made before rank 0's store listens on it (seen under
  // parallel tests: EADDRINUSE). Outside that range only a program binding that very port can.
  const int low = ephemeral_ports(range_file).first;
  if (low > 11000) {
    std::mt19937 random(static_cast<uint32_t>(getpid()) ^
                        static_cast<uint32_t>(Clock::now().time_since_epoch().count()));
    std::uniform_int_distribution<int> pick(10000, low - 1);
    for (int attempt = 0; attempt < 64; ++attempt) {
      int bound = 0;
      if (const int port = pick(random); bindable(port, bound)) return port;
    }
  }
  int bound = kDefaultMasterPort;
  bindable(0, bound);
  return bound;
}

int launch_ranks(const LaunchPlan& plan, const LineSink& emit) {
  const StopSignals stop_signals;
  const int port = free_port();
  std::vector<RankProcess> ranks(static_cast<size_t>(plan.world_size));
  for (int r = 0; r < plan.world_size; ++r) {
    RankProcess& p = ranks[static_cast<size_t>(r)];
    p.rank = r;
    p.pid = start_rank(plan, r, port, p.out_fd);
    if (p.pid < 0) {
      emit(error_line("internal",
                      "could not start rank " + std::to_string(r) + ": " + std::strerror(errno)));
      for (const RankProcess& started : ranks) {
        if (started.pid > 0) kill(started.pid, SIGKILL);
      }
      for (const RankProcess& started : ranks) {
        if (started.pid > 0) waitpid(started.pid, nullptr, 0);
      }
      return kTorchExitFailed;
    }
  }

  const auto relay = [&](RankProcess& p, const std::string& line) {
    if (line.empty() || line_has_type(line, "done")) return;
    // Rank 0's lines are the job's; an error names its rank whichever rank it came from.
    const bool error = line_has_type(line, "error");
    if (p.rank == 0 || error || line_has_type(line, "skipped")) {
      emit(p.rank == 0 && !error ? line : with_rank(line, p.rank));
    }
  };
  const auto drain = [&](RankProcess& p) {
    char buffer[65536];
    const ssize_t n = read(p.out_fd, buffer, sizeof(buffer));
    if (n <= 0) {
      if (n < 0 && errno == EINTR) return;
      if (!p.pending.empty()) relay(p, p.pending);
      p.pending.clear();
      close(p.out_fd);
      p.out_fd = -1;
      return;
    }
    p.pending.append(buffer, static_cast<size_t>(n));
    for (size_t newline; (newline = p.pending.find('\n')) != std::string::npos;) {
      relay(p, p.pending.substr(0, newline));
      p.pending.erase(0, newline + 1);
    }
  };

  int exit_code = kTorchExitOk;
  // The first rank to end without success (a failure, or skipped: no device for it), and when:
  // the others cannot go on without it.
  std::optional<Clock::time_point> first_failure;
  int first_ended = -1;
  bool terminated = false, killed = false;
  // SIGINT or SIGTERM to the launcher: the first is passed on as SIGTERM (each rank stops and
  // reports, as one process does), a second as SIGKILL; ranks still running `grace` after the
  // first are killed (a rank may wait in a collective for one that stopped a step earlier).
  int forwarded = 0;
  std::optional<Clock::time_point> interrupted;
  const auto signal_running = [&](int signal) {
    for (const RankProcess& p : ranks) {
      if (!p.status) kill(p.pid, signal);
    }
  };
  for (;;) {
    if (const int signals = g_stop_signals.load(); signals > forwarded) {
      signal_running(forwarded == 0 ? SIGTERM : SIGKILL);
      if (!interrupted) interrupted = Clock::now();
      forwarded = signals;
    }
    if (interrupted && !killed && Clock::now() - *interrupted > plan.grace) {
      signal_running(SIGKILL);
      killed = true;
    }
    std::vector<pollfd> fds;
    std::vector<RankProcess*> owners;
    for (RankProcess& p : ranks) {
      if (p.out_fd >= 0) {
        fds.push_back({p.out_fd, POLLIN, 0});
        owners.push_back(&p);
      }
    }
    if (!fds.empty()) {
      const int ready = poll(fds.data(), fds.size(), 200);
      for (size_t i = 0; ready > 0 && i < fds.size(); ++i) {
        if (fds[i].revents != 0) drain(*owners[i]);
      }
    } else {
      usleep(50 * 1000);
    }
    bool all_ended = true;
    for (RankProcess& p : ranks) {
      if (!p.status) {
        int status = 0;
        if (waitpid(p.pid, &status, WNOHANG) == p.pid) {
          p.status = status;
          if (failed(status)) {
            // A rank this launcher stopped did not fail by itself: say which one it waited for.
            const bool stopped = (terminated || interrupted) && WIFSIGNALED(status) &&
                                 (WTERMSIG(status) == SIGTERM || WTERMSIG(status) == SIGKILL);
            const std::string why = interrupted
                                        ? "gpuscope-torch was interrupted"
                                        : "rank " + std::to_string(first_ended) + " had ended";
            const std::string end =
                stopped
                    ? "was stopped (signal " + std::to_string(WTERMSIG(status)) + ") after " + why
                    : describe_end(status);
            emit(JsonObject()
                     .add("v", kProtocolVersion)
                     .add("rank", p.rank)
                     .add("type", "error")
                     .add("code", "rank_failed")
                     .add("message", "rank " + std::to_string(p.rank) + " (pid " +
                                         std::to_string(p.pid) + ") " + end)
                     .str());
          }
          if (status != 0 && !first_failure) {
            first_failure = Clock::now();
            first_ended = p.rank;
          }
          if (exit_code == kTorchExitOk && status != 0) {
            exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : kTorchExitFailed;
          }
        }
      }
      all_ended = all_ended && p.status.has_value();
    }
    if (all_ended) {
      for (RankProcess& p : ranks) {
        while (p.out_fd >= 0) drain(p);
      }
      break;
    }
    if (first_failure) {
      const auto waited = Clock::now() - *first_failure;
      if (!terminated && waited > plan.grace) {
        signal_running(SIGTERM);
        terminated = true;
      } else if (terminated && !killed && waited > plan.grace + std::chrono::seconds(5)) {
        signal_running(SIGKILL);
        killed = true;
      }
    }
  }
  return exit_code;
}

}  // namespace gpuscope::workloads
