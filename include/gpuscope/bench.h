// `gpuscope bench`: a matrix of gpuscope-torch configurations (models x tasks x precision modes x
// knobs x input paths), each run as a child process under the monitor's sampler, with a
// convergence guard per training mode and the answers people want from it.
//
//   RowSpec / expand_matrix / preset   what to run: one RowSpec per gpuscope-torch process
//   run_bench                          runs the rows in order; a row that cannot run (out of
//                                      memory, unsupported, crashed, malformed output) becomes
//                                      a skipped row with its reason and the matrix goes on
//   judge_guard                        a mode's loss curve against fp32's: ok, diverged, nan,
//                                      scale_collapse, not_learning (pure; thresholds below)
//   compute_answers                    per model and task: fastest, most efficient, smallest
//                                      memory, and what each knob bought
//   bench_to_json / print_bench /      the JSON document (kind "gpuscope.bench", schema pinned),
//   bench_to_run                       the console table, and the results-store run
//   bench_from_json / load_bench_json  the JSON document read back, for `--resume FILE`: an
//                                      unfinished matrix goes on from its last finished row
//
// Units are SI in the data: seconds, bytes, watts, joules; activities are fractions 0..1.
#pragma once

#include <cstdint>
#include <functional>
#include <iosfwd>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpuscope/status.h"
#include "gpuscope/store.h"
#include "gpuscope/target.h"

namespace gpuscope::nvml {
class Session;
}

