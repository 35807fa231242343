// A bounded, closable multi-producer multi-consumer queue: the hand-off between gpuscope-torch's
// loader threads and the training thread. push() blocks while the queue is full, pop() while it
// is empty; close() wakes every waiter, after which push() refuses and pop() drains what is left.
#pragma once

#include <condition_variable>
#include <cstddef>
#include <deque>
#include <mutex>
#include <optional>
#include <utility>

namespace gpuscope::workloads {

template <typename T>
class BoundedQueue {
 public:
  // REQUIRES: capacity >= 1.
  explicit BoundedQueue(size_t capacity) : capacity_(capacity) {}

  // Appends `value`, waiting for room. Returns false (and drops `value`) once closed.
  bool push(T value) {
    std::unique_lock lock(mutex_);
    not_full_.wait(lock, [&] { return closed_ || items_.size() < capacity_; });
    if (closed_) return false;
    items_.push_back(std::move(value));
    not_empty_.notify_one();
    return true;
  }

  // The oldest item, waiting for one; nullopt when closed and empty.
  std::optional<T> pop() {
    std::unique_lock lock(mutex_);
    not_empty_.wait(lock, [&] { return closed_ || !items_.empty(); });
    if (items_.empty()) return std::nullopt;
    T value = std::move(items_.front());
    items_.pop_front();
    not_full_.notify_one();
    return value;
  }

  void close() {
    std::lock_guard lock(mutex_);
    closed_ = true;
    not_full_.notify_all();
    not_empty_.notify_all();
  }

  size_t size() const {
    std::lock_guard lock(mutex_);
    return items_.size();
  }
  size_t capacity() const { return capacity_; }

 private:
  const size_t capacity_;
  mutable std::mutex mutex_;
  std::condition_variable not_full_;
  std::condition_variable not_empty_;
  std::deque<T> items_;
  bool closed_ = false;
};

}  // namespace gpuscope::workloads
