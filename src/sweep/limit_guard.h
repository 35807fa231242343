// The RAII guard of a sweep's changes: from its construction (after the journal is written)
// until restore(), destroying it sets every GPU back to its prior limit, so a return, an error
// or an exception anywhere in the sweep restores the limits.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "gpuscope/nvml.h"
#include "sweep/journal.h"

namespace gpuscope::sweep::detail {

class LimitGuard {
 public:
  // REQUIRES: `session` outlives the guard; the entries' journals are written.
  LimitGuard(const nvml::Session& session, std::string state_dir, std::vector<JournalEntry> entries)
      : session_(session), state_dir_(std::move(state_dir)), entries_(std::move(entries)) {}
  // Restores (once), telling stderr what it did.
  ~LimitGuard();
  LimitGuard(const LimitGuard&) = delete;
  LimitGuard& operator=(const LimitGuard&) = delete;

  // Sets each GPU back to its prior limit, checks it took, and removes its journal; a journal
  // whose restore failed stays for the guardian or the next gpuscope. Appends one note per GPU.
  // True when every GPU is back. Only the first call does anything.
  bool restore(std::vector<std::string>& notes) noexcept;

  // Nothing was changed after all (a refusal before the first change): removes the journals.
  void release_unchanged() noexcept;

 private:
  const nvml::Session& session_;
  std::string state_dir_;
  std::vector<JournalEntry> entries_;
  bool done_ = false;
};

}  // namespace gpuscope::sweep::detail
