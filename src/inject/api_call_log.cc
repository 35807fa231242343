#include "inject/api_call_log.h"

#include <utility>

namespace gpuscope::inject {

bool ApiCallLog::push(const ApiCall& call) {
  std::lock_guard lock(mutex_);
  if (calls_.size() >= max_entries_) {
    ++dropped_;
    return false;
  }
  calls_.push_back(call);
  return true;
}

std::vector<ApiCall> ApiCallLog::take() {
  std::vector<ApiCall> taken;
  taken.reserve(1024);
  std::lock_guard lock(mutex_);
  std::swap(taken, calls_);
  return taken;
}

bool ApiCallLog::wants_draining() const {
  std::lock_guard lock(mutex_);
  return calls_.size() * 4 >= max_entries_;
}

uint64_t ApiCallLog::take_dropped() {
  std::lock_guard lock(mutex_);
  return std::exchange(dropped_, 0);
}

}  // namespace gpuscope::inject
