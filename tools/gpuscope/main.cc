// gpuscope: measure, explain and tune deep-learning work on NVIDIA GPUs.
#include <fmt/format.h>

#include <cstdlib>
#include <iostream>
#include <optional>
#include <string_view>

#include "commands.h"
#include "gpuscope/exit_codes.h"
#include "gpuscope/monitor.h"
#include "gpuscope/process.h"
#include "gpuscope/status.h"
#include "gpuscope/version.h"

namespace gpuscope::cli {
namespace {

bool g_verbose = false;

// The first word that is no option must name a command: CLI11 would only say "A subcommand is
// required". Returns the exit code when it does not.
std::optional<int> check_command_word(CLI::App& app, int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    const std::string_view word = argv[i];
    if (word == "--") return std::nullopt;
    if (word.starts_with("-")) continue;
    std::string names;
    for (const CLI::App* sub : app.get_subcommands({})) {
      if (sub->check_name(std::string(word))) return std::nullopt;
      names += (names.empty() ? "" : ", ") + sub->get_name();
    }
    std::cerr << fmt::format(
        "gpuscope: error: unknown command '{}'; the commands are: {} (`gpuscope --help` says "
        "what each does)\n",
        word, names);
    return kExitUsage;
  }
  return std::nullopt;
}

}  // namespace

void set_verbose(bool verbose) {
  g_verbose = verbose;
}

bool verbose() {
  return g_verbose;
}

void print_error(const Status& status) {
  std::cerr << fmt::format("gpuscope: error: {}\n", status.message());
  if (g_verbose && !status.detail().empty()) {
    std::cerr << fmt::format("gpuscope:   ({}: {})\n", code_name(status.code()), status.detail());
  }
}

int report_error(const Status& status) {
  print_error(status);
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

std::optional<int> refuse_unstartable(const std::vector<std::string>& command) {
  const Status runnable = telemetry::check_command(command);
  if (runnable.ok()) return std::nullopt;
  std::cerr << "gpuscope: error: " << runnable.message() << '\n';
  return command_start_exit_code(runnable).value_or(kExitError);
}

}  // namespace gpuscope::cli

int main(int argc, char** argv) {
  // A file-size limit makes writes fail (EFBIG) like a full disk, reported by each writer,
  // instead of killing gpuscope mid-row with its children orphaned.
  gpuscope::ignore_file_size_signal();
  CLI::App app{"gpuscope: measure, explain and tune deep-learning work on NVIDIA GPUs"};
  app.set_version_flag("--version", "gpuscope " + std::string(gpuscope::version()));
  app.require_subcommand(1);
  // Options of the root are also taken after the command ("gpuscope info --verbose").
  app.fallthrough();
  bool verbose = false;
  app.add_flag("--verbose", verbose,
               "On an error, also show where it came from: the failing library call and source "
               "line (also GPUSCOPE_VERBOSE=1)");
  gpuscope::cli::Runner runner;
  gpuscope::cli::add_info_command(app, runner);
  gpuscope::cli::add_bench_command(app, runner);
  gpuscope::cli::add_burn_command(app, runner);
  gpuscope::cli::add_monitor_command(app, runner);
  gpuscope::cli::add_report_command(app, runner);
  gpuscope::cli::add_study_command(app, runner);
  gpuscope::cli::add_trace_command(app, runner);
  gpuscope::cli::add_diagnose_command(app, runner);
  gpuscope::cli::add_sweep_command(app, runner);
  if (auto code = gpuscope::cli::check_command_word(app, argc, argv)) return *code;
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    int code = app.exit(e);
    return code == 0 ? gpuscope::kExitOk : gpuscope::kExitUsage;
  }
  const char* from_env = std::getenv("GPUSCOPE_VERBOSE");
  gpuscope::cli::set_verbose(verbose || (from_env != nullptr && std::string_view(from_env) != "" &&
                                         std::string_view(from_env) != "0"));
  try {
    gpuscope::cli::restore_leftover_power_limits();  // what an interrupted sweep left
    return runner();
  } catch (const std::exception& e) {  // a bug: never let it escape main
    std::cerr << "gpuscope: internal error: " << e.what() << '\n';
    return gpuscope::kExitError;
  }
}
