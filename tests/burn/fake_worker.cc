// A stand-in for gpuscope-burn-worker in tests: it plays a script of JSON lines and directives,
// so that the parent's handling of every kind of worker (healthy, skipping, failing, crashing,
// killed, interrupted, hanging) is tested without a GPU.
//
// The script is $GPUSCOPE_FAKE_WORKER_DIR/<CUDA_VISIBLE_DEVICES>.jsonl, else default.jsonl in
// that folder. The worker first writes its arguments and CUDA_VISIBLE_DEVICES, one per line, to
// <CUDA_VISIBLE_DEVICES>.args in the folder. Script lines:
//   {...}                  printed on stdout as is (flushed)
//   // comment             ignored
//   #sleep S               sleeps S seconds
//   #stderr TEXT           prints TEXT on stderr
//   #partial TEXT          prints TEXT on stdout without a newline
//   #exit N                exits with code N
//   #kill NAME             kills itself with SIGNAME (SEGV, KILL, ABRT, TERM, ...)
//   #wait-interrupt        waits (at most 20 s, then exits 99) for SIGINT or SIGTERM, then
//                          goes on with the script
//   #interrupt-parent      sends SIGINT to its parent, as a user's Ctrl-C would reach it
//   #hang                  sleeps until a signal's default action ends it (SIGTERM does)
// At the end of the script it exits 0.
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

namespace {

std::atomic<int> g_interrupts{0};

extern "C" void on_interrupt(int) {
  g_interrupts.fetch_add(1);
}

int signal_number(const std::string& name) {
  if (name == "SEGV") return SIGSEGV;
  if (name == "KILL") return SIGKILL;
  if (name == "ABRT") return SIGABRT;
  if (name == "TERM") return SIGTERM;
  if (name == "INT") return SIGINT;
  if (name == "BUS") return SIGBUS;
  return SIGKILL;
}

bool exists(const std::string& path) {
  return std::ifstream(path).good();
}

}  // namespace

int main(int argc, char** argv) {
  const char* dir_env = std::getenv("GPUSCOPE_FAKE_WORKER_DIR");
  const char* visible_env = std::getenv("CUDA_VISIBLE_DEVICES");
  const std::string dir = dir_env ? dir_env : ".";
  const std::string visible = visible_env ? visible_env : "";
  {
    std::ofstream args(dir + "/" + (visible.empty() ? "none" : visible) + ".args");
    for (int i = 1; i < argc; ++i) args << argv[i] << '\n';
    args << "CUDA_VISIBLE_DEVICES=" << visible << '\n';
  }
  std::string script = dir + "/" + visible + ".jsonl";
  if (!exists(script)) script = dir + "/default.jsonl";
  std::ifstream in(script);
  if (!in) {
    std::printf(
        "{\"v\":1,\"type\":\"error\",\"code\":\"internal\",\"message\":\"fake worker: no script "
        "%s\"}\n",
        script.c_str());
    return 6;
  }

  struct sigaction action {};
  action.sa_handler = on_interrupt;
  sigemptyset(&action.sa_mask);
  sigaction(SIGINT, &action, nullptr);
  sigaction(SIGTERM, &action, nullptr);

  for (std::string line; std::getline(in, line);) {
    if (line.empty() || line.rfind("//", 0) == 0) continue;
    if (line[0] != '#') {
      std::fputs((line + "\n").c_str(), stdout);
      std::fflush(stdout);
      continue;
    }
    const std::size_t space = line.find(' ');
    const std::string directive = line.substr(0, space);
    const std::string arg = space == std::string::npos ? "" : line.substr(space + 1);
    if (directive == "#sleep") {
      std::this_thread::sleep_for(std::chrono::duration<double>(std::atof(arg.c_str())));
    } else if (directive == "#stderr") {
      std::fprintf(stderr, "%s\n", arg.c_str());
    } else if (directive == "#partial") {
      std::fputs(arg.c_str(), stdout);
      std::fflush(stdout);
    } else if (directive == "#exit") {
      return std::atoi(arg.c_str());
    } else if (directive == "#kill") {
      const int sig = signal_number(arg);
      signal(sig, SIG_DFL);
      raise(sig);
    } else if (directive == "#wait-interrupt") {
      const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
      while (g_interrupts.load() == 0) {
        if (std::chrono::steady_clock::now() > deadline) return 99;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
    } else if (directive == "#interrupt-parent") {
      kill(getppid(), SIGINT);
    } else if (directive == "#hang") {
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      for (;;) pause();
    }
  }
  return 0;
}
