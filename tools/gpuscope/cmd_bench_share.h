// `gpuscope bench --share N[,M...]`: its options, and running it (cmd_bench.cc hands over when
// --share is given). Kept apart from cmd_bench.cc so the matrix's options stay as they are.
#pragma once

#include <CLI/CLI.hpp>
#include <string>
#include <vector>

#include "gpuscope/bench.h"

namespace gpuscope::cli {

struct ShareArgs {
  std::string counts;         // --share 1,2,4 (empty: not sharing)
  std::string modes = "all";  // --share-mode
  int mps_thread_percentage = 0;
  std::string mps_daemon = "private";
  std::vector<std::string> guardian;  // hidden --mps-guardian JOURNAL PID
};

// What the rest of bench's options say, for a shared run.
struct ShareContext {
  std::vector<bench::RowSpec> rows;  // each shared in turn; empty: `command`
  std::vector<std::string> command;
  std::string json, store, torch_bin;
  unsigned gpu = 0;
  int interval_ms = 100;
  double row_timeout_s = 900;
  bool force = false;
};

void add_share_options(CLI::App* cmd, ShareArgs& args);
// The guardian process (--mps-guardian), or nothing: -1.
int run_share_guardian(const ShareArgs& args);
int run_share_command(const ShareArgs& args, const ShareContext& context);

}  // namespace gpuscope::cli
