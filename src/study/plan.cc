// The study's plan: which steps run, with which arguments, for how long, per level.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <fstream>

#include "common/enum_names.h"
#include "gpuscope/info_report.h"
#include "gpuscope/study.h"

namespace gpuscope::study {
namespace {

constexpr gpuscope::detail::EnumName<Level> kLevelNames[] = {
    {Level::quick, "quick"}, {Level::standard, "default"}, {Level::full, "full"}};
static_assert(gpuscope::detail::names_every_value(kLevelNames, Level::full));
constexpr gpuscope::detail::EnumName<StepKind> kStepKindNames[] = {{StepKind::info, "info"},
                                                                   {StepKind::burn, "burn"},
                                                                   {StepKind::bench, "bench"},
                                                                   {StepKind::sweep, "sweep"}};
static_assert(gpuscope::detail::names_every_value(kStepKindNames, StepKind::sweep));

namespace fs = std::filesystem;

// What each level runs. The bench presets are `gpuscope bench`'s; the estimates are what they
// take on one H100 (refined at run time by the measured durations of finished steps), and the
// timeouts keep a hung step from holding the study: quick stays under 5 minutes and the default
// under 9 (one 10-minute command on a lent GPU machine), whatever a step does.
struct LevelSettings {
  double burn_seconds_per_precision;
  double burn_estimate;
  double burn_timeout;
  const char* bench_preset;
  double bench_estimate;
  double bench_timeout;
};

LevelSettings settings_for(Level level) {
  // Measured on the H100 (2026-11-22, bench/RESULTS.md "gpuscope study"): burn at 3 s per
  // precision ~50 s in all; the default bench (42 rows with their guard runs) ~10 min, ResNet-50's
  // cuDNN autotuning being a good part of it. Quick runs no guard (a guarded ResNet-50 training
  // row alone took 30-45 s).
  switch (level) {
    case Level::quick:
      return {3, 50, 90, "study-quick", 150, 240};
    case Level::full:
      return {30, 250, 500, "study-full", 1500, 3000};
    case Level::standard:
    default:
      return {6, 75, 120, "study", 600, 780};
  }
}

constexpr double kInfoEstimate = 3;

// The sweep step's workloads: the seed's model; its training mode; and, resolved when the step
// runs (resolve_step_args), the inference mode the bench step found fastest.
constexpr char kSweepModel[] = "vit_b16";
constexpr char kSweepTrainMode[] = "amp_bf16";
constexpr char kFastestInferMode[] = "{fastest_infer_mode}";
constexpr double kInfoTimeout = 30;

std::string gpu_title(const Target& gpu) {
  return fmt::format("{} ({})", gpu.label(), gpu.mig ? gpu.name : gpu.gpu_name);
}

// What a step's --gpu names: the NVML index of a whole GPU, a MIG instance's UUID.
std::string gpu_argument(const Target& gpu) {
  return gpu.mig ? gpu.mig->uuid : std::to_string(gpu.gpu_index);
}

// The part of step ids that says where it runs: "gpu0", "gpu0-mig1" (GI 1).
std::string gpu_id(const Target& gpu) {
  if (!gpu.mig) return fmt::format("gpu{}", gpu.gpu_index);
  return fmt::format("gpu{}-mig{}-{}", gpu.gpu_index, gpu.mig->gpu_instance_id,
                     gpu.mig->compute_instance_id);
}

}  // namespace

std::string_view level_name(Level level) {
  return gpuscope::detail::name_in(kLevelNames, level, "default");
}

Result<Level> parse_level(std::string_view name) {
  if (name == "standard") return Level::standard;  // the enum's name for "default"
  if (auto level = gpuscope::detail::value_named(kLevelNames, name)) return *level;
  return Status(Code::invalid_argument,
                fmt::format("unknown study level '{}' (quick, default, full)", name));
}

std::string_view step_kind_name(StepKind kind) {
  return gpuscope::detail::name_in(kStepKindNames, kind, "sweep");
}

Machine machine_from_info(const SystemInfo& info) {
  return Machine{info.hostname, targets_of(info)};
}

namespace {

// The power sweep of a GPU (gpuscope sweep, issue 16): ViT-B/16 AMP bf16 training and ViT-B/16
// inference in the mode the bench step found fastest, one step each; --full: seeds/000's every
// mode (sweep --preset seeds). On an H100 (700 -> 200 W in 35 W steps, a few more points around
// the knees) a workload takes ~18 points x 11 s (5 s warm-up, two 3 s windows); --full keeps the
// sweep's own 10 s warm-up and 5 s windows. It changes the GPU's power limit (the prior limit is
// restored afterwards, in every case), so it runs only with --allow-power-changes; without, one
// skipped step says exactly what it would run. A MIG instance has no power limit of its own.
void add_sweep_steps(const Options& options, const Target& gpu, std::vector<Step>& plan) {
  const std::string where = gpu_id(gpu);
  const std::string index = std::to_string(gpu.gpu_index);
  const bool full = options.level == Level::full;
  auto sweep_of = [&](const std::string& id, const std::string& what,
                      std::vector<std::string> workload) {
    Step sweep;
    sweep.id = id;
    sweep.kind = StepKind::sweep;
    sweep.gpu = static_cast<int>(gpu.gpu_index);
    sweep.title = "power sweep " + gpu_title(gpu) + ": " + what;
    sweep.args = {"sweep", "--gpu", index, "--allow-power-changes"};
    sweep.args.insert(sweep.args.end(), workload.begin(), workload.end());
    if (!full) sweep.args.insert(sweep.args.end(), {"--window", "3", "--warmup", "5"});
    sweep.args.insert(sweep.args.end(), {"--json", "-", "--store", "{store}"});
    const double workloads = full ? 14 : 1;
    sweep.estimate_seconds = workloads * (full ? 360 : 210);
    sweep.timeout_seconds = 3 * sweep.estimate_seconds;
    return sweep;
  };
  std::vector<Step> steps;
  if (full) {
    steps.push_back(sweep_of("sweep-" + where, "ViT-B/16 training and inference, every mode",
                             {"--preset", "seeds"}));
  } else {
    steps.push_back(
        sweep_of("sweep-" + where, "ViT-B/16 AMP bf16 training",
                 {"--model", kSweepModel, "--task", "train", "--mode", kSweepTrainMode}));
    steps.push_back(
        sweep_of("sweep-infer-" + where, "ViT-B/16 inference in the fastest mode bench found",
                 {"--model", kSweepModel, "--task", "infer", "--mode", kFastestInferMode}));
  }
  if (gpu.mig) {
    Step skipped = steps.front();
    skipped.title = "power sweep " + gpu_title(gpu);
    skipped.args.clear();
    skipped.skip_reason = fmt::format(
        "a power limit belongs to the whole GPU, not to MIG instance {}: sweep GPU {} with "
        "`gpuscope sweep --gpu {}` outside MIG mode",
        gpu.label(), gpu.gpu_index, gpu.gpu_index);
    plan.push_back(skipped);
    return;
  }
  if (options.allow_power_changes) {
    plan.insert(plan.end(), steps.begin(), steps.end());
    return;
  }
  double seconds = 0;
  std::string commands;
  for (const Step& step : steps) {
    seconds += step.estimate_seconds;
    std::string line = "gpuscope";
    for (const std::string& arg : step.args) {
      if (arg == "--json") break;  // the study's own outputs
      line += " " + (arg == kFastestInferMode ? std::string("<the fastest inference mode>") : arg);
    }
    commands += (commands.empty() ? "" : "; ") + line;
  }
  Step skipped = steps.front();
  skipped.title = "power sweep " + gpu_title(gpu);
  skipped.args.clear();  // never run; the reason holds the commands
  skipped.skip_reason = fmt::format(
      "it changes GPU {}'s power limit, so it runs only with --allow-power-changes (as root or "
      "with CAP_SYS_ADMIN; the prior limit is restored afterwards in every case): gpuscope study "
      "--allow-power-changes would lower the limit from its maximum to its minimum with {} "
      "(about {} min): {}",
      gpu.gpu_index,
      full ? "ViT-B/16 training and inference in every mode, as seeds/000"
           : "ViT-B/16 AMP bf16 training, then ViT-B/16 inference in the fastest mode bench found",
      static_cast<int>(std::lround(seconds / 60)), commands);
  plan.push_back(skipped);
}

}  // namespace

Result<Machine> machine_from_info(const nlohmann::json& info) {
  GPUSCOPE_ASSIGN_OR_RETURN(SystemInfo read, info_from_json(info));
  return machine_from_info(read);
}

Result<std::vector<Target>> choose_gpus(const Options& options, const Machine& machine) {
  if (machine.gpus.empty()) return Status(Code::no_device, "no GPU is visible");
  auto chosen = resolve_targets(machine.gpus, options.gpus, TargetUse::run);
  if (chosen.ok() || chosen.code() != Code::not_found) return chosen;
  std::string selectors, known;
  for (const std::string& s : options.gpus) selectors += (selectors.empty() ? "" : " ") + s;
  for (const Target& g : machine.gpus) {
    known += fmt::format("{}{} ({})", known.empty() ? "" : ", ",
                         g.mig ? g.label() : std::to_string(g.gpu_index), g.uuid());
  }
  return Status(Code::not_found, fmt::format("--gpu {}: {}; its GPUs: {}", selectors,
                                             chosen.status().message(), known));
}

Step make_info_step() {
  Step info;
  info.id = "info";
  info.kind = StepKind::info;
  info.title = "info: what each GPU is and its limits";
  info.args = {"info", "--json"};
  info.estimate_seconds = kInfoEstimate;
  info.timeout_seconds = kInfoTimeout;
  return info;
}

Result<std::vector<Step>> build_plan(const Options& options, const Machine& machine) {
  GPUSCOPE_ASSIGN_OR_RETURN(std::vector<Target> gpus, choose_gpus(options, machine));
  const LevelSettings s = settings_for(options.level);
  std::vector<Step> plan;

  plan.push_back(make_info_step());

  for (const Target& gpu : gpus) {
    const std::string index = gpu_argument(gpu);
    const std::string where = gpu_id(gpu);
    Step burn;
    burn.id = "burn-" + where;
    burn.kind = StepKind::burn;
    burn.gpu = static_cast<int>(gpu.gpu_index);
    burn.title = "burn " + gpu_title(gpu) + ": every precision, memory, host link";
    burn.args = {"burn",
                 "--gpu",
                 index,
                 "--duration",
                 fmt::format("{:g}", s.burn_seconds_per_precision),
                 "--precision",
                 "all",
                 "--json"};
    burn.estimate_seconds = s.burn_estimate;
    burn.timeout_seconds = s.burn_timeout;
    plan.push_back(burn);

    Step bench;
    bench.id = "bench-" + where;
    bench.kind = StepKind::bench;
    bench.gpu = static_cast<int>(gpu.gpu_index);
    bench.title = "bench " + gpu_title(gpu) + ": reference models, train and infer, every mode";
    bench.args = {"bench",  "--preset", s.bench_preset, "--gpu",  index,
                  "--json", "{json}",   "--store",      "{store}"};
    if (options.level == Level::quick) bench.args.insert(bench.args.end(), {"--guard", "off"});
    bench.json_on_stdout = false;
    bench.estimate_seconds = s.bench_estimate;
    bench.timeout_seconds = s.bench_timeout;
    plan.push_back(bench);

    if (options.level == Level::full) {
      // Whether this GPU is better shared (issue 17): small-batch training leaves much of a big
      // GPU idle. ~1.5 min per model on an H100 (6 trials, each a few seconds of start-up).
      Step share;
      share.id = "share-" + where;
      share.kind = StepKind::bench;
      share.gpu = static_cast<int>(gpu.gpu_index);
      share.title = "share " + gpu_title(gpu) + ": 1, 2, 4 training copies, time-sliced and MPS";
      share.args = {"bench",         "--model", "resnet50,vit_b16,gpt2",
                    "--task",        "train",   "--mode",
                    "amp_bf16",      "--batch", "8",
                    "--share",       "1,2,4",   "--share-mode",
                    "timeslice,mps", "--gpu",   index,
                    "--json",        "{json}",  "--store",
                    "{store}"};
      share.json_on_stdout = false;
      share.estimate_seconds = 300;
      share.timeout_seconds = 900;
      plan.push_back(share);
    }

    add_sweep_steps(options, gpu, plan);
  }
  return plan;
}

std::vector<std::string> resolve_step_args(const State& state, const fs::path& dir,
                                           const Step& step) {
  std::vector<std::string> args = step.args;
  const auto placeholder = std::find(args.begin(), args.end(), kFastestInferMode);
  if (placeholder == args.end()) return args;
  *placeholder = kSweepTrainMode;
  const auto bench = state.steps.find(fmt::format("bench-gpu{}", step.gpu.value_or(0)));
  if (bench == state.steps.end() || bench->second.json_path.empty()) return args;
  std::ifstream in(dir / bench->second.json_path);
  const nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (!doc.is_object()) return args;
  Headlines answers;
  add_bench_answers(doc, step.gpu.value_or(0), answers);
  for (const ModelAnswer& a : answers.models) {
    if (a.model == kSweepModel && a.task == "infer" && a.fastest) *placeholder = a.fastest->mode;
  }
  return args;
}

}  // namespace gpuscope::study
