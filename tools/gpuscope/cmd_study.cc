// gpuscope study [-o DIR] [--quick|--full] [--gpu N|UUID ...] [--resume DIR] [--sample]
//                [--force] [--json]
#include <fmt/chrono.h>
#include <fmt/format.h>
#include <unistd.h>

#include <ctime>
#include <iostream>

#include "commands.h"
#include "gpuscope/exit_codes.h"
#include "gpuscope/files.h"
#include "gpuscope/host.h"
#include "gpuscope/process.h"
#include "gpuscope/study.h"
#include "validators.h"

namespace gpuscope::cli {
namespace {

namespace fs = std::filesystem;

struct StudyArgs {
  std::string out;
  bool quick = false;
  bool full = false;
  std::vector<std::string> gpus;
  std::string resume;
  bool sample = false;
  bool force = false;
  bool json = false;
  bool allow_power_changes = false;  // the power sweep steps run
  std::string command_line;
};

std::string hostname() {
  const std::string name = host_name();
  return name.empty() ? "host" : name;
}

std::string default_dir() {
  return fmt::format("study-{}-{:%Y-%m-%d}", hostname(), fmt::gmtime(std::time(nullptr)));
}

int fail(const Status& status) {
  return report_error(status.with_context("study"));
}

// Prints the progress of the steps: one redrawn line on a terminal, else a line when a step
// starts or ends and every 30 s.
class ProgressPrinter {
 public:
  ProgressPrinter() : terminal_(isatty(STDERR_FILENO) == 1) {}
  void operator()(const study::Progress& p) {
    std::string line = study::progress_line(p);
    if (terminal_) {
      std::cerr << "\r\033[K" << line << (p.step_finished ? "\n" : "") << std::flush;
      return;
    }
    if (p.step_finished || p.step_elapsed_seconds == 0 || p.step_elapsed_seconds - last_ >= 30) {
      std::cerr << "gpuscope study: " << line << '\n';
      last_ = p.step_elapsed_seconds;
    }
    if (p.step_finished || p.step_elapsed_seconds == 0) last_ = 0;
  }

