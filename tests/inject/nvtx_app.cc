// A program that uses NVTX (v3 headers, as PyTorch does) the ways the injection tests need:
//
//   nvtx_app threads-fork   marks, nested ranges, a domain, a registered and a wide string,
//                           odd bytes, thread names, a start/end range ended on another thread,
//                           from two threads; then a fork child that records too
//   nvtx_app steps N        N step marks ("gpuscope.step"), each inside a "train" range
//   nvtx_app torch-steps N  N steps as gpuscope-torch marks them (workloads/torch/nvtx_range.h)
//   nvtx_app slow-steps START_MS STEP_MS N [expect]
//                           a mark, a slow start (START_MS of sleep, as a compilation), then
//                           N step marks STEP_MS apart; `expect`: the shim's steps-expected
//                           mark before the sleep
//   nvtx_app flood N        N identical marks as fast as it can; prints its peak memory (kB)
//   nvtx_app sigterm        marks, then SIGTERM to itself (default action: killed)
//   nvtx_app sigterm-own    installs its own SIGTERM handler first (prints, exits 42)
//   nvtx_app sigkill        a mark, 1 s of sleep, then SIGKILL to itself
//   nvtx_app fork-first     forks before any NVTX call; both processes record
//   nvtx_app fork-silent    records, then forks a child that records nothing and execs true
//   nvtx_app plain          no NVTX at all: prints "plain" and exits 3
//   nvtx_app cuda-init LIB  calls LIB's InitializeInjection (no GPU here), then a mark
#include <dlfcn.h>
#include <nvtx3/nvToolsExt.h>
#include <signal.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

#include "workloads/torch/nvtx_range.h"

namespace {

uint32_t tid() {
  return static_cast<uint32_t>(syscall(SYS_gettid));
}

long peak_kb() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (line.rfind("VmHWM:", 0) == 0) return std::atol(line.c_str() + 6);
  }
  return -1;
}

int threads_fork() {
  nvtxNameOsThreadA(tid(), "main-thread");
  nvtxRangePushA("outer");
  nvtxRangePushA("inner");
  nvtxMarkA("hello");
  nvtxMarkW(L"wide \u00e9");
  nvtxMarkA("odd \xff\x01 \"quoted\"");
  nvtxRangePop();
  nvtxRangePop();

  nvtxDomainHandle_t domain = nvtxDomainCreateA("my-domain");
  nvtxStringHandle_t registered = nvtxDomainRegisterStringA(domain, "registered-range");
  nvtxEventAttributes_t attr{};
  attr.version = NVTX_VERSION;
  attr.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  attr.messageType = NVTX_MESSAGE_TYPE_REGISTERED;
  attr.message.registered = registered;
  attr.payloadType = NVTX_PAYLOAD_TYPE_INT32;
  attr.payload.iValue = 7;
  nvtxDomainRangePushEx(domain, &attr);
  nvtxDomainMarkEx(domain, &attr);
  nvtxDomainRangePop(domain);

  const nvtxRangeId_t cross = nvtxRangeStartA("cross-thread");
  std::thread worker([cross] {
    nvtxNameOsThreadA(tid(), "worker-thread");
    nvtxRangePushA("work");
    nvtxMarkA("from-worker");
    nvtxRangePop();
    nvtxRangeEnd(cross);
  });
  worker.join();
  for (int i = 0; i < 3; ++i) nvtxMarkA("gpuscope.step");

  const pid_t child = fork();
  if (child == 0) {
    nvtxRangePushA("child-range");
    nvtxMarkA("child-mark");
    nvtxRangePop();
    std::exit(0);
  }
  int status = 0;
  waitpid(child, &status, 0);
  nvtxMarkA("after-fork");
  std::printf("child %d\n", child);
  return WIFEXITED(status) && WEXITSTATUS(status) == 0 ? 0 : 1;
}

