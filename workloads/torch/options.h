// gpuscope-torch's command line: one argument table that both the parser and --help read.
#pragma once

#include <span>
#include <string>
#include <variant>

#include "run_config.h"

namespace gpuscope::workloads {

struct CommandLine {
  RunConfig config;
  bool help = false;      // --help: print help_text() and exit 0
  bool describe = false;  // --describe: print the catalogue as one JSON line and exit 0
};

struct UsageError {
  std::string message;
};

// Parses argv[1..]. Unknown options, missing or malformed values are usage errors.
std::variant<CommandLine, UsageError> parse_command_line(std::span<const char* const> args);

// Usage, every option with its default, the models and the precision modes.
std::string help_text();

// The models, tasks, modes and SDPA backends as one JSON object (for a parent process).
std::string describe_json();

}  // namespace gpuscope::workloads