 private:
  bool terminal_;
  double last_ = 0;
};

void print_no_gpu(std::string reason) {
  for (std::size_t pos = 0; (pos = reason.find('\n', pos)) != std::string::npos; pos += 12) {
    reason.replace(pos, 1, "\n           ");
  }
  std::cerr << fmt::format(
      "gpuscope study: there is no NVIDIA GPU to study on this machine.\n"
      "  checked: the NVIDIA driver's management library (libnvidia-ml.so.1, or\n"
      "           $GPUSCOPE_NVML_LIBRARY), asked for its GPUs (`gpuscope info`)\n"
      "  found:   {}\n"
      "  missing: the NVIDIA driver, loaded, with at least one GPU visible to it\n"
      "Nothing was measured or written. To see what a study gives, build the report of the H100\n"
      "study that ships with gpuscope:\n"
      "  gpuscope study --sample -o gpuscope-sample-study\n",
      reason.empty() ? "no GPU" : reason);
}

// Finishes a study whose steps have all ended: answers, store, report, output.
int finish(const study::State& state, const fs::path& dir, const StudyArgs& args) {
  study::Headlines headlines = study::compute_headlines(state, dir);
  Status written = study::write_results(state, headlines, dir);
  nlohmann::json summary = study::summary_to_json(state, headlines, dir, false);
  Status saved =
      files::write_file_atomically((dir / "summary.json").string(), summary.dump(2) + "\n");
  if (!saved.ok()) {
    std::cerr << fmt::format("gpuscope study: warning: {}\n", saved.message());
  }
  if (args.json) {
    std::cout << summary.dump(2) << '\n';
  } else {
    std::cout << study::headlines_text(state, headlines);
  }
  if (!written.ok()) {
    std::cerr << fmt::format("gpuscope study: warning: the report could not be written: {}\n",
                             written.message());
  } else {
    std::cerr << fmt::format("gpuscope study: wrote {} and {}\n", (dir / "report.html").string(),
                             (dir / "gpuscope.db").string());
  }
  bool failed = false;
  for (const auto& [id, r] : state.steps) failed = failed || r.status == study::StepStatus::failed;
  return failed ? kExitCheckFailed : (written.ok() && saved.ok() ? kExitOk : kExitError);
}

int run_sample(const StudyArgs& args) {
  const fs::path dir = args.out.empty() ? fs::path("gpuscope-sample-study") : fs::path(args.out);
  auto sample = study::locate_sample();
  if (!sample.ok()) return fail(sample.status());
  if (Status folder = study::require_folder(dir, "-o"); !folder.ok()) return fail(folder);
  const study::DirKind kind = study::classify_dir(dir);
  if (kind == study::DirKind::other && !args.force) {
    return fail(Status(Code::invalid_argument,
                       fmt::format("{} is not empty and holds no study; choose another -o DIR, "
                                   "or pass --force to write into it",
                                   dir.string())));
  }
  if (kind == study::DirKind::study && !args.force) {
    // An earlier copy of the sample is rebuilt; a real study is never overwritten by it.
    auto there = study::load_state(dir);
    auto shipped = study::load_state(*sample);
    if (!there.ok() || !shipped.ok() || there->note != shipped->note) {
      return fail(Status(Code::invalid_argument,
                         fmt::format("{} holds a study of its own; choose another -o DIR for "
                                     "the sample, or pass --force to replace it",
                                     dir.string())));
    }
  }
  auto state = study::copy_sample(*sample, dir);
  if (!state.ok()) return fail(state.status());
  std::cerr << fmt::format(
      "gpuscope study: the report of the sample study ({}), not of this "
      "machine\n",
      sample->string());
  return finish(*state, dir, args);
}

int run_study(StudyArgs args) {
  if (args.sample) return run_sample(args);
  if (!args.resume.empty() && !args.out.empty() && !files::same_file(args.resume, args.out)) {
    return fail(Status(Code::invalid_argument,
                       fmt::format("-o {} and --resume {}: a resumed study goes on in its own "
                                   "folder; give --resume alone",
                                   args.out, args.resume)));
  }
  study::StartRequest request;
  request.resume = !args.resume.empty();
  request.dir = request.resume ? fs::path(args.resume)
                               : (args.out.empty() ? fs::path(default_dir()) : fs::path(args.out));
  request.force = args.force;
  request.options.level =
      args.quick ? study::Level::quick : (args.full ? study::Level::full : study::Level::standard);
  request.options.gpus = args.gpus;
  request.options.allow_power_changes = args.allow_power_changes;
  request.command_line = args.command_line;
  request.now_unix_s = static_cast<double>(std::time(nullptr));
  const fs::path& dir = request.dir;

  auto forwarding = InterruptForwarding::install();
  if (!forwarding.ok()) return fail(forwarding.status());
  auto runner = study::make_child_runner();
  std::cerr << "gpuscope study: [info] what GPUs are here ...\n";
  auto started = study::start_study(request, *runner);
  if (!started.ok()) {
    const Status& status = started.status();
    if (status.code() == Code::no_driver || status.code() == Code::no_device) {
      print_no_gpu(status.message());
      if (args.json) {
        std::cout << nlohmann::json{{"schema_version", study::kSummarySchemaVersion},
                                    {"kind", "gpuscope.study"},
                                    {"status", "no_gpu"},
                                    {"error",
                                     {{"code", code_name(status.code())},
                                      {"message", status.message()}}},
                                    {"hint", "gpuscope study --sample"}}
                         .dump(2)
                  << '\n';
      }
      return kExitNoGpu;
    }
    if (status.code() == Code::cancelled) {
      std::cerr << "gpuscope study: " << status.message() << '\n';
      return kExitInterrupted;
    }
    return fail(status);
  }
  study::State state = std::move(started).value();
  std::size_t done = 0;
  double total = 0;
  for (const study::Step& s : state.plan) {
    done += study::step_done(state, s.id) ? 1 : 0;
    total += s.skip_reason ? 0 : s.estimate_seconds;
  }
  if (request.resume) {
    std::cerr << fmt::format("gpuscope study: resuming {} ({} of {} steps done)\n", dir.string(),
                             done, state.plan.size());
  } else {
    std::cerr << fmt::format(
        "gpuscope study: {} level, {} GPU(s), {} steps, about {} in all; results in {}\n",
        study::level_name(state.options.level),
        study::choose_gpus(state.options, state.machine)->size(), state.plan.size(),
        study::format_duration(total), dir.string());
  }

  ProgressPrinter printer;
  study::RunOptions options;
  options.on_progress = [&printer](const study::Progress& p) { printer(p); };
  options.stop_requested = [] { return InterruptForwarding::signals_received() > 0; };
  auto outcome = study::run_steps(state, dir, *runner, options);
  if (!outcome.ok()) return fail(outcome.status());
  if (outcome->no_gpu) {
    std::cerr << fmt::format(
        "gpuscope study: no GPU to measure: {}\nThe study stopped there: every later step would "
        "measure nothing too. Once the GPU is visible, go on with:\n  gpuscope study --resume "
        "{}\n",
        *outcome->no_gpu, dir.string());
    return kExitNoGpu;
  }
  if (outcome->interrupted) {
    if (args.json) {
      study::Headlines none;
      std::cout << study::summary_to_json(state, none, dir, true).dump(2) << '\n';
    }
    std::cerr << fmt::format(
        "gpuscope study: interrupted; finished steps are saved. Resume with:\n  gpuscope study "
        "--resume {}\n",
        dir.string());
    return kExitInterrupted;
  }
  forwarding->reset();
  return finish(state, dir, args);
}

}  // namespace

void add_study_command(CLI::App& app, Runner& runner) {
  auto args = std::make_shared<StudyArgs>();
  CLI::App* cmd = app.add_subcommand(
      "study",
      "The whole picture of this machine with one command: info, a short burn, the bench "
      "matrix, then report.html and the answers (resumable with --resume DIR)");
  cmd->add_option("-o,--output", args->out,
                  "Directory for the study (default: study-<host>-<date>)")
      ->option_text("DIR");
  auto* quick =
      cmd->add_flag("--quick", args->quick,
                    "Shorter: three modes, no convergence guard; under 5 minutes on one H100");
  auto* full = cmd->add_flag(
      "--full", args->full,
      "Longer: 30 s burn windows, every mode at the largest batch that fits (default: ~11 min)");
  quick->excludes(full);
  cmd->add_option("--gpu", args->gpus, "Only these GPUs: NVML index or UUID (repeatable)")
      ->option_text("N|UUID ...")
      ->check(gpu_selector_check());
  auto* resume = cmd->add_option("--resume", args->resume,
                                 "Go on with the study in DIR: its options, its unfinished steps")
                     ->option_text("DIR");
  auto* sample = cmd->add_flag("--sample", args->sample,
                               "Build the report from the H100 study that ships with gpuscope");
  auto* allow = cmd->add_flag(
      "--allow-power-changes", args->allow_power_changes,
      "Run the power sweep steps (gpuscope sweep: they lower each GPU's power limit step by step "
      "and restore it; needs root or CAP_SYS_ADMIN). Without, the plan says what they would do");
  resume->excludes(quick)->excludes(full)->excludes(sample)->excludes(allow);
  cmd->add_flag("--force", args->force, "Start over in a DIR that holds a study or other files");
  cmd->add_flag("--json", args->json, "Machine-readable summary on stdout (schema_version pinned)");
  cmd->callback([&runner, args] {
    std::string line = "gpuscope study";
    if (!args->out.empty()) line += " -o " + args->out;
    if (args->quick) line += " --quick";
    if (args->full) line += " --full";
    if (args->allow_power_changes) line += " --allow-power-changes";
    for (const std::string& g : args->gpus) line += " --gpu " + g;
    args->command_line = line;
    runner = [args] { return run_study(*args); };
  });
}

}  // namespace gpuscope::cli
