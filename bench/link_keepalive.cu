// Issue 18's link-power experiment (bench/link_power_device.sh): does keeping the NVLink between
// GPU 0 and GPU 1 awake cost a power-capped training its clock, whatever the bytes?
//
//   link_keepalive MODE BYTES PERIOD_US
//     MODE watch: no copies, no CUDA context; only the sampler below
//     MODE peer:  every PERIOD_US, BYTES from GPU 0 to GPU 1 and BYTES back (two copy engines,
//                 peer access), each pair waited for before the next
//     MODE local: the same copies, but each within its own GPU (no link): what a second
//                 process's copies cost the training beside them, the control
// Until SIGTERM or SIGINT; meanwhile every 10 ms NVML's NVLink power state of each link of GPU 0
// and GPU 1 (NVML_FI_DEV_NVLINK_GET_POWER_STATE: high speed or low power). On the signal it
// prints one JSON line: the copies made, their bytes per second, and per GPU the share of link
// samples in high speed, with the low-power threshold NVML reports. Reads NVML only: changes
// nothing on the GPUs. Built there by nvcc (NVML's header from .carry/nvml, its library
// dlopen'd): nvcc -O2 -I.carry/nvml -o link_keepalive link_keepalive.cu -ldl
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <nvml.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

namespace {

std::atomic<bool> stop{false};

void on_signal(int) {
  stop = true;
}

void check(cudaError_t e, const char* what) {
  if (e != cudaSuccess) {
    std::fprintf(stderr, "link_keepalive: %s: %s\n", what, cudaGetErrorString(e));
    std::exit(1);
  }
}

// The NVML calls used, from the driver's library.
struct Nvml {
  decltype(&nvmlInit_v2) init;
  decltype(&nvmlShutdown) shutdown;
  decltype(&nvmlDeviceGetHandleByIndex_v2) handle;
  decltype(&nvmlDeviceGetNvLinkState) link_state;
  decltype(&nvmlDeviceGetFieldValues) fields;
} nvml;

bool load_nvml() {
  void* so = dlopen("libnvidia-ml.so.1", RTLD_NOW);
  if (!so) return false;
  nvml.init = reinterpret_cast<decltype(nvml.init)>(dlsym(so, "nvmlInit_v2"));
  nvml.shutdown = reinterpret_cast<decltype(nvml.shutdown)>(dlsym(so, "nvmlShutdown"));
  nvml.handle = reinterpret_cast<decltype(nvml.handle)>(dlsym(so, "nvmlDeviceGetHandleByIndex_v2"));
  nvml.link_state =
      reinterpret_cast<decltype(nvml.link_state)>(dlsym(so, "nvmlDeviceGetNvLinkState"));
  nvml.fields = reinterpret_cast<decltype(nvml.fields)>(dlsym(so, "nvmlDeviceGetFieldValues"));
  return nvml.init && nvml.shutdown && nvml.handle && nvml.link_state && nvml.fields &&
         nvml.init() == NVML_SUCCESS;
}

constexpr int kGpus = 2;
constexpr int kLinks = 18;  // NVML_NVLINK_MAX_LINKS on Hopper

struct LinkCounts {
  long high = 0;
  long low = 0;
  long failed = 0;
};

// One NVML field of one link (scopeId) or of the device (link -1).
bool read_field(nvmlDevice_t device, unsigned field, int link, unsigned long long& value) {
  nvmlFieldValue_t v{};
  v.fieldId = field;
  v.scopeId = link < 0 ? 0 : static_cast<unsigned>(link);
  if (nvml.fields(device, 1, &v) != NVML_SUCCESS || v.nvmlReturn != NVML_SUCCESS) {
    return false;
  }
  value = v.valueType == NVML_VALUE_TYPE_UNSIGNED_INT ? v.value.uiVal : v.value.ullVal;
  return true;
}

void sample_links(nvmlDevice_t (&devices)[kGpus], LinkCounts (&counts)[kGpus]) {
  while (!stop) {
    for (int g = 0; g < kGpus; ++g) {
      for (int l = 0; l < kLinks; ++l) {
        nvmlEnableState_t active{};
        if (nvml.link_state(devices[g], l, &active) != NVML_SUCCESS ||
            active != NVML_FEATURE_ENABLED) {
          continue;
        }
        unsigned long long state = 0;
        if (!read_field(devices[g], NVML_FI_DEV_NVLINK_GET_POWER_STATE, l, state)) {
          ++counts[g].failed;
        } else if (state == NVML_NVLINK_POWER_STATE_HIGH_SPEED) {
          ++counts[g].high;
        } else {
          ++counts[g].low;
        }
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

std::string field_or_null(nvmlDevice_t device, unsigned field) {
  unsigned long long value = 0;
  return read_field(device, field, -1, value) ? std::to_string(value) : "null";
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: link_keepalive watch|peer|local BYTES PERIOD_US\n");
    return 2;
  }
  const std::string mode = argv[1];
  const size_t bytes = std::strtoull(argv[2], nullptr, 10);
  const auto period = std::chrono::microseconds(std::strtoll(argv[3], nullptr, 10));
  if (mode != "watch" && mode != "peer" && mode != "local") {
    std::fprintf(stderr, "link_keepalive: MODE is watch, peer or local\n");
    return 2;
  }
  std::signal(SIGTERM, on_signal);
  std::signal(SIGINT, on_signal);

  if (!load_nvml()) {
    std::fprintf(stderr, "link_keepalive: NVML did not start\n");
    return 1;
  }
  nvmlDevice_t devices[kGpus];
  for (int g = 0; g < kGpus; ++g) {
    if (nvml.handle(g, &devices[g]) != NVML_SUCCESS) {
      std::fprintf(stderr, "link_keepalive: no GPU %d\n", g);
      return 1;
    }
  }
  LinkCounts counts[kGpus];
  std::thread sampler(sample_links, std::ref(devices), std::ref(counts));

  long copies = 0;
  const auto start = std::chrono::steady_clock::now();
  if (mode != "watch") {
    void* a[kGpus];
    void* b[kGpus];
    cudaStream_t s[kGpus];
    for (int g = 0; g < kGpus; ++g) {
      check(cudaSetDevice(g), "cudaSetDevice");
      if (mode == "peer") {
        cudaError_t e = cudaDeviceEnablePeerAccess(1 - g, 0);
        if (e != cudaErrorPeerAccessAlreadyEnabled) check(e, "cudaDeviceEnablePeerAccess");
      }
      check(cudaMalloc(&a[g], bytes), "cudaMalloc");
      check(cudaMalloc(&b[g], bytes), "cudaMalloc");
      check(cudaStreamCreateWithFlags(&s[g], cudaStreamNonBlocking), "cudaStreamCreate");
    }
    auto next = std::chrono::steady_clock::now();
    while (!stop) {
      for (int g = 0; g < kGpus; ++g) {
        // peer: GPU g's buffer into the other GPU's; local: into its own second buffer.
        const int to = mode == "peer" ? 1 - g : g;
        check(cudaMemcpyPeerAsync(b[to], to, a[g], g, bytes, s[g]), "cudaMemcpyPeerAsync");
      }
      for (int g = 0; g < kGpus; ++g) check(cudaStreamSynchronize(s[g]), "cudaStreamSynchronize");
      ++copies;
      next += period;
      std::this_thread::sleep_until(next);
    }
  } else {
    while (!stop) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  const double seconds =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  sampler.join();

  std::printf(
      "{\"type\":\"link_keepalive\",\"mode\":\"%s\",\"bytes\":%zu,\"period_us\":%lld,"
      "\"seconds\":%.2f,\"copies\":%ld,\"bytes_per_second_each_way\":%.0f,\"gpus\":[",
      mode.c_str(), bytes, static_cast<long long>(period.count()), seconds, copies,
      seconds > 0 ? copies * static_cast<double>(bytes) / seconds : 0.0);
  for (int g = 0; g < kGpus; ++g) {
    const LinkCounts& c = counts[g];
    const long n = c.high + c.low;
    std::printf(
        "%s{\"gpu\":%d,\"link_samples\":%ld,\"high_speed_share\":%s,\"failed_reads\":%ld,"
        "\"low_power_threshold\":%s,\"threshold_units\":%s,\"threshold_supported\":%s}",
        g ? "," : "", g, n, n ? std::to_string(double(c.high) / n).c_str() : "null", c.failed,
        field_or_null(devices[g], NVML_FI_DEV_NVLINK_GET_POWER_THRESHOLD).c_str(),
        field_or_null(devices[g], NVML_FI_DEV_NVLINK_GET_POWER_THRESHOLD_UNITS).c_str(),
        field_or_null(devices[g], NVML_FI_DEV_NVLINK_GET_POWER_THRESHOLD_SUPPORTED).c_str());
  }
  std::printf("]}\n");
  nvml.shutdown();
  return 0;
}
