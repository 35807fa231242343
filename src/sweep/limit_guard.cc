#include "sweep/limit_guard.h"

#include <fmt/format.h>
#include <unistd.h>

#include <iostream>

namespace gpuscope::sweep::detail {

bool LimitGuard::restore(std::vector<std::string>& notes) noexcept {
  if (done_) return true;
  done_ = true;
  bool all = true;
  for (const JournalEntry& entry : entries_) {
    try {
      const Status status = restore_entry(session_, state_dir_, entry);
      const bool clocks = entry.knob == Knob::locked_clocks;
      if (status.ok()) {
        notes.push_back(
            clocks ? fmt::format("GPU {}: SM clock lock reset (unlocked again)", entry.index)
                   : fmt::format("GPU {}: power limit restored to {:.0f} W", entry.index,
                                 entry.prior_limit_w));
        continue;
      }
      all = false;
      const bool gone = status.code() == Code::gpu_lost || status.code() == Code::not_found;
      notes.push_back(
          fmt::format("GPU {}: could not restore its {}: {}{}", entry.index,
                      clocks ? "SM clocks (reset the lock)"
                             : fmt::format("power limit of {:.0f} W", entry.prior_limit_w),
                      status.message(),
                      gone ? " (the GPU is gone; after a reset it starts at its defaults)"
                           : "; the journal stays: run `gpuscope sweep --restore` as root"));
    } catch (...) {
      all = false;
      notes.push_back(fmt::format(
          "GPU {}: restoring its {} failed unexpectedly; run "
          "`gpuscope sweep --restore` as root",
          entry.knob == Knob::locked_clocks ? "SM clocks" : "power limit", entry.index));
    }
  }
  return all;
}

void LimitGuard::release_unchanged() noexcept {
  if (done_) return;
  done_ = true;
  for (const JournalEntry& entry : entries_) {
    ::unlink(journal_path(state_dir_, entry.uuid, entry.knob).c_str());
  }
}

LimitGuard::~LimitGuard() {
  if (done_) return;
  std::vector<std::string> notes;
  restore(notes);
  try {
    for (const std::string& note : notes) std::cerr << "gpuscope: " << note << '\n';
  } catch (...) {
  }
}

}  // namespace gpuscope::sweep::detail
