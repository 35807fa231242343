// gpuscope burn [--duration S] [--precision LIST] [--gpu N|UUID] [--memory-fraction F]
//               [--size N] [--no-memory] [--no-host-link] [--json] [--store FILE]
//               [--inject-fault]
#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <iostream>

#include "commands.h"
#include "gpuscope/burn.h"
#include "gpuscope/burn_report.h"
#include "gpuscope/cuda_probe.h"
#include "gpuscope/exit_codes.h"
#include "gpuscope/info.h"
#include "gpuscope/nvml.h"
#include "store_option.h"
#include "validators.h"

namespace gpuscope::cli {
namespace {

struct BurnArgs {
  burn::Options options;
  std::string precision = "all";
  std::optional<double> memory_fraction;
  std::optional<int> size;
  std::optional<double> worker_timeout;
  bool no_memory = false;
  bool no_host_link = false;
  bool no_interconnect = false;
  bool json = false;
  std::string store;
};

int print_error(const BurnArgs& args, const Status& status) {
  if (args.json) std::cout << burn_error_json(status).dump(2) << '\n';
  return report_error(status);
}

int terminal_columns() {
  winsize size{};
  return ioctl(STDERR_FILENO, TIOCGWINSZ, &size) == 0 ? size.ws_col : 0;
}

int run_burn(BurnArgs args) {
  burn::Options& options = args.options;
  Result<std::vector<Precision>> precisions = burn::parse_precisions(args.precision);
  if (!precisions.ok()) return print_error(args, precisions.status().with_context("--precision"));
  options.precisions = *precisions;
  options.size = args.size;
  options.memory_fraction = args.memory_fraction;
  options.worker_timeout_seconds = args.worker_timeout;
  options.memory = !args.no_memory;
  options.host_link = !args.no_host_link;
  options.interconnect = !args.no_interconnect;

  auto store = StoreOption::open(args.store);
  if (!store.ok()) return print_error(args, store.status());
  auto session = nvml::Session::open();
  if (!session.ok()) return print_error(args, session.status());
  const double started = unix_now_s();
  auto info = collect_info(**session, probe_cuda(), InfoOptions{options.gpu});
  if (!info.ok()) return print_error(args, info.status());
  for (const GpuFailure& f : info->failures) {
    std::cerr << fmt::format("gpuscope: warning: GPU {} is left out: {}\n", f.index,
                             f.status.message());
  }
  auto plan = burn::plan(*info, options.gpu);
  if (!plan.ok()) return print_error(args, plan.status());

  const bool terminal = isatty(STDERR_FILENO) == 1;
  BurnProgressPrinter printer(std::cerr, terminal, terminal ? terminal_columns() : 0);
  auto report = burn::run(**session, *info, *plan, options,
                          [&printer](const burn::Progress& p) { printer.update(p); });
  printer.finish();
  if (!report.ok()) return print_error(args, report.status());

  if (args.json) {
    std::cout << burn_to_json(*report).dump(2) << '\n';
  } else {
    print_burn(*report, std::cout);
  }
  // What was measured is printed first: a store that fails now loses nothing on screen.
  Status recorded = store->record(store::burn_to_run(*report), started, unix_now_s());
  for (const burn::TargetResult& t : report->targets) {
    if (t.outcome != burn::Outcome::failed && t.outcome != burn::Outcome::verification_failed) {
      continue;
    }
    const burn::Target& target = t.target;
    std::cerr << fmt::format("gpuscope: error: {} ({}, {}): {}\n", target.label(), target.name,
                             target.uuid(), t.failure);
  }
  if (report->interrupted) {
    std::cerr << "gpuscope: interrupted; printed what was measured before the stop\n";
  }
  if (!recorded.ok()) {
    const int code = report_error(recorded.with_context("--store " + args.store));
    return burn::exit_code(*report) == kExitOk ? code : burn::exit_code(*report);
  }
  return burn::exit_code(*report);
}

}  // namespace

void add_burn_command(CLI::App& app, Runner& runner) {
  auto args = std::make_shared<BurnArgs>();
  CLI::App* cmd = app.add_subcommand(
      "burn",
      "What each GPU really delivers: GEMM TFLOP/s per precision with every result verified, "
      "memory bandwidth and host link, with telemetry (one worker per GPU or MIG instance)");
  burn::Options& o = args->options;
  cmd->add_option("--duration", o.duration_seconds, "Seconds of timed GEMMs per precision")
      ->capture_default_str()
      ->check(seconds_check());
  cmd->add_option("--precision", args->precision,
                  "Comma-separated fp64,fp32,tf32,fp16,bf16,fp8,int8, or all")
      ->capture_default_str();
  cmd->add_option("--gpu", o.gpu, "Only this GPU: NVML index, GPU UUID, or a MIG instance's UUID")
      ->check(gpu_selector_check());
  cmd->add_option("--memory-fraction", args->memory_fraction,
                  "Share of free device memory the GEMM buffers may take (worker default 0.9)")
      ->check(CLI::Range(0.01, 1.0));
  cmd->add_option("--size", args->size, "GEMM size n of n x n x n (worker default 8192)")
      ->check(CLI::Range(64, 65536));
  cmd->add_flag("--no-memory", args->no_memory, "Skip the device-memory bandwidth test");
  cmd->add_flag("--no-host-link", args->no_host_link, "Skip the host<->device copy tests");
  cmd->add_flag("--no-interconnect", args->no_interconnect,
                "With two or more GPUs, skip the NCCL all-reduce and peer-copy tests among them");
  cmd->add_flag("--json", args->json, "Machine-readable output (schema_version pinned)");
  cmd->add_option("--store", args->store,
                  "Also record the run into this SQLite results store (read by `report`)");
  cmd->add_flag("--inject-fault", o.inject_fault,
                "Corrupt one GEMM result on purpose: the run must fail and name the GPU");
  // For tests and debugging; not in --help.
  cmd->add_option("--sample-interval", o.sample_interval_seconds, "Telemetry period in seconds")
      ->check(seconds_check())
      ->group("");
  cmd->add_option("--worker-timeout", args->worker_timeout, "Kill a worker after S seconds")
      ->check(seconds_check())
      ->group("");
  cmd->callback([&runner, args] { runner = [args] { return run_burn(*args); }; });
}

}  // namespace gpuscope::cli
