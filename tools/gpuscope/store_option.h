// `--store FILE` for the commands that print a JSON document (info, burn): the store is opened
// before the work, so a bad path fails at once instead of after minutes of burning, and the
// document's runs are written into it at the end, stamped with this command line and its times.
#pragma once

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "gpuscope/clock.h"
#include "gpuscope/status.h"
#include "gpuscope/store.h"

namespace gpuscope::cli {

// This process's command line, its arguments joined by spaces (from /proc/self/cmdline).
std::string command_line();

class StoreOption {
 public:
  // An empty path is "no --store": record() then does nothing.
  static Result<StoreOption> open(const std::string& path);

  // Writes the runs of `document` (`info --json` or `burn --json` output), with this command
  // line and [started, ended] as their times, and says on stderr where they went.
  Status record(const nlohmann::json& document, double started_unix_s, double ended_unix_s);
  // Writes one run a command converted from its own records (store::info_to_run).
  Status record(store::RunData run, double started_unix_s, double ended_unix_s);
  // Writes a run that carries its own command line and times (bench::bench_to_run).
  Status record(const store::RunData& run);

 private:
  std::string path_;
  std::unique_ptr<store::Store> store_;
};

}  // namespace gpuscope::cli
