// gpuscope bench [--preset seeds|study-quick|study|study-full] [--model M,..] [--task train,infer]
//                [--mode MODE,..|all] [--batch N|auto,..] [--knob NAME=V1,V2]... [--input SPEC]...
//                [--warmup N] [--windows N] [--steps N] [--guard on|off] [--guard-steps N] [--list]
//                [--json FILE|-] [--resume FILE] [--store PATH] [--torch-bin PATH] [--gpu N|UUID]
//                [-- TORCH ARGS...]
//                [--share N,.. [--share-mode M,..] [--mps-thread-percentage P] [--mps-daemon D]]
//                (with --share and no row: -- CMD is the command to share; cmd_bench_share.cc)
#include <fmt/format.h>
#include <algorithm>

#include <fstream>
#include <iostream>
#include <optional>

#include "cmd_bench_share.h"
#include "commands.h"
#include "gpuscope/bench.h"
#include "gpuscope/bench_scaling.h"
#include "gpuscope/exit_codes.h"
#include "gpuscope/files.h"
#include "gpuscope/nvml.h"
#include "gpuscope/store.h"
#include "row_options.h"
#include "store_option.h"
#include "validators.h"

namespace gpuscope::cli {
namespace {

struct BenchArgs : RowArgs {
  int warmup = 0, windows = 0, steps = 0;
  std::string guard = "on";
  int guard_seed = 0;
  int guard_steps = 0;
  bool list = false, force = false;
  std::string json, resume, store, torch_bin;
  std::string gpu = "0";
  int interval_ms = 100;
  double row_timeout_s = 900;
  std::vector<std::string> extra;
  ShareArgs share;
};

Result<std::vector<bench::RowSpec>> rows_from(const BenchArgs& a) {
  GPUSCOPE_ASSIGN_OR_RETURN(std::vector<bench::RowSpec> rows, rows_from(a, bench::preset));
  for (bench::RowSpec& r : rows) {
    if (a.warmup > 0) r.warmup = a.warmup;
    if (a.windows > 0) r.windows = a.windows;
    if (a.steps > 0) r.steps = a.steps;
    if (a.guard_steps > 0) r.guard_steps = a.guard_steps;
    r.extra_args.insert(r.extra_args.end(), a.extra.begin(), a.extra.end());
  }
  return rows;
}

// The whole GPU that --share runs on (its MIG instances are --share-mode mig's copies).
Result<unsigned> share_gpu(const std::string& selector) {
  if (!selector.empty() &&
      std::all_of(selector.begin(), selector.end(),
                  [](char ch) { return ch >= '0' && ch <= '9'; }) &&
      selector.size() <= 9) {
    return static_cast<unsigned>(std::stoul(selector));
  }
  auto session = nvml::Session::open();
  bench::RunOptions o;
  GPUSCOPE_RETURN_IF_ERROR(
      bench::choose_target(session.ok() ? session->get() : nullptr, selector, o));
  if (o.mig) {
    return Status(Code::invalid_argument,
                  "--share runs on a whole GPU: give the GPU (its MIG instances are shared with "
                  "--share-mode mig), not " +
                      selector);
  }
  return o.gpu;
}

int run_share(const BenchArgs& a) {
  auto gpu = share_gpu(a.gpu);
  if (!gpu.ok()) return report_error(gpu.status().with_context("--gpu"));
  ShareContext c{{},     {}, a.json, a.store, a.torch_bin, *gpu, a.interval_ms, a.row_timeout_s,
                 a.force};
  if (a.preset.empty() && a.models.empty()) {
    c.command = a.extra;  // no row: `-- CMD` is the command to share
  } else {
    auto rows = rows_from(a);
    if (!rows.ok()) return report_error(rows.status());
    c.rows = *rows;
  }
  return run_share_command(a.share, c);
}

int run_bench_command(const BenchArgs& a) {
  if (int code = run_share_guardian(a.share); code >= 0) return code;
  if (!a.share.counts.empty()) return run_share(a);
  auto rows = rows_from(a);
  if (!rows.ok()) return report_error(rows.status());
  if (a.list) {
    bench::print_rows(*rows, std::cout);
    return kExitOk;
  }
  // `--resume F --json F` goes on with F and rewrites it: the same file by design.
  Status paths = files::check_paths(
      {files::output_path("--json", a.json, files::OutputKind::bench_json, "--resume"),
       files::input_path("--resume", a.resume), files::store_path("--store", a.store)},
      a.force);
  if (!paths.ok()) return report_error(paths);
  // Without a driver or a GPU there is nothing to measure: say so before any row runs.
  auto session = nvml::Session::open();
  if (!session.ok() && (session.code() == Code::no_driver || session.code() == Code::no_device)) {
    return report_error(session.status());
  }
  auto torch = bench::find_torch_bin(a.torch_bin);
  if (!torch.ok()) return report_error(torch.status());

  // Open what can fail before the matrix runs for minutes.
  auto db = StoreOption::open(a.store);
  if (!db.ok()) return report_error(db.status());
  std::optional<bench::BenchResult> earlier;
  if (!a.resume.empty()) {
    auto loaded = bench::load_bench_json(a.resume);
    if (!loaded.ok()) return report_error(loaded.status().with_context("--resume"));
    earlier = std::move(loaded).value();
  }
  const bool json_file = !a.json.empty() && a.json != "-";

  bench::RunOptions o;
  o.torch_bin = *torch;
  if (Status chosen = bench::choose_target(session.ok() ? session->get() : nullptr, a.gpu, o);
      !chosen.ok()) {
    return report_error(chosen);
  }
  o.interval_ms = a.interval_ms;
  o.guard = a.guard == "on";
  o.guard_seed = a.guard_seed;
  o.row_timeout_s = a.row_timeout_s;
  if (earlier) o.resume = &*earlier;
  // The file is rewritten after every row: a bench killed mid-matrix leaves its finished rows.
  if (json_file) {
    o.on_snapshot = [&a](const bench::BenchResult& so_far) {
      return bench::save_bench_json(a.json, bench::bench_to_json(so_far));
    };
  }
  auto result = bench::run_bench(session.ok() ? session->get() : nullptr, *rows, o, std::cerr);
  if (!result.ok()) {
    Status failed = result.status();
    if (earlier && failed.code() == Code::invalid_argument) {
      failed = failed.with_context("--resume " + a.resume);
    }
    return report_error(failed);
  }

  int code = result->interrupted ? kExitInterrupted : kExitOk;
  const nlohmann::json document = bench::bench_to_json(*result);
  if (a.json == "-") {
    std::cout << document.dump(2) << '\n';
  } else {
    bench::print_bench(*result, std::cout);
    if (json_file) {
      if (Status written = bench::save_bench_json(a.json, document); !written.ok()) {
        print_error(written);
        code = code == kExitOk ? kExitError : code;
      }
    }
  }
  if (Status recorded = db->record(bench::bench_to_run(*result, command_line())); !recorded.ok()) {
    print_error(recorded);
    code = code == kExitOk ? kExitError : code;
  }
  return code;
}

}  // namespace

void add_bench_command(CLI::App& app, Runner& runner) {
  auto args = std::make_shared<BenchArgs>();
  CLI::App* cmd = app.add_subcommand(
      "bench",
      "Run a matrix of gpuscope-torch configurations (models x train/infer x precision modes x "
      "knobs x input paths) under the sampler: samples/s, memory, power, energy per sample, a "
      "convergence guard, and which mode to use");
  cmd->add_option(
      "--preset", args->preset,
      "A named matrix: seeds (seeds/000, 002 and a host-fed run), study-quick, study, study-full");
  add_row_options(cmd, *args);
  cmd->add_option("--knob", args->knobs,
                  "NAME=V1,V2: also vary a switch (graphs, fused_adamw, cudnn_benchmark, "
                  "channels_last; on/off/auto); repeatable");
  cmd->add_option("--input", args->inputs,
                  "An input path: synthetic | host[:workers=N,pinned=on|off,non_blocking=on|off] "
                  "| jpeg:data=DIR[,workers=N,...]; repeatable");
  cmd->add_option("--gpus", args->gpus,
                  "GPU counts, e.g. 1,2: each training row data parallel on GPUs 0..N-1 "
                  "(gpuscope-torch --world-size N) and a scaling table");
  cmd->add_flag("--no-sync-ceiling", args->no_sync_ceiling,
                "With --gpus: also run each data-parallel row without gradient sync (every GPU "
                "training alone, all at once), and split the scaling loss into the GPUs' own "
                "(clocks, power, a slower card) and communication's");
  cmd->add_option("--warmup", args->warmup, "Untimed steps per row (gpuscope-torch --warmup)")
      ->check(CLI::Range(1, 100000));
  cmd->add_option("--windows", args->windows, "Timed windows per row")->check(CLI::Range(1, 1000));
  cmd->add_option("--steps", args->steps, "Steps per window")->check(CLI::Range(1, 100000));
  cmd->add_option("--guard", args->guard, "Convergence guard for training modes (default on)")
      ->check(CLI::IsMember({"on", "off"}));
  cmd->add_option("--guard-seed", args->guard_seed, "The guard's random seed (default 0)");
  cmd->add_option("--guard-steps", args->guard_steps,
                  "Training steps of each guard run (default: the preset's, else gpuscope-torch's)")
      ->check(CLI::PositiveNumber);
  cmd->add_flag("--list", args->list, "Print the expanded rows and exit");
  cmd->add_option("--json", args->json,
                  "Write the results as JSON to FILE (rewritten after every row, so an "
                  "unfinished matrix leaves its finished rows), or - for stdout");
  cmd->add_option("--resume", args->resume,
                  "Go on with the unfinished matrix in FILE (an earlier --json FILE; give the "
                  "same matrix options): its finished rows and guard runs are kept, the rest run");
  cmd->add_option("--store", args->store, "Record the run into this SQLite results store");
  cmd->add_flag("--force", args->force, "Replace a --json file that gpuscope did not write");
  cmd->add_option("--torch-bin", args->torch_bin,
                  "gpuscope-torch to run (default: $GPUSCOPE_TORCH_BIN, next to gpuscope, or "
                  "the build tree)");
  cmd->add_option("--gpu", args->gpu,
                  "The GPU or MIG instance to run on: NVML index, GPU-... or MIG-... UUID "
                  "(default 0)")
      ->check(gpu_selector_check());
  cmd->add_option("--interval", args->interval_ms, "Sampling interval in ms")
      ->check(milliseconds_check({.min_seconds = 0.02, .max_seconds = 10}));
  cmd->add_option("--row-timeout", args->row_timeout_s, "Seconds a row may run (default 900)")
      ->check(seconds_check());
  add_share_options(cmd, args->share);
  cmd->add_option("extra", args->extra, "-- ARGS...: passed to every gpuscope-torch row")
      ->take_all();
  cmd->callback([&runner, args] { runner = [args] { return run_bench_command(*args); }; });
}

}  // namespace gpuscope::cli
