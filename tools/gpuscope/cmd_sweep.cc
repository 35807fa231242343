// gpuscope sweep [--gpu N|UUID,...] [--knob power|clocks] [--allow-power-changes] [--dry-run]
//                [--limits FROM:TO:STEP]
//                [--window S] [--warmup S] [--cooldown S] [--windows N] [--no-refine]
//                [--json FILE] [--store FILE] [--restore]
//                (--model M,.. [--task T,..] [--mode P,..] [--batch B,..] | --preset seeds
//                 [--torch-bin PATH] | --burn PRECISION,.. | -- CMD ARGS...)
// (and, hidden, `sweep --guardian-for PID`: the guardian process the sweep starts)
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <fstream>
#include <iostream>

#include "commands.h"
#include "gpuscope/bench.h"
#include "gpuscope/burn.h"
#include "gpuscope/exit_codes.h"
#include "gpuscope/monitor.h"
#include "gpuscope/precision.h"
#include "gpuscope/store.h"
#include "gpuscope/sweep.h"
#include "row_options.h"
#include "store_option.h"
#include "validators.h"

namespace gpuscope::cli {
namespace {

// Set while parsing when this process is a sweep's guardian, or `sweep --restore`: the startup
// restore is theirs to do.
bool g_restores_itself = false;

struct SweepArgs : RowArgs {
  std::string torch_bin;
  std::vector<std::string> burn;       // --burn: precisions of the burn worker's GEMM
  std::vector<std::string> selectors;  // --gpu
  bool allow = false, dry_run = false, restore = false, no_refine = false;
  std::string knob = "power";
  std::string limits, json, store;
  double window_s = 5, warmup_s = 10, cooldown_s = 0;
  int windows = 2;
  int guardian_for = 0;
  std::vector<std::string> command;
};

Result<sweep::LimitRange> parse_limits(const std::string& text, sweep::Knob knob) {
  sweep::LimitRange range;
  char extra = 0;
  if (std::sscanf(text.c_str(), "%lf:%lf:%lf%c", &range.from_w, &range.to_w, &range.step_w,
                  &extra) != 3) {
    return Status(Code::invalid_argument,
                  knob == sweep::Knob::locked_clocks
                      ? "--limits takes FROM:TO:STEP in MHz with --knob clocks, e.g. 1980:900:90"
                      : "--limits takes FROM:TO:STEP in watts, e.g. 480:200:20");
  }
  return range;
}

std::string self_executable() {
  char path[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<std::size_t>(n)) : std::string("gpuscope");
}

int run_restore() {
  const std::string dir = sweep::default_state_dir();
  auto restored = sweep::restore_leftover_limits(dir, std::cout);
  if (!restored.ok()) return report_error(restored.status());
  if (*restored == 0) {
    std::cout << fmt::format(
        "gpuscope: no power limit or clock lock to restore (journal folder {})\n", dir);
  }
  return kExitOk;
}

// `--preset seeds`: seeds/000's rows, ViT-B/16 training and inference in every precision mode
// (a mode the GPU lacks is skipped by gpuscope-torch itself).
Result<std::vector<bench::RowSpec>> sweep_preset(const std::string& name) {
  if (name == "seeds") return bench::seed000_rows();
  return Status(Code::not_found, "unknown sweep preset '" + name + "' (one: seeds)");
}

// The workloads: bench rows (gpuscope-torch --windows 0, until stopped, on the swept GPU), burn
// GEMMs, or the command after --.
Result<std::vector<sweep::WorkloadSpec>> workloads_from(const SweepArgs& a) {
  const bool rows_given = !a.preset.empty() || !a.models.empty() || !a.tasks.empty() ||
                          !a.modes.empty() || !a.batches.empty();
  const int kinds = (rows_given ? 1 : 0) + (a.burn.empty() ? 0 : 1) + (a.command.empty() ? 0 : 1);
  if (kinds > 1) {
    return Status(Code::invalid_argument,
                  "give the workload as bench rows (--model/--preset), burn GEMMs (--burn) or "
                  "-- CMD, not both");
  }
  if ((rows_given || !a.burn.empty()) &&
      (a.selectors.size() > 1 ||
       (a.selectors.size() == 1 && a.selectors.front().find(',') != std::string::npos))) {
    return Status(Code::invalid_argument,
                  "a bench row or burn GEMM runs on one GPU: give one --gpu (or sweep your own "
                  "multi-GPU command after --)");
  }
  const std::string gpu = a.selectors.empty() ? "0" : a.selectors.front();
  std::vector<sweep::WorkloadSpec> workloads;
  if (!a.burn.empty()) {
    GPUSCOPE_ASSIGN_OR_RETURN(std::string worker, burn::locate_worker());
    for (const std::string& name : a.burn) {
      const auto precision = parse_precision(name);
      if (!precision) {
        return Status(Code::invalid_argument,
                      fmt::format("--burn {}: not a precision (fp64, fp32, tf32, fp16, bf16, "
                                  "fp8, int8)",
                                  name));
      }
      workloads.push_back(sweep::burn_workload(*precision, worker, gpu));
    }
    return workloads;
  }
  if (!rows_given) {
    if (a.command.empty()) return std::vector<sweep::WorkloadSpec>{};  // run_sweep says so
    sweep::WorkloadSpec spec;
    spec.command = a.command;
    spec.label = sweep::command_label(a.command);
    return std::vector<sweep::WorkloadSpec>{spec};
  }
  GPUSCOPE_ASSIGN_OR_RETURN(std::vector<bench::RowSpec> rows, rows_from(a, sweep_preset));
  GPUSCOPE_ASSIGN_OR_RETURN(std::string torch_bin, bench::find_torch_bin(a.torch_bin));
  for (const bench::RowSpec& row : rows) {
    workloads.push_back(sweep::row_workload(row, torch_bin, gpu));
  }
  return workloads;
}

int run_sweep_command(const SweepArgs& a) {
  if (a.guardian_for > 0) {
    return sweep::run_guardian(sweep::default_state_dir(), static_cast<pid_t>(a.guardian_for));
  }
  if (a.restore) return run_restore();
  auto workloads = workloads_from(a);
  if (!workloads.ok()) return report_error(workloads.status());
  sweep::SweepOptions o;
  o.gpus = a.selectors;
  // A bench row runs on one GPU: that one is swept (GPU 0 without --gpu, as bench runs).
  if (o.gpus.empty() && !workloads->empty() && a.command.empty()) o.gpus = {"0"};
  o.workloads = *workloads;
  o.knob = a.knob == "clocks" ? sweep::Knob::locked_clocks : sweep::Knob::power_limit;
  o.allow_power_changes = a.allow;
  o.dry_run = a.dry_run;
  o.refine = !a.no_refine;
  o.window_s = a.window_s;
  o.warmup_s = a.warmup_s;
  o.cooldown_s = a.cooldown_s;
  o.min_windows = a.windows;
  o.max_windows = std::max(a.windows * 3, 6);
  o.guardian_argv = {self_executable(), "sweep", "--guardian-for"};
  if (!a.limits.empty()) {
    auto range = parse_limits(a.limits, o.knob);
    if (!range.ok()) return report_error(range.status());
    o.limits = *range;
  }
  if (!a.command.empty()) {
    if (auto refused = refuse_unstartable(a.command)) return *refused;
  }
  std::unique_ptr<store::Store> results;
  if (!a.store.empty()) {  // opened first: a bad path fails before anything changes
    auto opened = store::Store::open(a.store);
    if (!opened.ok()) return report_error(opened.status());
    results = std::move(opened).value();
  }
  // The console's text goes to stderr when the JSON document goes to stdout.
  std::ostream& text = a.json == "-" ? std::cerr : std::cout;
  auto result = sweep::run_sweep(o, text);
  if (!result.ok()) return report_error(result.status());
  sweep::print_sweep(*result, text);
  if (!a.json.empty()) {
    const std::string document = sweep::sweep_to_json(*result).dump(2) + "\n";
    if (a.json == "-") {
      std::cout << document;
    } else {
      std::ofstream file(a.json);
      file << document;
      if (!file) return report_error(Status(Code::io_error, "cannot write " + a.json));
    }
  }
  if (results != nullptr) {
    auto id = results->write(sweep::sweep_to_run(*result, command_line()));
    if (!id.ok()) return report_error(id.status());
    std::cerr << fmt::format("gpuscope: sweep recorded as run {} in {}\n", *id, a.store);
  }
  if (!result->stopped.ok()) return exit_code_for(result->stopped.code());
  return result->restored_all && !result->workload_failed() ? kExitOk : kExitError;
}

}  // namespace

void restore_leftover_power_limits() {
  if (g_restores_itself) return;
  auto restored = sweep::restore_leftover_limits(sweep::default_state_dir(), std::cerr);
  if (!restored.ok()) {
    std::cerr << "gpuscope: warning: " << restored.status().message() << '\n';
  }
}

void add_sweep_command(CLI::App& app, Runner& runner) {
  auto args = std::make_shared<SweepArgs>();
  CLI::App* cmd = app.add_subcommand(
      "sweep",
      "The power limit (or SM clock lock) that keeps 80/90/95 % of a workload's speed for far "
      "less energy: lowers the limit step by step while the workload runs - bench rows "
      "(--model/--preset, each one gpuscope-torch process for its whole sweep) or CMD (it prints "
      "{\"samples_per_second\": X} lines) - then restores the prior limit in every case");
  cmd->add_option("--gpu", args->selectors,
                  "Sweep these GPUs (NVML indices or UUIDs); default: all, or GPU 0 for bench "
                  "rows (which run on the one GPU given)")
      ->check(gpu_selector_check());
  add_row_options(cmd, *args);
  cmd->add_option("--preset", args->preset,
                  "seeds: seeds/000's workloads, ViT-B/16 training and inference in every "
                  "precision mode the GPU has, each swept in turn");
  cmd->add_option("--burn", args->burn,
                  "Precisions (fp64 fp32 tf32 fp16 bf16 fp8 int8): sweep the burn worker's GEMM "
                  "of each, its rate in TFLOP/s (TOP/s for int8)")
      ->delimiter(',');
  cmd->add_option("--torch-bin", args->torch_bin,
                  "gpuscope-torch to run the rows (default: $GPUSCOPE_TORCH_BIN, next to "
                  "gpuscope, or the build tree)");
  cmd->add_option("--knob", args->knob,
                  "What to sweep: power (the power limit, W) or clocks (a lock of the SM clock, "
                  "MHz, nvmlDeviceSetGpuLockedClocks; reset at the end)")
      ->check(CLI::IsMember({"power", "clocks"}))
      ->default_val("power");
  cmd->add_flag("--allow-power-changes", args->allow,
                "Let the sweep change power limits or lock clocks (needs root or CAP_SYS_ADMIN)");
  cmd->add_flag("--dry-run", args->dry_run,
                "Print the plan, the prior limits and the privilege check, and measure at the "
                "current limit only: changes nothing");
  cmd->add_option("--limits", args->limits,
                  "FROM:TO:STEP in watts, or MHz with --knob clocks (default: the maximum down to "
                  "the minimum in steps of 5 % of the maximum; clocks: down to 40 % of the "
                  "highest)");
  cmd->add_option("--window", args->window_s, "Seconds per measurement window")->default_val(5.0);
  cmd->add_option("--warmup", args->warmup_s, "Seconds after each change before measuring")
      ->default_val(10.0);
  cmd->add_option("--cooldown", args->cooldown_s, "Extra seconds before each point's warm-up")
      ->default_val(0.0);
  cmd->add_option("--windows", args->windows, "Windows per point (2 or more)")
      ->default_val(2)
      ->check(CLI::Range(2, 100));
  cmd->add_flag("--no-refine", args->no_refine, "No extra points around the knees");
  cmd->add_option("--json", args->json, "Write the versioned JSON document here (- = stdout)");
  cmd->add_option("--store", args->store,
                  "Record into this SQLite results store (a 'sweep' run; `gpuscope report` "
                  "draws it)");
  cmd->add_flag("--restore", args->restore,
                "Restore the power limits (reset the clock locks) an interrupted sweep left, from "
                "its journal");
  cmd->add_option("--guardian-for", args->guardian_for)->group("");  // hidden: the guardian
  cmd->add_option("command", args->command,
                  "-- CMD ARGS...: the workload instead of bench rows (no shell)")
      ->take_all();
  cmd->callback([&runner, args] {
    g_restores_itself = args->guardian_for > 0 || args->restore;
    runner = [args] { return run_sweep_command(*args); };
  });
}

}  // namespace gpuscope::cli