int torch_steps(int n) {
  for (int64_t s = 0; s < n; ++s) {
    {
      gpuscope::workloads::NvtxRange range(gpuscope::workloads::kStepRangeName);
      std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    gpuscope::workloads::mark_step_end(s);  // as Run::one_step: after the range
  }
  return 0;
}

int steps(int n) {
  for (int i = 0; i < n; ++i) {
    nvtxRangePushA("train");
    nvtxRangePushA("gpuscope.data_wait");
    nvtxRangePop();
    nvtxRangePop();
    nvtxMarkA("gpuscope.step");
  }
  return 0;
}

int slow_steps(int start_ms, int step_ms, int n, bool expect) {
  nvtxMarkA("start");  // the library starts here, as it would at CUDA's initialization
  if (expect) nvtxMarkA("gpuscope.steps_expected");
  std::this_thread::sleep_for(std::chrono::milliseconds(start_ms));
  for (int i = 0; i < n; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(step_ms));
    nvtxMarkA("gpuscope.step");
  }
  return 0;
}

int flood(long n) {
  nvtxMarkA("start");
  const long before = peak_kb();
  for (long i = 0; i < n; ++i) nvtxMarkA("flood-mark-with-a-name-of-some-length");
  std::printf("peak_kb_before %ld\npeak_kb_after %ld\n", before, peak_kb());
  return 0;
}

void own_handler(int) {
  const char text[] = "handled\n";
  [[maybe_unused]] const ssize_t n = write(1, text, sizeof text - 1);
  _exit(42);
}

int sigterm(bool own) {
  if (own) signal(SIGTERM, own_handler);
  nvtxMarkA("before-term");
  nvtxRangePushA("open-at-term");
  raise(SIGTERM);
  std::puts("survived");  // only with a handler that returns
  return 0;
}

int sigkill() {
  nvtxMarkA("before-kill");
  sleep(1);
  raise(SIGKILL);
  return 0;
}

int fork_first() {
  const pid_t child = fork();
  nvtxMarkA(child == 0 ? "in-child" : "in-parent");
  if (child == 0) std::exit(0);
  int status = 0;
  waitpid(child, &status, 0);
  return 0;
}

int fork_silent() {
  nvtxMarkA("parent-only");
  const pid_t child = fork();
  if (child == 0) {
    execl("/bin/true", "true", static_cast<char*>(nullptr));
    _exit(127);
  }
  int status = 0;
  waitpid(child, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 1;
}

int cuda_init(const char* library) {
  void* handle = dlopen(library, RTLD_NOW);
  if (handle == nullptr) {
    std::printf("dlopen failed: %s\n", dlerror());
    return 1;
  }
  auto* init = reinterpret_cast<int (*)()>(dlsym(handle, "InitializeInjection"));
  if (init == nullptr) return 1;
  std::printf("InitializeInjection returned %d\n", init());
  nvtxMarkA("after-init");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "";
  if (mode == "threads-fork") return threads_fork();
  if (mode == "steps" && argc > 2) return steps(std::atoi(argv[2]));
  if (mode == "torch-steps" && argc > 2) return torch_steps(std::atoi(argv[2]));
  if (mode == "flood" && argc > 2) return flood(std::atol(argv[2]));
  if (mode == "slow-steps" && argc > 4) {
    return slow_steps(std::atoi(argv[2]), std::atoi(argv[3]), std::atoi(argv[4]),
                      argc > 5 && std::string(argv[5]) == "expect");
  }
  if (mode == "sigterm") return sigterm(false);
  if (mode == "sigterm-own") return sigterm(true);
  if (mode == "sigkill") return sigkill();
  if (mode == "fork-first") return fork_first();
  if (mode == "fork-silent") return fork_silent();
  if (mode == "cuda-init" && argc > 2) return cuda_init(argv[2]);
  if (mode == "plain") {
    std::puts("plain");
    return 3;
  }
  std::fprintf(stderr, "usage: nvtx_app MODE\n");
  return 2;
}
