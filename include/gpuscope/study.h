// `gpuscope study`: the whole picture of a GPU machine with one command.
//
// A study is a plan of steps, each one run as a child process of the gpuscope executable itself
// (`info`, a short `burn`, the `bench` matrix, later the power sweep), its JSON output kept in
// DIR/steps/<step>.json and its stderr in DIR/steps/<step>.log. A step that crashes, runs out of
// memory or is missing is a failed or skipped step with its reason; the study goes on. After
// every step the state (plan, options, finished steps) is saved atomically in DIR/study.json, so
// an interrupted study is resumed without redoing finished steps. At the end the step outputs
// become one results store (DIR/gpuscope.db), one page (DIR/report.html) and the headline
// answers: achieved vs datasheet compute, fastest and most efficient mode per model, problems.
//
// Units are SI (seconds, bytes, FLOP/s, joules); fractions are 0..1.
#pragma once

#include <cstddef>
#include <filesystem>
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/analysis.h"
#include "gpuscope/clock.h"
#include "gpuscope/info.h"
#include "gpuscope/status.h"
#include "gpuscope/target.h"

namespace gpuscope::study {

// Bumped when a field of study.json is renamed, removed or changes meaning. A study.json of a
// newer schema is refused.
inline constexpr int kStateSchemaVersion = 1;
// The schema of `gpuscope study --json` (and DIR/summary.json).
inline constexpr int kSummarySchemaVersion = 1;

enum class Level { quick, standard, full };
std::string_view level_name(Level level);  // "quick", "default", "full"
// invalid_argument for another name.
Result<Level> parse_level(std::string_view name);

struct Options {
  Level level = Level::standard;
  // GPU selectors (gpuscope/target.h): NVML indexes, GPU or MIG UUIDs, lists; empty: every GPU.
  std::vector<std::string> gpus;
  // --allow-power-changes: the power sweep steps run (they change each GPU's power limit and
  // restore it); without, the plan holds one skipped sweep step per GPU saying what it would do.
  bool allow_power_changes = false;
};

// The machine a study runs on: its host name, and every GPU `gpuscope info` listed, each GPU in
// MIG mode followed by its MIG instances (as list_targets() gives them).
struct Machine {
  std::string hostname;
  std::vector<Target> gpus;
};

// The machine `info` collected: its host name and targets_of(info).
Machine machine_from_info(const SystemInfo& info);
// Reads the machine from `gpuscope info --json` output (info_from_json). data_error when it is
// not that document (or carries an "error").
Result<Machine> machine_from_info(const nlohmann::json& info);

// ---------------------------------------------------------------------------------------------
// The plan

enum class StepKind { info, burn, bench, sweep };
std::string_view step_kind_name(StepKind kind);

struct Step {
  std::string id;  // "info", "burn-gpu0", "bench-gpu0", "sweep-gpu0"; a file name too
  StepKind kind = StepKind::info;
  std::optional<int> gpu;  // NVML index; absent for machine-wide steps
  std::string title;       // for people: "burn GPU 0 (NVIDIA H100 80GB HBM3)"
  // The gpuscope arguments (without the program). "{json}" and "{store}" are replaced by the
  // step's output paths when it runs.
  std::vector<std::string> args;
  bool json_on_stdout = true;  // the JSON document is the child's stdout (else it writes {json})
  double estimate_seconds = 0;
  double timeout_seconds = 0;              // the child is stopped after this long
  std::optional<std::string> skip_reason;  // planned as skipped: never run
};

// The `info` step that starts every plan (run first on its own: it finds the GPUs).
Step make_info_step();

// One `info` step, then per chosen GPU: burn, bench, (full only) share - `bench --share` of one
// small-batch training row per model, 1, 2, 4 copies time-sliced and under MPS - and the power
// sweep: with allow_power_changes, `sweep` of ViT-B/16 AMP bf16 training ("sweep-gpuN") and of
// ViT-B/16 inference in the mode bench found fastest ("sweep-infer-gpuN"), or of every mode
// (--full: --preset seeds, one step); without, one skipped step saying what it would run and
// how to allow it (a MIG instance's too: a power limit is the whole GPU's). Durations
// and bench presets follow the level: quick < 5 min and default < 15 min on one H100.
// not_found for a --gpu entry that matches no GPU of `machine`; no_device when it has no GPU.
Result<std::vector<Step>> build_plan(const Options& options, const Machine& machine);

// The targets `options` chooses among `machine`'s, in NVML order (same errors as build_plan): a
// whole GPU, or each MIG instance of a GPU in MIG mode (resolve_targets with TargetUse::run).
Result<std::vector<Target>> choose_gpus(const Options& options, const Machine& machine);

// ---------------------------------------------------------------------------------------------
// State (DIR/study.json)

enum class StepStatus {
  ok,           // ran and produced its output (which may report problems)
  failed,       // crashed, timed out, or ended without usable output
  skipped,      // not run, or could not run here (the message says why)
  interrupted,  // stopped by Ctrl-C: redone on --resume
};
std::string_view step_status_name(StepStatus status);

struct StepRecord {
  StepStatus status = StepStatus::ok;
  std::optional<int> exit_code;
  std::optional<int> term_signal;
  double duration_seconds = 0;
  std::string message;  // why it failed or was skipped; what it reported
  // Ended part-way with what it measured kept, and can go on from it: --resume runs it again
  // (a bench stopped by its time budget, on a GPU slower than the estimates assume).
  bool resumable = false;
  // Relative to DIR; empty when the step left no such file.
  std::string json_path, log_path, store_path;
};

struct State {
  int schema_version = kStateSchemaVersion;
  std::string gpuscope_version;
  double started_unix_s = 0;
  std::string command_line;
  Options options;
  Machine machine;  // as `info` saw it when the study started
  std::vector<Step> plan;
  std::map<std::string, StepRecord> steps;  // by step id: every step that ended
  // A study that ships as sample data says where it came from.
  std::string note;
};

// A step is done when it ended ok, failed or skipped; interrupted, resumable and missing ones
// are not.
bool step_done(const State& state, const std::string& step_id);

nlohmann::json state_to_json(const State& state);
// data_error naming the field, or the schema when it is newer than this gpuscope's.
Result<State> state_from_json(const nlohmann::json& document);

// Writes DIR/study.json whole or not at all (a temporary file renamed over it).
Status save_state(const std::filesystem::path& dir, const State& state);
// not_found when DIR has no study.json; data_error as state_from_json; io_error.
Result<State> load_state(const std::filesystem::path& dir);

// Ok when `now` is the machine `state` was made on: same host name and, for every GPU the study
// runs on, the same UUID at the same index. invalid_argument saying what differs otherwise.
Status check_same_machine(const State& state, const Machine& now);

enum class DirKind { absent_or_empty, study, other, not_a_folder };
// What is at `dir`: nothing (or an empty directory), a study (has study.json), a file or
// anything else that is not a folder (no --force makes that one a study), or anything else.
DirKind classify_dir(const std::filesystem::path& dir);
// invalid_argument, saying that `option` (-o, --resume) takes a folder, when something that is
// not a folder is at `dir` (never "--force", which could not help); ok when a folder or nothing
// is there.
Status require_folder(const std::filesystem::path& dir, std::string_view option);

// ---------------------------------------------------------------------------------------------
// Running steps

struct StepFiles {
  std::filesystem::path json, log, store;  // absolute
};
StepFiles step_files(const std::filesystem::path& dir, const Step& step);

// The arguments `step` runs with: its own, with "{fastest_infer_mode}" (the inference sweep's)
// replaced by the mode the same GPU's bench step (in `state`, its files under `dir`) found
// fastest for ViT-B/16 inference; amp_bf16 when that bench has no such answer.
std::vector<std::string> resolve_step_args(const State& state, const std::filesystem::path& dir,
                                           const Step& step);

// How a step's child ended, as seen by the runner.
struct ChildEnd {
  std::optional<int> exit_code;
  std::optional<int> term_signal;
  bool timed_out = false;
  bool interrupted = false;  // this process was sent SIGINT/SIGTERM while the child ran
  double seconds = 0;
  std::optional<nlohmann::json> output;  // the step's JSON document, when it parsed
  std::string stderr_tail;               // its last non-empty stderr line
};

// What a step's end means (pure; the rules are per step kind): exit 0 with a document is ok;
// a signal, a timeout or no document is failed; `burn` exiting 1 with a document is ok (it
// found problems, listed in the headlines); `bench` exiting non-zero without rows is skipped
// with its reason (not built, gpuscope-torch missing); Ctrl-C or exit 130 is interrupted.
StepRecord classify_step_end(const Step& step, const ChildEnd& end);

// Runs one step. The real one starts the gpuscope executable; tests use fakes.
class StepRunner {
 public:
  virtual ~StepRunner() = default;
  // Runs `step` with its outputs in `files`; returns how it ended. Never throws.
  virtual ChildEnd run(const Step& step, const StepFiles& files) = 0;
};

// Starts `program` (the gpuscope executable; "": /proc/self/exe, or $GPUSCOPE_STUDY_SELF when
// set) for each step; stdout goes to files.json (json_on_stdout), stderr to files.log; Ctrl-C is
// forwarded to the child (REQUIRES: an InterruptForwarding is installed by the caller).
std::unique_ptr<StepRunner> make_child_runner(std::string program = "");

struct Progress {
  std::size_t index = 0;  // 1-based position of the step in the plan
  std::size_t total = 0;
  const Step* step = nullptr;
  double study_elapsed_seconds = 0;  // including steps of earlier (resumed) sessions
  double step_elapsed_seconds = 0;
  double remaining_seconds = 0;  // estimated, the current step included
  bool step_finished = false;
  const StepRecord* record = nullptr;  // set when step_finished
};

// Seconds left: the estimates of the steps not yet done (the current one less what it has run,
// and less the share an earlier attempt already did: a resumed bench's kept rows), scaled by how
// long finished steps took against their own estimates (clamped to 0.5..3).
double estimate_remaining(const State& state, const std::string& current_step_id,
                          double current_elapsed_seconds, double current_done_fraction = 0);

// "[2/5] burn GPU 0 (...) · 0:42 elapsed · ~3:10 left" and, when finished, "... ok in 38 s".
std::string progress_line(const Progress& progress);
// "1:05", "12:03", "1:02:03".
inline std::string format_duration(double seconds) {
  return gpuscope::format_duration(seconds, DurationStyle::clock);
}

struct RunOptions {
  std::function<void(const Progress&)> on_progress;  // at start, every tick, at each end
  double tick_seconds = 5;
  // Stops before the next step when it returns true (Ctrl-C between steps).
  std::function<bool()> stop_requested;
};

struct RunOutcome {
  bool interrupted = false;
  int steps_run = 0;
  // Set when a step found no GPU (its exit code 3): what it said. The study stopped there.
  std::optional<std::string> no_gpu;
};

// Runs every step of state.plan that is not done, in order, saving the state in DIR after
// each. A step planned as skipped is recorded as skipped without running. Stops after an
// interrupted step, or a step that found no GPU (recorded as skipped, no_gpu set; the state
// saved). An unfinished attempt's files are removed before a step
// runs again, except a bench step's JSON with rows (bench rewrites it after every row): that
// step runs with "--resume {json}" added to its arguments and goes on from its last finished
// row. io_error when the state cannot be saved.
Result<RunOutcome> run_steps(State& state, const std::filesystem::path& dir, StepRunner& runner,
                             const RunOptions& options);

// How a study starts: a new one in an empty (or --force) DIR, or an earlier one resumed.
struct StartRequest {
  std::filesystem::path dir;
  bool resume = false;  // go on with the study in dir (its own options; `options` is ignored)
  bool force = false;   // start over in a dir that holds a study or other files
  Options options;
  std::string command_line;
  double now_unix_s = 0;
};

// Runs the `info` step first, into a scratch directory: it says whether there is a GPU at all
// (nothing is written to DIR when not) and which GPUs there are. A new study then gets its plan
// and DIR/study.json with `info` done; a resumed one is checked to be of this machine.
// Fails with:
//   invalid_argument  DIR holds a study (neither resume nor force) or other files (no force);
//                     a resumed study from another host or GPU set; a --gpu that is not here
//                     (not_found)
//   not_found, data_error  resume of a DIR without a study, or of a newer schema
//   no_driver, no_device   `info` found no GPU; the message is what it found
//   permission_denied      the driver refused
//   cancelled              interrupted while `info` ran
//   internal, io_error     anything else, with `info`'s words
Result<State> start_study(const StartRequest& request, StepRunner& runner);

// ---------------------------------------------------------------------------------------------
// Answers

struct ComputeAnswer {
  int gpu = 0;
  std::string precision;
  std::optional<double> achieved_flop_per_s;  // burn's median
  std::optional<double> datasheet_flop_per_s;
  std::optional<double> fraction;  // achieved / datasheet
  std::string note;                // skipped/failed reason
};

struct ModeAnswer {
  std::string mode;
  std::optional<double> samples_per_second;
  std::optional<double> joules_per_sample;
  std::optional<double> peak_allocated_bytes;
  std::vector<std::string> tied_with;  // within the measured spread: a tie (bench's Choice)
};

struct ModelAnswer {
  int gpu = 0;
  std::string model, task;
  std::optional<ModeAnswer> fastest, most_efficient, smallest_memory;
};

struct Headlines {
  std::vector<ComputeAnswer> compute;
  std::vector<ModelAnswer> models;
  // The sharing step's answers (`bench --share`, --full): "GPU 0 WORKLOAD: Up to 4 copies ...".
  std::vector<std::string> sharing;
  // The power sweeps' answers (`sweep`, --allow-power-changes), per workload: "GPU 0 vit_b16
  // train amp_bf16: 330 W: -10 % speed, -25 % energy, -5 °C vs 700 W (the fastest)".
  std::vector<std::string> power;
  // gpuscope's one findings model: "throttled", "power_capped", "pcie_link_degraded",
  // "host_link_low", "step_failed", ... Burn's are made by the same rules as the report's.
  std::vector<analysis::Finding> problems;
};

// A problem in one line, as the study prints it: its text, and for a finding of the shared
// rules the GPU and the subjects it holds for ("GPU 0 ran at its power limit ... (fp32, bf16)").
std::string problem_text(const analysis::Finding& problem);

// Reads the step outputs named in `state` (relative to `dir`) and answers from them. Steps
// that failed or were skipped become problems; outputs that cannot be read are skipped.
Headlines compute_headlines(const State& state, const std::filesystem::path& dir);

// The pieces, for tests: from `info --json`, `burn --json` and the bench document of one GPU.
void add_burn_answers(const nlohmann::json& burn, const nlohmann::json* info, Headlines& out);
void add_bench_answers(const nlohmann::json& bench, int gpu, Headlines& out);
void add_sweep_answers(const nlohmann::json& sweep, int gpu, Headlines& out);
void add_info_problems(const nlohmann::json& info, const std::vector<int>& gpus, Headlines& out);

// Expected host<->device bandwidth of a PCIe link (bytes/s per direction, after encoding);
// nullopt for an unknown generation.
std::optional<double> pcie_link_bytes_per_s(int generation, int width);

// The `--json` document: schema_version, kind "gpuscope.study", dir, status, steps, answers.
nlohmann::json summary_to_json(const State& state, const Headlines& headlines,
                               const std::filesystem::path& dir, bool interrupted);
// The headline answers for people (what the command prints at the end).
std::string headlines_text(const State& state, const Headlines& headlines);

// ---------------------------------------------------------------------------------------------
// Results

// Builds DIR/gpuscope.db (afresh) from the step outputs and DIR/report.html from it, with the
// study's steps and answers first. io_error/data_error from the store or the reporter.
Status write_results(const State& state, const Headlines& headlines,
                     const std::filesystem::path& dir);

// The sample study that ships with gpuscope: $GPUSCOPE_SAMPLE_DIR when set, else the installed
// or source-tree data directory (compiled in). not_found naming the places looked at.
Result<std::filesystem::path> locate_sample();

// Copies the sample study's state and step outputs into `dir` (which must be absent, empty,
// or an earlier copy), ready for write_results. Returns its state.
Result<State> copy_sample(const std::filesystem::path& sample, const std::filesystem::path& dir);

}  // namespace gpuscope::study
