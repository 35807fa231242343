// Where the journals live, who may change limits, and restoring what an interrupted sweep left.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <ostream>
#include <string>

#include "common/guardian.h"
#include "gpuscope/sweep.h"
#include "sweep/journal.h"

namespace gpuscope::sweep {

std::string default_state_dir() {
  if (const char* dir = std::getenv("GPUSCOPE_STATE_DIR"); dir != nullptr && *dir != '\0') {
    return dir;
  }
  if (::geteuid() == 0) return "/var/lib/gpuscope";
  if (const char* xdg = std::getenv("XDG_STATE_HOME"); xdg != nullptr && *xdg != '\0') {
    return std::string(xdg) + "/gpuscope";
  }
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : ".") + "/.local/state/gpuscope";
}

bool has_power_change_privilege() {
  constexpr int kCapSysAdmin = 21;  // linux/capability.h
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (!line.starts_with("CapEff:")) continue;
    const unsigned long long caps = std::strtoull(line.c_str() + 7, nullptr, 16);
    return ((caps >> kCapSysAdmin) & 1ULL) != 0;
  }
  return ::geteuid() == 0;
}

Result<int> restore_leftover_limits(const std::string& state_dir, std::ostream& out,
                                    std::optional<pid_t> only_pid) {
  const std::vector<std::string> paths = detail::list_journals(state_dir);
  if (paths.empty()) return 0;
  std::unique_ptr<nvml::Session> session;
  int restored = 0;
  Status failure;
  for (const std::string& path : paths) {
    auto entry = detail::read_journal(path);
    if (!entry.ok()) {
      if (entry.code() == Code::not_found) continue;  // its sweep removed it meanwhile
      out << fmt::format("gpuscope: warning: {} (moved aside to {}.bad)\n",
                         entry.status().message(), path);
      std::rename(path.c_str(), (path + ".bad").c_str());
      continue;
    }
    if (only_pid && entry->pid != *only_pid) continue;
    // A sweep that still runs holds the lock: its journal is not left over.
    auto lock = detail::GpuLock::acquire(state_dir, entry->uuid, only_pid.has_value());
    if (!lock.ok()) continue;
    auto current = detail::read_journal(path);  // its sweep may have finished meanwhile
    if (!current.ok()) continue;
    if (session == nullptr) {
      auto opened = nvml::Session::open();
      if (!opened.ok()) {
        return opened.status().with_context(
            fmt::format("cannot restore the power limits or clock locks in {}", state_dir));
      }
      session = std::move(opened).value();
    }
    const Status status = detail::restore_entry(*session, state_dir, *current);
    if (status.ok()) {
      ++restored;
      out << fmt::format(
          "gpuscope: restored GPU {} ({}, {}) to {}, its {} before a sweep that did not finish "
          "(pid {}; journal {})\n",
          current->index, current->name, current->uuid, detail::prior_setting(*current),
          current->knob == Knob::locked_clocks ? "clock setting (a reset)" : "power limit",
          current->pid, path);
    } else {
      out << fmt::format(
          "gpuscope: warning: could not restore GPU {} ({}) to {} from before an interrupted "
          "sweep: {}{}\n",
          current->index, current->uuid, detail::prior_setting(*current), status.message(),
          status.code() == Code::gpu_lost || status.code() == Code::not_found
              ? " (the GPU is gone; after a reset it starts at its defaults)"
              : "; run `gpuscope sweep --restore` as root");
      if (status.code() != Code::gpu_lost && status.code() != Code::not_found) failure = status;
    }
  }
  if (!failure.ok()) return failure;
  return restored;
}

int run_guardian(const std::string& state_dir, pid_t sweep_pid) {
  return gpuscope::detail::guardian_main([&] {
    auto restored = restore_leftover_limits(state_dir, std::cerr, sweep_pid);
    return restored.ok() ? 0 : 1;
  });
}

}  // namespace gpuscope::sweep
