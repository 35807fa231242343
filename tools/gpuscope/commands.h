// Each subcommand registers itself on the root app and returns its exit code when run.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "gpuscope/status.h"

namespace gpuscope::cli {

using Runner = std::function<int()>;

// Adds `info` to `app`; sets `runner` to run it when it was chosen.
void add_info_command(CLI::App& app, Runner& runner);
// Adds `bench`.
void add_bench_command(CLI::App& app, Runner& runner);
// Adds `burn`.
void add_burn_command(CLI::App& app, Runner& runner);
// Adds `monitor`.
void add_monitor_command(CLI::App& app, Runner& runner);

// Adds `report`.
void add_report_command(CLI::App& app, Runner& runner);
// Adds `study`.
void add_study_command(CLI::App& app, Runner& runner);
// Adds `trace`.
void add_trace_command(CLI::App& app, Runner& runner);
// Adds `diagnose`.
void add_diagnose_command(CLI::App& app, Runner& runner);
// Adds `sweep`.
void add_sweep_command(CLI::App& app, Runner& runner);

// Restores the power limits a sweep that did not finish left in its journal (saying so on
// stderr); every command calls it at start, except the ones that restore themselves.
void restore_leftover_power_limits();

// Prints "gpuscope: error: MESSAGE" (and a hint) to stderr and returns the exit code for it.
int report_error(const Status& status);
// Checks, before anything starts, that the person's `command` (-- CMD ARGS..., not empty) can be
// started (telemetry::check_command): nullopt where it can, else prints "gpuscope: error:
// MESSAGE" and returns what a shell would answer (command_start_exit_code: 127 / 126).
std::optional<int> refuse_unstartable(const std::vector<std::string>& command);
// Prints "gpuscope: error: MESSAGE" to stderr, and with --verbose (or GPUSCOPE_VERBOSE=1) the
// Status's detail: the failing call and source line.
void print_error(const Status& status);

// Whether --verbose or GPUSCOPE_VERBOSE=1 asked for the detail of errors.
bool verbose();
void set_verbose(bool verbose);

}  // namespace gpuscope::cli
