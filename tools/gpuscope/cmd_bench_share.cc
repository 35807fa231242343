#include "cmd_bench_share.h"

#include <fmt/format.h>
#include <stdlib.h>
#include <unistd.h>

#include <climits>
#include <filesystem>
#include <fstream>
#include <iostream>

#include "commands.h"
#include "gpuscope/bench_share.h"
#include "gpuscope/burn.h"
#include "gpuscope/cuda_probe.h"
#include "gpuscope/exit_codes.h"
#include "gpuscope/files.h"
#include "gpuscope/info.h"
#include "gpuscope/monitor.h"
#include "gpuscope/nvml.h"
#include "gpuscope/process.h"
#include "gpuscope/store.h"
#include "gpuscope/sweep.h"
#include "store_option.h"

namespace gpuscope::cli {
namespace {

std::string self_executable() {
  char path[PATH_MAX];
  const ssize_t n = ::readlink("/proc/self/exe", path, sizeof path - 1);
  return n > 0 ? std::string(path, static_cast<std::size_t>(n)) : std::string("gpuscope");
}

// A fresh run folder with a short path (an MPS pipe folder holds sockets: 107 bytes at most).
Result<std::string> make_run_dir() {
  const char* tmp = std::getenv("TMPDIR");
  std::string base = tmp != nullptr && *tmp != '\0' && std::string(tmp).size() < 40 ? tmp : "/tmp";
  std::string pattern = base + "/gpuscope-share-XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    return Status(Code::io_error, "cannot create a run folder under " + base);
  }
  return pattern;
}

// The GPU's compute mode and MIG instances, as `info` and `burn` see them.
void describe_gpu(const nvml::Session& session, unsigned gpu, bench::ShareOptions& o) {
  auto info = collect_info(session, probe_cuda(), InfoOptions{std::to_string(gpu)});
  if (!info.ok()) return;
  for (const GpuInfo& g : info->gpus) {
    if (g.index != gpu) continue;
    o.compute_mode = g.compute_mode;
    if (!g.mig_current.value_or(false)) continue;
    auto plan = burn::plan(*info, std::to_string(gpu));
    if (!plan.ok()) continue;
    for (const burn::Target& t : plan->targets) {
      if (t.mig) o.slices.push_back({t.label(), t.uuid()});
    }
  }
}

}  // namespace

void add_share_options(CLI::App* cmd, ShareArgs& a) {
  cmd->add_option("--share", a.counts,
                  "Run N identical copies of the row (or of -- CMD) at once on the GPU, for each "
                  "N given (1,2,4): throughput in total and per copy, the gain over one alone, "
                  "memory, fairness, energy per sample");
  cmd->add_option("--share-mode", a.modes,
                  "How copies share the GPU: timeslice, mps (a private MPS daemon), mig (one per "
                  "MIG instance), or all (default: timeslice,mps; mig on a GPU in MIG mode)");
  cmd->add_option("--mps-thread-percentage", a.mps_thread_percentage,
                  "CUDA_MPS_ACTIVE_THREAD_PERCENTAGE for the MPS copies (1-100)")
      ->check(CLI::Range(1, 100));
  cmd->add_option("--mps-daemon", a.mps_daemon,
                  "private (default: gpuscope starts and stops its own) or system (use the one "
                  "already running)")
      ->check(CLI::IsMember({"private", "system"}));
  cmd->add_option("--mps-guardian", a.guardian)->expected(2)->group("");  // hidden
}

int run_share_guardian(const ShareArgs& a) {
  if (a.guardian.size() != 2) return -1;
  return bench::run_mps_guardian(a.guardian[0]);
}

