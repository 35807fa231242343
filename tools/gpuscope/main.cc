// gpuscope: measure, explain and tune deep-learning work on NVIDIA GPUs.
#include <fmt/format.h>

#include <iostream>

#include "commands.h"
#include "gpuscope/exit_codes.h"
#include "gpuscope/process.h"
#include "gpuscope/status.h"
#include "gpuscope/version.h"

namespace gpuscope::cli {

int report_error(const Status& status) {
  std::cerr << fmt::format("gpuscope: error: {}\n", status.message());
  switch (status.code()) {
    case Code::no_driver:
      std::cerr << "gpuscope: no NVIDIA driver was found on this machine. Install the NVIDIA "
                   "driver, or run on a machine with an NVIDIA GPU.\n";
      break;
    case Code::no_device:
      std::cerr << "gpuscope: the NVIDIA driver is present but no GPU is visible.\n";
      break;
    case Code::permission_denied:
      std::cerr << "gpuscope: the driver refused access; try again as root or check the "
                   "permissions of /dev/nvidia*.\n";
      break;
    default:
      break;
  }
  return exit_code_for(status.code());
}

}  // namespace gpuscope::cli

int main(int argc, char** argv) {
  // A file-size limit makes writes fail (EFBIG) like a full disk, reported by each writer,
  // instead of killing gpuscope mid-row with its children orphaned.
  gpuscope::ignore_file_size_signal();
  CLI::App app{"gpuscope: measure, explain and tune deep-learning work on NVIDIA GPUs"};
  app.set_version_flag("--version", "gpuscope " + std::string(gpuscope::version()));
  app.require_subcommand(1);
  gpuscope::cli::Runner runner;
  gpuscope::cli::add_info_command(app, runner);
  gpuscope::cli::add_bench_command(app, runner);
  gpuscope::cli::add_burn_command(app, runner);
  gpuscope::cli::add_monitor_command(app, runner);
  gpuscope::cli::add_report_command(app, runner);
  gpuscope::cli::add_study_command(app, runner);
  gpuscope::cli::add_trace_command(app, runner);
  gpuscope::cli::add_sweep_command(app, runner);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? gpuscope::kExitOk : gpuscope::kExitUsage;
  }
  try {
    gpuscope::cli::restore_leftover_power_limits();  // what an interrupted sweep left
    return runner();
  } catch (const std::exception& e) {  // a bug: never let it escape main
    std::cerr << "gpuscope: internal error: " << e.what() << '\n';
    return gpuscope::kExitError;
  }
}
