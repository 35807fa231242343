// The bench matrix's row options, shared by `gpuscope bench` and `gpuscope sweep`.
#include "row_options.h"

#include <fmt/format.h>

#include "gpuscope/bench_scaling.h"

namespace gpuscope::cli {

void add_row_options(CLI::App* cmd, RowArgs& args) {
  cmd->add_option("--model", args.models, "Models: vit_b16, resnet50, gpt2")->delimiter(',');
  cmd->add_option("--task", args.tasks, "train, infer (default both)")->delimiter(',');
  cmd->add_option("--mode", args.modes,
                  "Precision modes: fp32 tf32 amp_fp16 amp_bf16 fp16 bf16 fp8, or all (default)")
      ->delimiter(',');
  cmd->add_option("--batch", args.batches, "Batch sizes: numbers or auto (default: the model's)")
      ->delimiter(',');
}

Result<std::vector<bench::RowSpec>> rows_from(const RowArgs& a, const PresetLookup& preset) {
  std::vector<bench::RowSpec> rows;
  const bool matrix_given = !a.models.empty() || !a.tasks.empty() || !a.modes.empty() ||
                            !a.batches.empty() || !a.knobs.empty() || !a.inputs.empty();
  if (!a.preset.empty() && !a.gpus.empty()) {
    return Status(Code::invalid_argument, "--gpus scales a matrix: give --model (not --preset)");
  }
  if (a.no_sync_ceiling && a.gpus.empty()) {
    return Status(Code::invalid_argument,
                  "--no-sync-ceiling goes with --gpus: it measures data-parallel rows");
  }
  if (!a.preset.empty()) {
    if (matrix_given) {
      return Status(Code::invalid_argument,
                    "--preset is a whole matrix: leave out --model, --task, --mode, --batch, "
                    "--knob and --input (or drop --preset)");
    }
    GPUSCOPE_ASSIGN_OR_RETURN(rows, preset(a.preset));
  } else {
    if (a.models.empty()) {
      return Status(Code::invalid_argument,
                    "nothing to run: give --preset NAME or --model M (see --help)");
    }
    bench::MatrixOptions o;
    o.models = a.models;
    o.no_sync_ceiling = a.no_sync_ceiling;
    if (!a.gpus.empty()) {
      GPUSCOPE_ASSIGN_OR_RETURN(o.gpus, bench::parse_gpu_counts(a.gpus));
    }
    const std::vector<std::string> default_tasks = o.gpus.empty()
                                                       ? std::vector<std::string>{"train", "infer"}
                                                       : std::vector<std::string>{"train"};
    o.tasks = a.tasks.empty() ? default_tasks : a.tasks;
    o.modes = a.modes;
    if (o.modes.empty() || (o.modes.size() == 1 && o.modes[0] == "all")) {
      o.modes = bench::all_modes();
    }
    o.batches = a.batches;
    for (const std::string& k : a.knobs) {
      auto eq = k.find('=');
      if (eq == std::string::npos || eq == 0) {
        return Status(Code::invalid_argument,
                      fmt::format("--knob {}: expected NAME=V1[,V2...] (names: graphs, "
                                  "fused_adamw, cudnn_benchmark, channels_last)",
                                  k));
      }
      std::vector<std::string> values;
      std::string rest = k.substr(eq + 1);
      for (std::size_t start = 0;;) {
        auto comma = rest.find(',', start);
        values.push_back(rest.substr(start, comma - start));
        if (comma == std::string::npos) break;
        start = comma + 1;
      }
      o.knobs.emplace_back(k.substr(0, eq), values);
    }
    for (const std::string& in : a.inputs) {
      GPUSCOPE_ASSIGN_OR_RETURN(auto path, bench::parse_input_path(in));
      o.inputs.push_back(path);
    }
    GPUSCOPE_ASSIGN_OR_RETURN(rows, bench::expand_matrix(o));
  }
  return rows;
}

}  // namespace gpuscope::cli
