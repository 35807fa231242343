// The bench matrix's row options, as `gpuscope bench` and `gpuscope sweep` take them: one set of
// names, checks and defaults (--model, --task, --mode, --batch; bench also --preset, --knob,
// --input and --gpus), expanded into rows by one function.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "gpuscope/bench.h"
#include "gpuscope/status.h"

namespace gpuscope::cli {

struct RowArgs {
  std::string preset;
  std::vector<std::string> models, tasks, modes, batches, knobs, inputs;
  std::string gpus;              // --gpus LIST: data-parallel scaling (bench_scaling.h)
  bool no_sync_ceiling = false;  // --no-sync-ceiling: each data-parallel row's twin without sync
};

// --model, --task, --mode and --batch.
void add_row_options(CLI::App* cmd, RowArgs& args);

// A preset's rows by name (bench::preset for bench).
using PresetLookup = std::function<Result<std::vector<bench::RowSpec>>(const std::string&)>;

// The rows `args` name: `preset`'s rows for --preset (alone), else the matrix of --model (tasks
// default to train and infer, or train with --gpus; modes to all). invalid_argument saying what
// is wrong: no row given, a preset with matrix options, an unknown task, mode, knob or input.
Result<std::vector<bench::RowSpec>> rows_from(const RowArgs& args, const PresetLookup& preset);

}  // namespace gpuscope::cli