namespace gpuscope::bench {

// ---------------------------------------------------------------------------------------------
// The matrix.

// How a row's batches reach the model (gpuscope-torch --input ...).
struct InputPath {
  std::string kind = "synthetic";    // synthetic | host | jpeg
  std::optional<int> workers;        // --loader-workers (host, jpeg)
  std::optional<bool> pinned;        // --pinned (host, jpeg)
  std::optional<bool> non_blocking;  // --non-blocking (host, jpeg)
  std::string data_dir;              // --data (jpeg)
  // "synthetic", "host workers=8 pinned=on non_blocking=on", "jpeg workers=8 data=DIR".
  std::string label() const;
  bool operator==(const InputPath&) const = default;
};

// Parses "synthetic", "host", "host:workers=8,pinned=on,non_blocking=off",
// "jpeg:data=DIR,workers=8". invalid_argument names what is wrong.
Result<InputPath> parse_input_path(const std::string& text);

// The knobs a row can turn, by name, and the gpuscope-torch switch each sets.
//   graphs -> --graphs, fused_adamw -> --fused-adamw, cudnn_benchmark -> --cudnn-benchmark,
//   channels_last -> --channels-last. Values: on | off (| auto where gpuscope-torch has it).
std::vector<std::string> knob_names();

// One gpuscope-torch process.
struct RowSpec {
  std::string model;  // vit_b16 | resnet50 | gpt2 (anything gpuscope-torch knows)
  std::string task;   // train | infer
  std::string mode;   // fp32 tf32 amp_fp16 amp_bf16 fp16 bf16 fp8
  std::string batch;  // "" (the model's default), "auto", or a number
  std::vector<std::pair<std::string, std::string>> knobs;  // set explicitly, in knob order
  InputPath input;
  std::optional<int> warmup, windows, steps;
  std::vector<std::string> extra_args;  // passed through as they are
  // Steps of this row's convergence-guard runs (gpuscope-torch --guard-steps); absent: its
  // default. Not part of the variant: the guard is shared by every row of a model and mode.
  std::optional<int> guard_steps;
  // GPUs of a data-parallel row (gpuscope-torch --world-size; GPUs 0..gpus-1); 1: one GPU.
  int gpus = 1;
  // false: the data-parallel row's ranks average no gradient (gpuscope-torch --grad-sync off):
  // every GPU trains alone, all at once, the ceiling of its synchronized twin (bench_scaling.h).
  bool grad_sync = true;
  // What tells this row from its model/task/mode peers: "batch=auto graphs=off input=host ...";
  // empty for the plain row.
  std::string variant() const;
  // "vit_b16 train amp_bf16" plus the variant.
  std::string label() const;
  // gpuscope-torch's arguments (without the program).
  std::vector<std::string> torch_args() const;
};

struct MatrixOptions {
  std::vector<std::string> models, tasks, modes;
  std::vector<std::string> batches;  // empty: the default batch
  // name -> values; every combination is a row ("graphs=on,off" gives two).
  std::vector<std::pair<std::string, std::vector<std::string>>> knobs;
  std::vector<InputPath> inputs;  // empty: synthetic
  std::optional<int> warmup, windows, steps;
  std::vector<std::string> extra_args;
  std::vector<int> gpus;  // --gpus: each row once per GPU count (bench_scaling.h); empty: 1
  // --no-sync-ceiling: each data-parallel row is followed by its twin without gradient sync.
  bool no_sync_ceiling = false;
};

inline const std::vector<std::string>& all_modes() {
  static const std::vector<std::string> modes = {"fp32", "tf32", "amp_fp16", "amp_bf16",
                                                 "fp16", "bf16", "fp8"};
  return modes;
}

// Every combination, models outermost, then tasks, modes, batches, knobs, inputs. Fails with
// invalid_argument for an unknown task, mode or knob, a bad knob value or an empty list.
Result<std::vector<RowSpec>> expand_matrix(const MatrixOptions& options);

// Named matrices:
//   seeds        seeds/000 (ViT-B/16, every mode, train and infer), seeds/002 (ResNet-50
//                training, fp32 vs amp_fp16 x cudnn.benchmark on/off) and a host-fed ResNet-50
//                comparison (loader workers 0 vs 8, pinned vs pageable)
//   study-quick  vit_b16, resnet50, gpt2 x train, infer x every mode, --batch auto, short
//                windows (about 2.5 min on an H100)
//   study        the same with longer windows (about 6 min on an H100)
// not_found for another name.
Result<std::vector<RowSpec>> preset(const std::string& name);
std::vector<std::string> preset_names();
// seeds/000's rows (the first of `seeds`): ViT-B/16 training and inference in every precision
// mode, at the model's default batch, without timing settings. `gpuscope sweep --preset seeds`.
std::vector<RowSpec> seed000_rows();

// ---------------------------------------------------------------------------------------------
// The convergence guard: the same small learnable task, fixed seed, in every mode; each mode's
// loss curve is judged against fp32's.

enum class Verdict { ok, diverged, nan, scale_collapse, not_learning, unknown };
std::string_view verdict_name(Verdict verdict);               // "ok", "diverged", ...
std::optional<Verdict> parse_verdict(std::string_view name);  // verdict_name's inverse
bool verdict_is_bad(Verdict verdict);  // diverged, nan, scale_collapse, not_learning

struct LossCurve {
  std::vector<double> losses;        // one per step; NaN where the step's loss was not finite
  std::optional<double> loss_scale;  // amp_fp16's final scale
  std::optional<int> skipped_steps;  // amp_fp16's steps skipped for overflow
};

// The thresholds, stated once. "Early" and "late" are the first and last kTailFraction of the
// steps (at least one step each), averaged.
struct GuardThresholds {
  double tail_fraction = 0.2;
  // not_learning: the late mean is not below kLearnedFraction of the early mean (fell < 10%).
  double learned_fraction = 0.9;
  // diverged: the late mean is above fp32's late mean by more than this share of fp32's drop
  // (early - late), and by more than min_excess in absolute terms; or it rose above its early.
  double diverge_share_of_drop = 0.5;
  double min_excess = 0.05;
  // scale_collapse: the final loss scale under this, or more than this share of steps skipped.
  double min_loss_scale = 1.0 / 1024;
  double max_skipped_share = 0.5;
};

struct GuardResult {
  Verdict verdict = Verdict::unknown;
  std::string reason;  // for people: what was seen, with the numbers
};

// Judges `curve` (of `mode`) against `fp32` (absent: only the curve's own checks). Checks, in
// order: nan, scale_collapse (any mode reporting a scale or skipped steps), not_learning,
// diverged. fp32 itself is judged on its own checks.
GuardResult judge_guard(const std::string& mode, const LossCurve& curve,
                        const std::optional<LossCurve>& fp32,
                        const GuardThresholds& thresholds = {});

// ---------------------------------------------------------------------------------------------
// Rows as measured.

struct Row {
  RowSpec spec;
  bool skipped = false;
  std::string skip_code;     // out_of_memory, not_supported, no_device, crashed, malformed,
                             // failed, interrupted, timeout
  std::string skip_reason;   // for people
  std::optional<int> batch;  // the batch that ran (the one found with auto)
  std::optional<double> samples_per_second;                         // median over windows
  std::optional<double> step_seconds_median, step_relative_spread;  // (p90-p10)/median
  std::optional<double> peak_allocated_bytes, peak_reserved_bytes;  // the caching allocator's
  std::optional<double> timed_seconds;                              // the timed windows, summed
  std::optional<double> timed_samples;
  // From the sampler, over the timed windows (absent without NVML or the reading).
  std::optional<double> energy_j, power_avg_w, energy_per_sample_j;
  std::optional<double> sm_activity, tensor_activity;  // time-weighted (GPM)
  std::optional<double> throttle_s;                    // any reason
  std::optional<double> gpu_memory_peak_bytes;         // NVML's used memory, whole row
  bool short_windows = false;  // a timed window shorter than kMinEnergyWindowS
  std::optional<std::string> torch_version, device_name;
  double wall_seconds = 0;
  // The guard, for training rows (unknown when it could not run; absent when off).
  std::optional<GuardResult> guard;
  // Data-parallel rows (gpus > 1), from rank 0's summary: samples_per_second is the job's.
  std::optional<int> world_size;
  std::optional<double> collective_seconds_per_step, exposed_seconds_per_step, overlap_fraction;
  std::optional<double> peak_reserved_per_gpu_bytes;  // the largest rank's
  // What averaged the gradients ("copy-engine", "nccl", "gloo") and, when gpuscope-torch's
  // --all-reduce auto could not use the copy engines, why.
  std::optional<std::string> all_reduce, all_reduce_fallback;
  // Whether each rank kept AdamW's state for 1/N of the parameters (--shard-optimizer).
  std::optional<bool> optimizer_sharded;
  // The slowest rank's own samples/s: with gradient sync every rank steps at the job's pace;
  // without, each at its GPU's own.
  std::optional<double> slowest_rank_samples_per_second;
};

// Energy windows shorter than this are flagged: the counter's update period makes them coarse.
inline constexpr double kMinEnergyWindowS = 1.0;

struct GuardRun {
  std::string model, mode;
  std::optional<LossCurve> curve;  // absent: it did not run
  GuardResult result;
};

// What each knob bought: `row` against the row that differs only in that knob.
struct KnobEffect {
  std::string knob, from, to;  // "cudnn_benchmark", "off", "on"
  std::string mode;
  std::string variant;                        // the row's full variant
  double speedup = 0;                         // samples/s ratio to the baseline
  std::optional<double> memory_change_bytes;  // peak allocated, row minus baseline
};

struct Choice {
  std::string mode, variant;
  double samples_per_second = 0;
  std::optional<double> joules_per_sample;
  std::optional<double> peak_allocated_bytes;
  // Fastest / most efficient only: the modes ("bf16", "fp16 [cudnn_benchmark=on]") it does not
  // beat by more than the measured spread of the two rows' step times: a tie, not a winner.
  std::vector<std::string> tied_with;
};

struct Answer {
  std::string model, task;
  std::optional<Choice> fastest;  // bad guard verdicts excluded
  // Lowest J/sample; bad guard verdicts excluded; absent unless every other trusted row of the
  // model and task has its energy measured.
  std::optional<Choice> most_efficient;
  std::optional<Choice> smallest_memory;  // lowest peak allocated, of every measured row
  std::vector<KnobEffect> knob_effects;
};

// Per model and task in the order they first appear. Only measured rows count. Fastest and
// most efficient respect the noise (analysis::best_of): a mode within the measured spread of the
// winner is listed in tied_with.
std::vector<Answer> compute_answers(const std::vector<Row>& rows);

// ---------------------------------------------------------------------------------------------
// Running.

struct BenchResult;

struct RunOptions {
  std::string torch_bin;  // REQUIRES: set (find_torch_bin)
  // NVML index of the GPU sampled and run on (children get CUDA_DEVICE_ORDER=PCI_BUS_ID, and
  // --device cuda:N when it is not 0); for a MIG instance, its GPU.
  unsigned gpu = 0;
  // Set: run on this MIG instance of `gpu` (resolve_targets, TargetUse::run). Children get
  // CUDA_VISIBLE_DEVICES=its UUID; the sampler takes its own GPM (SM and tensor activity), while
  // power, energy, temperature and throttling are the whole GPU's, shared with the other
  // instances (telemetry::measured_per_instance): rows get no energy, and a warning says so.
  std::optional<Target> mig;
  int interval_ms = 100;  // sampler interval
  bool guard = true;      // run the convergence guard for training rows
  int guard_seed = 0;
  double row_timeout_s = 900;  // a row still running after this is stopped (SIGTERM, SIGKILL)
  bool progress = true;        // the progress line on the error stream
  // An earlier attempt at the same matrix (load_bench_json of its --json file), or null. Its
  // rows that reached an end of their own (measured, or skipped for any reason but
  // "interrupted" and "timeout") are kept and not run again; its guard loss curves are reused
  // (so a mode run now is judged against the earlier fp32 curve). Not owned.
  const BenchResult* resume = nullptr;
  // Called before the first row and after every finished row (with its guard runs) with the
  // matrix so far (complete = false, answers over the rows so far): `gpuscope bench --json FILE`
  // rewrites FILE from it, so a bench killed mid-matrix leaves its finished rows. An error from
  // the first call fails run_bench before anything runs; later errors are warnings.
  std::function<Status(const BenchResult&)> on_snapshot;
};

// Sets o.gpu and o.mig from a --gpu selector naming one GPU or one MIG instance (a GPU in MIG
// mode with a single instance names that instance). `session` null (no NVML): only an index is
// understood, as CUDA's device in PCI bus order. invalid_argument for a malformed selector or
// one naming several targets (the message lists them), not_found for one naming nothing,
// no_device for a GPU in MIG mode without instances.
Status choose_target(const nvml::Session* session, const std::string& gpu, RunOptions& o);

struct BenchResult {
  std::vector<Row> rows;  // the finished ones, in order
  std::vector<GuardRun> guards;
  std::vector<Answer> answers;
  std::size_t planned = 0;
  bool interrupted = false;
  bool complete = true;  // false in the snapshots written while the matrix still runs
  // The first attempt's start; wall_seconds counts every attempt, earlier_wall_seconds the
  // ones before this (resumed) run, up to their last finished row.
  double started_unix_s = 0, wall_seconds = 0, earlier_wall_seconds = 0;
  std::size_t resumed_rows = 0;  // rows kept from an earlier attempt (RunOptions::resume)
  bool guard_enabled = true;     // RunOptions::guard and guard_seed, as run
  int guard_seed = 0;
  std::string torch_bin;
  unsigned gpu_index = 0;  // NVML index of the sampled GPU
  std::optional<std::string> gpu_name, gpu_uuid;
  std::optional<std::string> driver_version;
  std::vector<std::string> warnings;  // telemetry unavailable, ...
};

// gpuscope-torch: `explicit_path`, else $GPUSCOPE_TORCH_BIN, else next to this executable, else
// in the build tree (../../workloads/torch/ from tools/gpuscope/). not_found listing the places
// looked at.
Result<std::string> find_torch_bin(const std::string& explicit_path);

// Runs `rows` in order. `session` may be null (no telemetry: rows lack power and energy). Fails
// before anything runs with invalid_argument (no rows, a GPU that does not exist) or not_found
// (gpuscope-torch missing); no_device when the first rows find no CUDA device (nothing measured
// yet: the rest would be skipped alike); otherwise it returns what ran. SIGINT/SIGTERM are
// forwarded to the running row, which ends it; the finished rows are kept (interrupted = true).
// The progress line goes to `err`.
Result<BenchResult> run_bench(const nvml::Session* session, const std::vector<RowSpec>& rows,
                              const RunOptions& options, std::ostream& err);

// ---------------------------------------------------------------------------------------------
// Output.

inline constexpr int kBenchSchemaVersion = 1;
// {"kind": "gpuscope.bench", "schema_version": 1, "complete": true, "answers": [...],
//  "rows": [...], ...}.
nlohmann::json bench_to_json(const BenchResult& result);
// bench_to_json's document read back; the answers are recomputed from the rows. data_error
// naming the field for anything else (another kind, a newer schema, a missing or mistyped
// field). Documents of older gpuscope versions lack the rows' warmup/windows/steps.
Result<BenchResult> bench_from_json(const nlohmann::json& document);
// bench_from_json of the file at `path`: not_found when there is none, data_error when it is
// not a bench JSON document (the message names the file).
Result<BenchResult> load_bench_json(const std::string& path);
// Writes `document` to `path` whole or not at all (PATH.tmp in the same directory, fsync'd,
// renamed over it), so a reader never sees half a file. io_error naming the path.
Status save_bench_json(const std::string& path, const nlohmann::json& document);
// Ok when `earlier` is an attempt at `rows` run with `options` (same rows in the same order,
// with the same gpuscope-torch arguments, guard settings and --gpu); invalid_argument saying
// what differs otherwise.
Status check_resumable(const BenchResult& earlier, const std::vector<RowSpec>& rows,
                       const RunOptions& options);
// Whether a row of an earlier attempt is kept on resume: it ran to an end of its own
// (measured, or skipped for any reason but "interrupted" and "timeout").
bool row_is_final(const Row& row);
// The rows (skipped ones with their reasons), the guard, the answers.
void print_bench(const BenchResult& result, std::ostream& out);
// `--list`: the expanded rows, one per line, with the gpuscope-torch arguments.
void print_rows(const std::vector<RowSpec>& rows, std::ostream& out);
// A "bench" run for the results store: samples_per_s, peak_memory_bytes, energy_per_sample_j,
// power_avg_w, sm/tensor activity, throttle_s per row (tags model, task, mode, batch_size,
// variant, guard), skipped rows with tags["skipped"], guard loss curves (name "loss", tags
// "step", task "guard"), findings for bad verdicts.
store::RunData bench_to_run(const BenchResult& result, const std::string& command_line);

}  // namespace gpuscope::bench
