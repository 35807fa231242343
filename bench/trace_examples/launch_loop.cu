// A launch-bound loop without Python, to measure what tracing costs per kernel launch on the
// launching thread: each step launches `--kernels` one-block kernels, each after `--host-us`
// microseconds of host work (a framework's per-operator overhead; PyTorch eager spends about
// 15-20 us an operator on the lent hosts) and `--extra-calls` cheap CUDA runtime calls (PyTorch
// and cuBLAS make several per kernel: cudaGetDevice, cudaGetLastError, capture queries), then marks
// the step with NVTX "gpuscope.step" and waits for the GPU. The step's time is the host's: from the
// step's start to its last launch.
//
//   nvcc -O2 -std=c++17 -o launch_loop bench/trace_examples/launch_loop.cu
//   ./launch_loop --warmup 50 --steps 250 --kernels 500 --host-us 15
//
// One JSON line at the end, as the Python examples print (bench/trace_examples/_trace_example.py):
// {"program", "steps", "step_time_s_median", "step_times_s", "launch_us_median", "pid", "tids"}.
#include <cuda_runtime.h>
#include <dirent.h>
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <vector>

namespace {

__global__ void tiny(float* x) {
  if (threadIdx.x == 0) x[blockIdx.x] += 1.0f;
}

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

void spin_us(double us) {
  const double until = now_s() + us * 1e-6;
  while (now_s() < until) {
  }
}

int option(int argc, char** argv, const char* name, int fallback) {
  for (int i = 1; i + 1 < argc; ++i) {
    if (std::strcmp(argv[i], name) == 0) return std::atoi(argv[i + 1]);
  }
  return fallback;
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "launch_loop: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

std::string tids() {
  std::string list;
  if (DIR* dir = opendir("/proc/self/task")) {
    while (const dirent* entry = readdir(dir)) {
      if (entry->d_name[0] == '.') continue;
      list += (list.empty() ? "" : ",") + std::string(entry->d_name);
    }
    closedir(dir);
  }
  return list;
}

}  // namespace

int main(int argc, char** argv) {
  const int warmup = option(argc, argv, "--warmup", 50);
  const int steps = option(argc, argv, "--steps", 250);
  const int kernels = option(argc, argv, "--kernels", 500);
  const int host_us = option(argc, argv, "--host-us", 15);
  const int extra_calls = option(argc, argv, "--extra-calls", 0);
  if (steps < 2 || kernels < 1 || warmup < 0 || host_us < 0 || extra_calls < 0) {
    std::fprintf(stderr,
                 "launch_loop: --steps >= 2, --kernels >= 1, --warmup, --host-us, "
                 "--extra-calls >= 0\n");
    return 2;
  }
  // What one clock_gettime(CLOCK_MONOTONIC) costs here (the clock gpuscope hands CUPTI).
  double clock_ns = 0;
  {
    constexpr int kReads = 1'000'000;
    timespec ts{};
    const double begin = now_s();
    for (int i = 0; i < kReads; ++i) clock_gettime(CLOCK_MONOTONIC, &ts);
    clock_ns = (now_s() - begin) / kReads * 1e9;
  }
  float* x = nullptr;
  check(cudaMalloc(&x, sizeof(float)), "cudaMalloc");
  check(cudaMemset(x, 0, sizeof(float)), "cudaMemset");
  std::vector<double> step_s;
  std::vector<double> launch_us;
  for (int s = 0; s < warmup + steps; ++s) {
    const double start = now_s();
    double launching = 0;
    for (int k = 0; k < kernels; ++k) {
      spin_us(host_us);
      for (int c = 0; c < extra_calls; ++c) {
        int device = 0;
        cudaStreamCaptureStatus capturing = cudaStreamCaptureStatusNone;
        switch (c % 3) {
          case 0:
            cudaGetDevice(&device);
            break;
          case 1:
            cudaStreamIsCapturing(nullptr, &capturing);
            break;
          default:
            (void)cudaGetLastError();
            break;
        }
      }
      const double before = now_s();
      tiny<<<1, 32>>>(x);
      launching += now_s() - before;
    }
    const double end = now_s();
    nvtxMarkA("gpuscope.step");
    check(cudaDeviceSynchronize(), "step");
    if (s >= warmup) {
      step_s.push_back(end - start);
      launch_us.push_back(launching / kernels * 1e6);
    }
  }
  check(cudaGetLastError(), "launch");
  std::vector<double> sorted = step_s;
  std::sort(sorted.begin(), sorted.end());
  std::sort(launch_us.begin(), launch_us.end());
  std::printf("{\"program\":\"launch_loop\",\"steps\":%d,\"kernels\":%d,\"host_us\":%d,", steps,
              kernels, host_us);
  std::printf("\"extra_calls\":%d,\"clock_ns\":%.1f,", extra_calls, clock_ns);
  std::printf("\"step_time_s_median\":%.9f,\"launch_us_median\":%.4f,\"step_times_s\":[",
              sorted[sorted.size() / 2], launch_us[launch_us.size() / 2]);
  for (size_t i = 0; i < step_s.size(); ++i) std::printf("%s%.9f", i ? "," : "", step_s[i]);
  std::printf("],\"pid\":%d,\"tids\":[%s]}\n", static_cast<int>(getpid()), tids().c_str());
  cudaFree(x);
  return 0;
}
