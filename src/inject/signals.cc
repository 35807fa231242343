#include "inject/signals.h"

#include <errno.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>

#include <atomic>

#include "inject/session.h"

namespace gpuscope::inject {
namespace {

constexpr int kSignals[] = {SIGINT, SIGTERM};
constexpr long kWaitStepNs = 1'000'000;  // 1 ms
constexpr int kWaitSteps = 2000;         // the flusher gets 2 s at most

std::atomic<Session*> g_session{nullptr};
struct sigaction g_previous[NSIG];
std::atomic<int> g_request{0};
std::atomic<int> g_done{0};

bool is_fatal_by_default(const struct sigaction& previous) {
  return (previous.sa_flags & SA_SIGINFO) == 0 && previous.sa_handler == SIG_DFL;
}

void hand_on(int sig, siginfo_t* info, void* context) {
  const struct sigaction& previous = g_previous[sig];
  if ((previous.sa_flags & SA_SIGINFO) != 0) {
    if (previous.sa_sigaction != nullptr) previous.sa_sigaction(sig, info, context);
    return;
  }
  if (previous.sa_handler == SIG_IGN) return;
  if (previous.sa_handler == SIG_DFL) {
    // The default action, as if we had never been here: it happens when this handler returns
    // (the signal is blocked until then).
    struct sigaction restore {};
    restore.sa_handler = SIG_DFL;
    sigemptyset(&restore.sa_mask);
    sigaction(sig, &restore, nullptr);
    raise(sig);
    return;
  }
  previous.sa_handler(sig);
}

void on_signal(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  Session* session = g_session.load();
  if (session != nullptr && session->pid() == getpid()) {
    if (session->flusher_running()) {
      g_done.store(0);
      g_request.store(sig);
      const char byte = 's';
      [[maybe_unused]] const ssize_t n = write(session->wake_fd(), &byte, 1);
      const timespec step{0, kWaitStepNs};
      for (int i = 0; i < kWaitSteps && g_done.load() != sig; ++i) nanosleep(&step, nullptr);
    }
  }
  hand_on(sig, info, context);
  errno = saved_errno;
}

}  // namespace

void install_signal_handlers(Session* session) noexcept {
  if (g_session.exchange(session) != nullptr) return;
  for (const int sig : kSignals) {
    struct sigaction previous {};
    if (sigaction(sig, nullptr, &previous) != 0) continue;
    if ((previous.sa_flags & SA_SIGINFO) == 0 && previous.sa_handler == SIG_IGN) continue;
    g_previous[sig] = previous;
    struct sigaction ours {};
    ours.sa_sigaction = on_signal;
    ours.sa_mask = previous.sa_mask;
    ours.sa_flags = SA_SIGINFO | (previous.sa_flags & (SA_RESTART | SA_ONSTACK));
    sigaction(sig, &ours, nullptr);
  }
}

int take_signal_request() noexcept {
  return g_request.exchange(0);
}

void signal_request_done(int sig) noexcept {
  g_done.store(sig);
}

bool signal_is_fatal(int sig) noexcept {
  return is_fatal_by_default(g_previous[sig]);
}

}  // namespace gpuscope::inject
