// The copies of one `gpuscope bench --share` trial time their windows together. gpuscope starts
// N copies with GPUSCOPE_SHARE_GO_FILE, GPUSCOPE_SHARE_COPY (0..N-1) and GPUSCOPE_SHARE_COPIES
// (N). Warm-up and capture take each copy a different time on a shared GPU, so without a second
// meeting point one copy's windows can run while the others are still warming up, and it
// measures a GPU it has to itself (seen on the H100: 0.25 s of 10 s overlapped). So each copy
// marks `<go file>.warm.<copy>` after its warm-up and waits for every copy's mark before its
// windows; after them it marks `<go file>.done.<copy>` and keeps stepping, untimed, until every
// copy is done, so that the last copy's windows still share the GPU with all the others.
// Files rather than lines to gpuscope: copies started by hand (bench/share_device.sh) meet the
// same way.
#pragma once

#include <atomic>
#include <chrono>
#include <optional>
#include <string>
#include <string_view>

namespace gpuscope::workloads {

class ShareBarrier {
 public:
  // From the environment; nullopt when this is not a copy of a trial of two or more.
  static std::optional<ShareBarrier> from_environment();
  ShareBarrier(std::string go_file, int copy, int copies);

  // Marks this copy as having reached `phase` ("warm" or "done").
  void arrive(std::string_view phase) const;
  // Whether every copy has reached `phase`.
  bool all_arrived(std::string_view phase) const;
  // Waits until every copy has reached `phase`, `stop` is set, or `limit` has passed (a copy
  // that died never arrives). True when all arrived.
  bool wait_all(std::string_view phase, const std::atomic<bool>* stop,
                std::chrono::milliseconds limit) const;

  int copy() const { return copy_; }
  int copies() const { return copies_; }

 private:
  std::string mark(std::string_view phase, int copy) const;
  std::string go_file_;
  int copy_;
  int copies_;
};

}  // namespace gpuscope::workloads
