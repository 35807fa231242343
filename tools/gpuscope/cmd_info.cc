// gpuscope info [--json] [--gpu N|UUID] [--store FILE]
#include <fmt/format.h>

#include <iostream>

#include "commands.h"
#include "gpuscope/cuda_probe.h"
#include "gpuscope/exit_codes.h"
#include "gpuscope/info.h"
#include "gpuscope/info_report.h"
#include "gpuscope/nvml.h"
#include "store_option.h"
#include "validators.h"

namespace gpuscope::cli {
namespace {

struct InfoArgs {
  bool json = false;
  std::string gpu;
  std::string store;
};

int print_error(const InfoArgs& args, const Status& status) {
  if (args.json) {
    std::cout << info_error_json(status).dump(2) << '\n';
  }
  return report_error(status);
}

int run_info(const InfoArgs& args) {
  auto store = StoreOption::open(args.store);
  if (!store.ok()) return print_error(args, store.status());
  const double started = unix_now_s();
  auto session = nvml::Session::open();
  if (!session.ok()) return print_error(args, session.status());
  CudaInventory cuda = probe_cuda();
  auto info = collect_info(**session, cuda, InfoOptions{args.gpu});
  if (!info.ok()) return print_error(args, info.status());

  if (args.json) {
    std::cout << info_to_json(*info).dump(2) << '\n';
  } else {
    print_info(*info, std::cout);
  }
  if (Status recorded = store->record(store::info_to_run(*info), started, unix_now_s());
      !recorded.ok()) {
    return report_error(recorded.with_context("--store " + args.store));
  }
  if (!info->failures.empty()) {
    for (const GpuFailure& f : info->failures) {
      std::cerr << fmt::format("gpuscope: error: GPU {}: {}\n", f.index, f.status.message());
    }
    return exit_code_for(info->failures.front().status.code());
  }
  return kExitOk;
}

}  // namespace

void add_info_command(CLI::App& app, Runner& runner) {
  auto args = std::make_shared<InfoArgs>();
  CLI::App* cmd = app.add_subcommand(
      "info", "What each GPU is and what its limits are (NVML + CUDA runtime + datasheet)");
  cmd->add_flag("--json", args->json, "Machine-readable output (schema_version pinned)");
  cmd->add_option("--gpu", args->gpu, "Only this GPU: NVML index (as nvidia-smi) or UUID")
      ->check(gpu_selector_check());
  cmd->add_option("--store", args->store,
                  "Also record the machine into this SQLite results store (read by `report`)");
  cmd->callback([&runner, args] { runner = [args] { return run_info(*args); }; });
}

}  // namespace gpuscope::cli
