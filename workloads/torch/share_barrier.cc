#include "share_barrier.h"

#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <thread>

namespace gpuscope::workloads {
namespace {

std::optional<int> int_from_env(const char* name) {
  const char* text = std::getenv(name);
  if (text == nullptr || *text == '\0') return std::nullopt;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value < 0 || value > 1 << 20) return std::nullopt;
  return static_cast<int>(value);
}

}  // namespace

std::optional<ShareBarrier> ShareBarrier::from_environment() {
  const char* go = std::getenv("GPUSCOPE_SHARE_GO_FILE");
  const auto copy = int_from_env("GPUSCOPE_SHARE_COPY");
  const auto copies = int_from_env("GPUSCOPE_SHARE_COPIES");
  if (go == nullptr || *go == '\0' || !copy || !copies || *copies < 2 || *copy >= *copies) {
    return std::nullopt;
  }
  return ShareBarrier(go, *copy, *copies);
}

ShareBarrier::ShareBarrier(std::string go_file, int copy, int copies)
    : go_file_(std::move(go_file)), copy_(copy), copies_(copies) {}

std::string ShareBarrier::mark(std::string_view phase, int copy) const {
  return go_file_ + "." + std::string(phase) + "." + std::to_string(copy);
}

void ShareBarrier::arrive(std::string_view phase) const {
  std::ofstream(mark(phase, copy_)).put('\n');
}

bool ShareBarrier::all_arrived(std::string_view phase) const {
  for (int c = 0; c < copies_; ++c) {
    if (::access(mark(phase, c).c_str(), F_OK) != 0) return false;
  }
  return true;
}

bool ShareBarrier::wait_all(std::string_view phase, const std::atomic<bool>* stop,
                            std::chrono::milliseconds limit) const {
  const auto give_up = std::chrono::steady_clock::now() + limit;
  while (!all_arrived(phase)) {
    if ((stop != nullptr && stop->load()) || std::chrono::steady_clock::now() >= give_up) {
      return false;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  return true;
}

}  // namespace gpuscope::workloads