int run_share_command(const ShareArgs& a, const ShareContext& c) {
  auto counts = bench::parse_share_counts(a.counts);
  if (!counts.ok()) return report_error(counts.status());
  if (c.rows.empty() && c.command.empty()) {
    return report_error(Status(Code::invalid_argument,
                               "--share: nothing to run: give a row (--model ...) or -- CMD"));
  }
  if (!c.command.empty()) {  // a command that cannot start is answered as a shell would
    if (auto refused = refuse_unstartable(c.command)) return *refused;
  }
  Status paths =
      files::check_paths({files::output_path("--json", c.json, files::OutputKind::bench_json, ""),
                          files::store_path("--store", c.store)},
                         c.force);
  if (!paths.ok()) return report_error(paths);
  auto session = nvml::Session::open();
  if (!session.ok() && (session.code() == Code::no_driver || session.code() == Code::no_device)) {
    return report_error(session.status());
  }
  bench::ShareOptions o;
  o.gpu = c.gpu;
  o.interval_ms = c.interval_ms;
  o.trial_timeout_s = c.row_timeout_s;
  o.counts = *counts;
  if (session.ok()) describe_gpu(**session, c.gpu, o);
  auto modes = bench::parse_share_modes(a.modes, !o.slices.empty());
  if (!modes.ok()) return report_error(modes.status());
  o.modes = *modes;
  if (a.mps_thread_percentage > 0) o.mps.active_thread_percentage = a.mps_thread_percentage;
  o.mps.use_system = a.mps_daemon == "system";
  o.mps.state_dir = sweep::default_state_dir();
  o.mps.guardian_argv = {self_executable(), "bench", "--mps-guardian"};
  if (const char* control = std::getenv("GPUSCOPE_MPS_CONTROL"); control && *control) {
    o.mps.control_program = control;
  }
  if (const char* pipe = std::getenv("GPUSCOPE_MPS_SYSTEM_PIPE_DIR"); pipe && *pipe) {
    o.mps.system_pipe_dir = pipe;
  }
  if (!c.rows.empty()) {
    auto torch = bench::find_torch_bin(c.torch_bin);
    if (!torch.ok()) return report_error(torch.status());
    o.torch_bin = *torch;
  }
  auto db = StoreOption::open(c.store);
  if (!db.ok()) return report_error(db.status());
  // What a gpuscope killed earlier left running is stopped first.
  if (auto stopped = bench::stop_leftover_mps(o.mps.state_dir, std::cerr); !stopped.ok()) {
    std::cerr << "gpuscope: warning: " << stopped.status().message() << '\n';
  }
  auto run_dir = make_run_dir();
  if (!run_dir.ok()) return report_error(run_dir.status());
  o.run_dir = *run_dir;

  std::vector<bench::ShareWorkload> workloads;
  for (const bench::RowSpec& r : c.rows) workloads.push_back({r, {}});
  if (c.rows.empty()) workloads.push_back({std::nullopt, c.command});
  std::vector<bench::ShareResult> results;
  int code = kExitOk;
  for (const bench::ShareWorkload& w : workloads) {
    auto result = bench::run_share(session.ok() ? session->get() : nullptr, w, o, std::cerr);
    if (!result.ok()) {
      code = report_error(result.status());
      break;
    }
    if (c.json != "-") bench::print_share(*result, std::cout);
    results.push_back(std::move(result).value());
    if (results.back().interrupted) {
      code = kExitInterrupted;
      break;
    }
  }
  std::error_code ignored;
  std::filesystem::remove_all(o.run_dir, ignored);
  if (results.empty()) return code;
  const nlohmann::json document = bench::share_to_json(results);
  if (c.json == "-") {
    std::cout << document.dump(2) << '\n';
  } else if (!c.json.empty()) {
    std::ofstream file(c.json);
    file << document.dump(2) << '\n';
    if (!file) {
      print_error(Status(Code::io_error, "cannot write " + c.json));
      code = code == kExitOk ? kExitError : code;
    }
  }
  if (Status recorded = db->record(bench::share_to_run(results, command_line())); !recorded.ok()) {
    print_error(recorded);
    code = code == kExitOk ? kExitError : code;
  }
  return code;
}

}  // namespace gpuscope::cli
