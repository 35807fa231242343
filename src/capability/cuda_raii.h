// Owners of CUDA runtime and cuBLASLt objects: each releases what it holds in a noexcept
// destructor and is movable, not copyable. Creation returns Result so failures stay Status.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <atomic>
#include <cstddef>
#include <cstdio>
#include <type_traits>
#include <utility>

#include "capability/cublaslt_error.h"
#include "gpuscope/status.h"

namespace gpuscope::capability::detail {

// For destructors: reports a failed release on stderr, once per process (after a fatal GPU
// error every release fails, and the first report is the useful one).
inline void report_release_error(const char* what, cudaError_t status) noexcept {
  static std::atomic<bool> reported{false};
  if (status == cudaSuccess || reported.exchange(true)) return;
  std::fprintf(stderr, "gpuscope: releasing %s failed: %s (%s)\n", what, cudaGetErrorName(status),
               cudaGetErrorString(status));
}

// A handle whose release is one call. Release(handle) returns the library's status.
template <typename H, auto Release>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  explicit UniqueHandle(H handle) : handle_(handle) {}
  UniqueHandle(UniqueHandle&& other) noexcept : handle_(std::exchange(other.handle_, H{})) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, H{});
    }
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;
  ~UniqueHandle() { reset(); }

  H get() const { return handle_; }
  explicit operator bool() const { return handle_ != H{}; }
  void reset() noexcept {
    if (handle_ != H{}) {
      const auto status = Release(handle_);
      if constexpr (std::is_same_v<decltype(status), const cudaError_t>) {
        report_release_error("a CUDA object", status);
      }
      handle_ = H{};
    }
  }

 private:
  H handle_{};
};

using Stream = UniqueHandle<cudaStream_t, cudaStreamDestroy>;
using Event = UniqueHandle<cudaEvent_t, cudaEventDestroy>;
using LtHandle = UniqueHandle<cublasLtHandle_t, cublasLtDestroy>;
using LtMatmulDesc = UniqueHandle<cublasLtMatmulDesc_t, cublasLtMatmulDescDestroy>;
using LtLayout = UniqueHandle<cublasLtMatrixLayout_t, cublasLtMatrixLayoutDestroy>;
using LtPreference = UniqueHandle<cublasLtMatmulPreference_t, cublasLtMatmulPreferenceDestroy>;

inline Result<Stream> make_stream() {
  cudaStream_t stream = nullptr;
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_API_CHECK(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)));
  return Stream(stream);
}

inline Result<Event> make_event() {
  cudaEvent_t event = nullptr;
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaEventCreate(&event)));
  return Event(event);
}

// Seconds between two completed events.
inline Result<double> elapsed_seconds(const Event& start, const Event& stop) {
  float ms = 0;
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaEventElapsedTime(&ms, start.get(), stop.get())));
  return static_cast<double>(ms) * 1e-3;
}

enum class MemoryKind {
  device,  // cudaMalloc
  pinned,  // cudaHostAlloc: page-locked host memory
};

// A block of device or page-locked host memory.
template <MemoryKind kind>
class Buffer {
 public:
  Buffer() = default;
  static Result<Buffer> allocate(std::size_t bytes) {
    void* ptr = nullptr;
    if constexpr (kind == MemoryKind::device) {
      GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaMalloc(&ptr, bytes)));
    } else {
      GPUSCOPE_RETURN_IF_ERROR(
          GPUSCOPE_API_CHECK(cudaHostAlloc(&ptr, bytes, cudaHostAllocDefault)));
    }
    return Buffer(ptr, bytes);
  }
  Buffer(Buffer&& other) noexcept
      : ptr_(std::exchange(other.ptr_, nullptr)), bytes_(std::exchange(other.bytes_, 0)) {}
  Buffer& operator=(Buffer&& other) noexcept {
    if (this != &other) {
      release();
      ptr_ = std::exchange(other.ptr_, nullptr);
      bytes_ = std::exchange(other.bytes_, 0);
    }
    return *this;
  }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;
  ~Buffer() { release(); }

  void* get() const { return ptr_; }
  template <typename T>
  T* as() const {
    return static_cast<T*>(ptr_);
  }
  std::size_t bytes() const { return bytes_; }

 private:
  Buffer(void* ptr, std::size_t bytes) : ptr_(ptr), bytes_(bytes) {}
  void release() noexcept {
    if (ptr_ == nullptr) return;
    if constexpr (kind == MemoryKind::device) {
      report_release_error("device memory", cudaFree(ptr_));
    } else {
      report_release_error("pinned host memory", cudaFreeHost(ptr_));
    }
    ptr_ = nullptr;
    bytes_ = 0;
  }
  void* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

using DeviceBuffer = Buffer<MemoryKind::device>;
using PinnedBuffer = Buffer<MemoryKind::pinned>;

}  // namespace gpuscope::capability::detail
