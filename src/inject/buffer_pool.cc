#include "inject/buffer_pool.h"

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace gpuscope::inject {
namespace {
constexpr size_t kAlign = 8;  // CUPTI's required alignment of activity buffers
static_assert(alignof(std::max_align_t) % kAlign == 0, "calloc's alignment suits CUPTI");
}  // namespace

BufferPool::BufferPool(size_t buffer_bytes, size_t max_buffers, size_t kept_free)
    : buffer_bytes_(buffer_bytes), max_buffers_(max_buffers), kept_free_(kept_free) {}

BufferPool::~BufferPool() {
  for (uint8_t* buffer : free_) std::free(buffer);
  for (const Filled& filled : filled_) std::free(filled.buffer);
}

uint8_t* BufferPool::acquire() {
  std::lock_guard lock(mutex_);
  if (!free_.empty()) {
    uint8_t* buffer = free_.back();
    free_.pop_back();
    return buffer;
  }
  if (allocated_ >= max_buffers_) {
    ++refused_;
    return nullptr;
  }
  // calloc: zeroed pages from the kernel, touched only as CUPTI writes them.
  auto* buffer = static_cast<uint8_t*>(std::calloc(1, buffer_bytes_));
  if (buffer == nullptr) {
    ++refused_;
    return nullptr;
  }
  ++allocated_;
  peak_allocated_ = std::max(peak_allocated_, allocated_);
  return buffer;
}

void BufferPool::fill(uint8_t* buffer, size_t valid_bytes) {
  if (buffer == nullptr) return;
  std::lock_guard lock(mutex_);
  filled_.push_back({buffer, std::min(valid_bytes, buffer_bytes_)});
}

std::vector<BufferPool::Filled> BufferPool::take_filled() {
  std::lock_guard lock(mutex_);
  return std::exchange(filled_, {});
}

void BufferPool::release(uint8_t* buffer) {
  if (buffer == nullptr) return;
  {
    std::lock_guard lock(mutex_);
    if (free_.size() >= kept_free_) {
      std::free(buffer);
      if (allocated_ > 0) --allocated_;
      return;
    }
  }
  std::memset(buffer, 0, buffer_bytes_);  // here, off the lock and off CUPTI's critical path
  std::lock_guard lock(mutex_);
  free_.push_back(buffer);
}

bool BufferPool::wants_draining() const {
  std::lock_guard lock(mutex_);
  return filled_.size() * 2 >= max_buffers_;
}

size_t BufferPool::held_bytes() const {
  std::lock_guard lock(mutex_);
  return allocated_ * buffer_bytes_;
}

size_t BufferPool::peak_held_bytes() const {
  std::lock_guard lock(mutex_);
  return peak_allocated_ * buffer_bytes_;
}

uint64_t BufferPool::refused() const {
  std::lock_guard lock(mutex_);
  return refused_;
}

}  // namespace gpuscope::inject
