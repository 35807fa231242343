// The power-limit sweep: how a workload's speed and energy follow a GPU's power limit, and the
// limit that keeps 80/90/95 % of the speed for far less energy (seeds/000) - or the same against
// a lock of the SM clock (Knob::locked_clocks, `--knob clocks`).
//
// A sweep lowers the power limit (or the SM clock lock) of the chosen GPUs step by step from the
// maximum while ONE
// workload process runs throughout (its speed comes from the JSON lines it prints,
// {"samples_per_second": X}), and at each limit measures windows of speed, energy, power,
// clocks, temperatures and throttle reasons. Several workloads (the precision modes of
// seeds/000) are swept in turn, each over every limit: started, swept, stopped; each gets its own
// curve, knees and answer.
//
// What it changes, and how that is undone (README: "Power-limit sweeps"):
//   - nothing without SweepOptions::allow_power_changes; a dry run never calls a setter;
//   - only the power limit, or only the SM clock lock: never persistence mode, compute mode,
//     MIG or application clocks;
//   - before the first change, each GPU's prior limit is written to a journal file in the state
//     directory (atomically, fsync'd), and a guardian process is running that restores the
//     journal as soon as its pipe to the sweeping process closes (that process was killed);
//   - the prior limit (not the maximum) is restored at the end, on SIGINT/SIGTERM/SIGHUP and on
//     any error (an RAII guard); what survives both processes (power loss, both killed) is
//     restored by restore_leftover_limits(), which every gpuscope command calls at start;
//   - a GPU is swept by one process at a time (a lock file per GPU in the state directory).
// A clock lock is undone with a reset (nvmlDeviceResetGpuLockedClocks): NVML cannot read back a
// lock, so the journal records the prior setting as "unlocked" and the restore removes the lock
// (a lock someone set before the sweep is not set again).
#pragma once

#include <sys/types.h>

#include <functional>
#include <iosfwd>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "gpuscope/precision.h"
#include "gpuscope/status.h"

namespace gpuscope::store {
struct RunData;
}
namespace gpuscope::bench {
struct RowSpec;
}

