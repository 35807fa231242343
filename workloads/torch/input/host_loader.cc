#include "input/host_loader.h"

#include <algorithm>
#include <chrono>

namespace gpuscope::workloads {

HostLoader::HostLoader(const LoaderOptions& options, const SlotFactory& make_slot,
                       BatchProducer produce)
    : options_(options),
      produce_(std::move(produce)),
      free_(static_cast<size_t>(std::max<int64_t>(options.workers, 1) + options.prefetch +
                                options.held)),
      ready_(free_.capacity()) {
  for (size_t i = 0; i < free_.capacity(); ++i) {
    slots_.push_back(make_slot());
    free_.push(slots_.back().get());
  }
  running_workers_ = options_.workers;
  for (int64_t i = 0; i < options_.workers; ++i) workers_.emplace_back([this] { work(); });
}

HostLoader::~HostLoader() {
  stop();
}

bool HostLoader::produce_next(HostSlot& slot) {
  const int64_t index = next_index_.fetch_add(1);
  if (options_.limit && index >= *options_.limit) return false;
  const auto start = std::chrono::steady_clock::now();
  slot.index = index;
  produce_(index, slot);
  produce_nanoseconds_ +=
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - start)
          .count();
  ++produced_;
  return true;
}

void HostLoader::work() {
  while (auto slot = free_.pop()) {
    bool more = false;
    try {
      more = produce_next(**slot);
    } catch (...) {
      std::lock_guard lock(error_mutex_);
      if (!error_) error_ = std::current_exception();
    }
    if (!more || !ready_.push(*slot)) break;
  }
  // The last worker out ends the stream; a failure ends it at once.
  bool failed = false;
  {
    std::lock_guard lock(error_mutex_);
    failed = error_ != nullptr;
  }
  if (--running_workers_ == 0 || failed) ready_.close();
}

HostSlot* HostLoader::next() {
  if (options_.workers == 0 && !stopped_) {
    auto slot = free_.pop();
    if (!slot) return nullptr;
    if (produce_next(**slot)) return *slot;
    free_.push(*slot);
    return nullptr;
  }
  auto slot = ready_.pop();
  if (slot) return *slot;
  std::lock_guard lock(error_mutex_);
  if (error_) std::rethrow_exception(error_);
  return nullptr;
}

void HostLoader::recycle(HostSlot* slot) {
  free_.push(slot);
}

void HostLoader::stop() {
  if (stopped_) return;
  stopped_ = true;
  free_.close();
  ready_.close();
  for (auto& worker : workers_) worker.join();
  workers_.clear();
}

LoaderStats HostLoader::stats() const {
  return {produced_.load(), static_cast<double>(produce_nanoseconds_.load()) * 1e-9};
}

}  // namespace gpuscope::workloads