namespace gpuscope::sweep {

// What a sweep changes: the power limit (W) or a lock of the SM clock (MHz, min = max).
enum class Knob { power_limit, locked_clocks };
// "power_limit" | "locked_clocks" (the JSON's and the journal's "knob").
const char* knob_name(Knob knob);
// "W" | "MHz".
const char* knob_unit(Knob knob);
// The JSON's and the store's key of a point's value: "power_limit_w" | "sm_clock_lock_mhz".
const char* knob_key(Knob knob);

// The JSON document's "kind" and "schema_version" (pinned by tests/sweep).
inline constexpr const char* kSweepJsonKind = "gpuscope.sweep";
inline constexpr int kSweepSchemaVersion = 1;

// The journals' and locks' folder: $GPUSCOPE_STATE_DIR if set; else /var/lib/gpuscope for root;
// else $XDG_STATE_HOME/gpuscope, or ~/.local/state/gpuscope without XDG_STATE_HOME.
std::string default_state_dir();

// Whether this process may change power limits: root's usual effective CAP_SYS_ADMIN (the
// driver checks that capability). The driver has the last word: a refusal still ends a sweep
// with permission_denied before its workload starts.
bool has_power_change_privilege();

// In the knob's unit (W, or MHz for a clock lock).
struct LimitRange {
  double from_w = 0;  // the first (highest) limit
  double to_w = 0;    // the last (lowest)
  double step_w = 0;  // > 0
};

// One workload: a process that runs until it is stopped (SIGTERM) and prints its speed as
// {"samples_per_second": X} lines, e.g. `gpuscope-torch --windows 0 ...` or a user's command.
struct WorkloadSpec {
  std::string label;                 // "vit_b16 train amp_bf16", "gpuscope-sim-workload --curve x"
  std::vector<std::string> command;  // argv, run without a shell
  std::vector<std::pair<std::string, std::string>> env;  // added to its environment
  // The unit of its rate, as people read it: "samples/s", or "TFLOP/s" ("TOP/s" for int8) for a
  // burn GEMM.
  std::string unit = "samples/s";
  // Where its rate is: a line {"samples_per_second": X} without a "type", or a line of this
  // "type" (gpuscope-torch's "window"; the burn worker's "gemm_window") with the rate under
  // `rate_key` ("samples_per_second"; the burn worker's "tflops").
  std::string rate_line_type = "window";
  std::string rate_key = "samples_per_second";
  // What the store tags its measurements with besides power_limit_w: {"model", "task", "mode"}
  // for a bench row; {"mode": label} when empty.
  nlohmann::json tags = nlohmann::json::object();
};

// "gpuscope-sim-workload --curve fp32_train": a command as a label (the program's name without
// its folder).
std::string command_label(const std::vector<std::string>& command);

// A bench row as a workload: `torch_bin` (gpuscope-torch) with the row's arguments and
// --windows 0 (windows until it is stopped), on GPU `gpu` (an NVML index or UUID, its only CUDA
// device), labelled "vit_b16 train amp_bf16" and tagged model, task, mode (and batch).
WorkloadSpec row_workload(const bench::RowSpec& row, const std::string& torch_bin,
                          const std::string& gpu);

// The burn worker's GEMM of `precision` (`worker`: burn::locate_worker()) on GPU `gpu`, for a
// day at most: its gemm_window lines' rate in TFLOP/s (TOP/s for int8), tagged precision.
WorkloadSpec burn_workload(Precision precision, const std::string& worker, const std::string& gpu);

struct SweepOptions {
  std::vector<std::string> gpus;  // NVML indices or UUIDs; empty: every GPU
  // Swept in turn, each over every limit (one process each for its whole sweep).
  std::vector<WorkloadSpec> workloads;
  Knob knob = Knob::power_limit;
  bool allow_power_changes = false;  // also for a clock lock
  // Prints the plan, the prior limits and the privilege check, and measures the workload at the
  // current limit only. Never changes anything.
  bool dry_run = false;
  // Absent: max -> min in steps of ~5 % of the max (a clock lock: the highest supported SM
  // clock down to ~40 % of it).
  std::optional<LimitRange> limits;
  bool refine = true;      // extra points between those that bracket the knees
  double window_s = 5.0;   // one measurement window
  double warmup_s = 10.0;  // after each change, before the first window
  // A workload's first point waits for its first speed line (its start: CUDA, the model) for up
  // to this long before the warm-up; without one it ends with `timeout`.
  double start_timeout_s = 600.0;
  double cooldown_s = 0.0;         // an extra wait before each point's warm-up
  int min_windows = 2;             // windows per point (>= 2)
  int max_windows = 6;             // more when the first ones disagree (unstable)
  double stable_tolerance = 0.03;  // windows within this relative spread are stable
  std::string state_dir;           // "" -> default_state_dir()
  // The guardian's command line without its last argument (the sweeping process's PID, which
  // the sweep appends), e.g. {"/usr/bin/gpuscope", "sweep", "--guardian-for"}; empty: no
  // guardian (only in-process tests do that).
  std::vector<std::string> guardian_argv;
};

// What one GPU did at one point, over the point's accepted windows.
struct GpuReading {
  unsigned gpu = 0;
  std::optional<double> enforced_limit_w;  // read back after setting the limit
  std::optional<double> energy_j;
  bool energy_from_counter = true;  // false: integrated from power samples
  std::optional<double> power_avg_w;
  std::optional<double> power_peak_w;
  std::optional<double> sm_clock_avg_hz;
  std::optional<double> memory_clock_avg_hz;
  std::optional<double> temperature_avg_c;
  std::optional<double> temperature_max_c;
  std::optional<double> memory_temperature_avg_c;
  std::optional<double> fan_avg;             // 0..1
  std::map<std::string, double> throttle_s;  // reason name -> seconds held in the windows
};

struct Point {
  double value = 0;                    // the knob's setting: W, or MHz
  bool refined = false;                // added to bracket a knee
  std::optional<std::string> skipped;  // why it has no measurement
  double started_s = 0;                // since the sweep began (thermal drift shows against it)
  std::vector<double> window_samples_per_second;
  bool stable = false;  // the accepted windows agree within stable_tolerance
  double samples_per_second = 0;
  double seconds = 0;  // measured (accepted windows)
  // All swept GPUs together.
  std::optional<double> energy_j;
  bool energy_from_counter = true;
  std::optional<double> power_avg_w;
  std::optional<double> joules_per_sample;
  std::optional<double> temperature_max_c;  // the hottest GPU's mean
  std::vector<GpuReading> gpus;
};

struct Knee {
  double fraction = 0;           // of the fastest point's speed
  double value = 0;              // W or MHz
  bool at_lowest_limit = false;  // reached already at the lowest limit measured
};

// The seed's answer: "330 W: -10 % speed, -25 % energy, -5 C" ("1410 MHz: ..." for a clock
// lock), against the maximum limit's point and against the limit the GPUs had before the sweep.
struct Recommendation {
  double value = 0;  // the 90 % knee, rounded to 5 W (15 MHz)
  struct Change {
    double reference = 0;                 // the setting compared with
    double speed = 0;                     // relative: -0.10
    double energy = 0;                    // J/sample, relative
    std::optional<double> temperature_c;  // difference in degrees
  };
  Change vs_max;
  std::optional<Change> vs_prior;  // absent when the prior limit is the maximum
  std::string text;
};

struct GpuPrior {
  unsigned index = 0;
  std::string uuid;
  std::string name;
  double prior_limit_w = 0;
  std::optional<double> default_limit_w;
  double min_limit_w = 0;
  double max_limit_w = 0;
  // The SM clocks a lock may name, high to low (read for a clock sweep only).
  std::vector<unsigned> sm_clocks_mhz;
};

// One workload's sweep: its curve and the answers from it.
struct WorkloadResult {
  WorkloadSpec spec;
  std::vector<Point> points;               // in measured order
  std::vector<Knee> knees;                 // 0.8, 0.9, 0.95 (those found)
  std::optional<double> min_energy_value;  // W or MHz
  std::optional<double> min_energy_delay_value;
  std::optional<Recommendation> recommendation;
  // The workload could not run here: it said so itself (gpuscope-torch's `skipped` line, e.g. a
  // precision mode this GPU lacks) before its first point. Not an error of the sweep.
  std::optional<std::string> skipped;
  // Why it ended before its sweep did (it exited, could not start); ok when complete. The
  // points measured until then are kept, and the next workload is swept.
  Status ended;
};

struct SweepResult {
  Knob knob = Knob::power_limit;
  bool dry_run = false;
  bool privileged = false;  // has_power_change_privilege()
  std::string state_dir;
  std::vector<GpuPrior> gpus;
  // The planned settings, high to low, in the knob's unit (refinements not included).
  std::vector<double> plan;
  std::vector<WorkloadResult> workloads;  // in the order swept (those not reached are absent)
  // Restores done at the end ("GPU 0: 390 W restored (was 330 W)") and those that failed.
  std::vector<std::string> restore_notes;
  bool restored_all = true;
  double started_unix_s = 0;
  double wall_s = 0;
  // Why the sweep ended early (cancelled, gpu_lost, ...); ok when complete. The points
  // measured until then are kept.
  Status stopped;
  // Whether a workload ended early (WorkloadResult::ended; a skipped one did not).
  bool workload_failed() const;
};

// The planned limits, high to low, clamped to [min_w, max_w]: `range` when given, else from
// max_w down to min_w in steps of 5 % of max_w (rounded to whole watts), min_w always last.
// Fails with invalid_argument for a range with no step or no limit inside the constraints.
Result<std::vector<double>> plan_limits(double min_w, double max_w,
                                        const std::optional<LimitRange>& range);

// The planned SM clock locks, high to low, from `supported_mhz` (the GPU's lockable clocks):
// `range` when given, else from the highest down in steps of 5 % of it to 40 % of it; each
// snapped to the nearest supported clock, without repeats. Fails with invalid_argument for a
// range with no step or no supported clock inside it, not_supported for an empty list.
Result<std::vector<double>> plan_clocks(const std::vector<unsigned>& supported_mhz,
                                        const std::optional<LimitRange>& range);

// Settings to add so that each knee is bracketed more closely: the midpoint (rounded by
// `snap`, by default to whole units) of the two measured settings around each knee, when they
// are more than `resolution` apart and the midpoint was not measured.
std::vector<double> refine_limits(const std::vector<Point>& points,
                                  const std::vector<double>& fractions, double resolution = 6,
                                  const std::function<double(double)>& snap = {});

// Knees, minimum-energy and minimum energy-delay points, recommendation, from workload.points;
// the recommendation also against `prior` (the setting before the sweep) when given, rounded
// to `round_to` (5 W; 15 MHz for a clock lock) and written in `unit`.
void compute_answers(WorkloadResult& workload, std::optional<double> prior, double round_to = 5,
                     const std::string& unit = "W");

// Runs the sweep. Fails before any change with invalid_argument (no workload, bad options,
// changes not allowed), permission_denied (not privileged, or the driver refuses), not_supported
// (a GPU whose limit cannot be set), io_error (state directory, another sweep holds a GPU);
// once running, a failure is SweepResult::stopped and the limits are restored regardless.
// Progress lines go to `progress`.
Result<SweepResult> run_sweep(const SweepOptions& options, std::ostream& progress);

// Restores the journals left in `state_dir` by sweeps that are no longer running (their GPU's
// lock is free), says so on `out`, and removes them. With `only_pid`, just that sweep's
// journals, waiting for its locks (the guardian). Returns how many limits were restored; fails
// only when a journal could not be restored (it is kept for the next try, except for a GPU that
// is gone: a reset GPU starts at its default limit).
Result<int> restore_leftover_limits(const std::string& state_dir, std::ostream& out,
                                    std::optional<pid_t> only_pid = std::nullopt);

// The guardian's body: ignores SIGINT/SIGTERM/SIGHUP, writes "ready" to stdout, waits for EOF
// on stdin (the sweeping process `sweep_pid` closed its pipe: it ended or was killed), then
// restores that process's journals. Returns an exit code.
int run_guardian(const std::string& state_dir, pid_t sweep_pid);

// Output.
nlohmann::json sweep_to_json(const SweepResult& result);
void print_sweep(const SweepResult& result, std::ostream& out);
// The sweep as a store run of kind "sweep", one configuration per workload: per point its rate
// (samples_per_s, or gemm_flop_per_s for a TFLOP/s workload) and energy_per_sample_j, tagged
// power_limit_w and the workload's tags (model, task, mode: one curve per mode, as the report's
// sweep section reads them), and per GPU its power, energy, SM clock and temperature; the knees
// as power_limit_knee_w (tagged fraction). A clock sweep tags sm_clock_lock_mhz instead, its
// knees sm_clock_lock_knee_mhz.
store::RunData sweep_to_run(const SweepResult& result, const std::string& command_line);

}  // namespace gpuscope::sweep
