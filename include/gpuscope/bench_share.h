// `gpuscope bench --share N[,M...]`: several identical copies of one workload on one GPU at once
// (time-sliced, under an MPS daemon, or one per MIG instance), and how many pay off.
//
//   parse_share_counts / parse_share_modes   the options
//   run_share          per mode and N: N copies started together (a start barrier: every copy
//                      ready, then go), each read as a bench row; a copy out of memory is data
//                      (the N does not fit), not a failure
//   summarize_share    per trial the total against one process alone, fairness; per mode the
//                      largest N that pays off; the answer in words (pure: tested alone)
//   share_to_json / print_share / share_to_run   the JSON document (kind
//                      "gpuscope.bench.share", schema pinned), the console table, the store run
//
// The rate that counts for a copy is its rate while every copy of the trial ran (the windows
// inside the interval where all of them were timing): copies that start or finish alone would
// otherwise look faster than they are together.
//
// Units are SI in the data: seconds, bytes, watts, joules.
#pragma once

#include <iosfwd>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpuscope/bench.h"
#include "gpuscope/status.h"
#include "gpuscope/store.h"

namespace gpuscope::nvml {
class Session;
}

namespace gpuscope::bench {

enum class ShareMode { timeslice, mps, mig };
std::string_view share_mode_name(ShareMode mode);  // "timeslice", "mps", "mig"

// "1,2,4" -> {1, 2, 4}: sorted, without duplicates, each 1..64. invalid_argument otherwise.
Result<std::vector<int>> parse_share_counts(const std::string& text);
// "timeslice,mps", "mig" or "all" (timeslice and mps; mig too when `mig_available`).
// invalid_argument for another name.
Result<std::vector<ShareMode>> parse_share_modes(const std::string& text, bool mig_available);

// What each copy runs: a gpuscope-torch row, or a person's command that prints
// {"samples_per_second": X} lines (as `sweep` reads them).
struct ShareWorkload {
  std::optional<RowSpec> row;
  std::vector<std::string> command;  // used when `row` is absent
  std::string label() const;         // the row's label, or the command line
};

// A MIG instance to put one copy on (CUDA_VISIBLE_DEVICES = uuid).
struct ShareSlice {
  std::string label;  // "GPU 0 MIG 3g.20gb (GI 1 CI 0)"
  std::string uuid;   // "MIG-..."
};

// The MPS daemon for mode mps.
struct MpsOptions {
  // The control program, found in $PATH unless it has a '/'.
  std::string control_program = "nvidia-cuda-mps-control";
  std::optional<int> active_thread_percentage;  // CUDA_MPS_ACTIVE_THREAD_PERCENTAGE, 1..100
  // A system daemon already running (the default pipe folder has a control socket, or an
  // nvidia-cuda-mps-server process exists): true runs the copies under it; false refuses.
  bool use_system = false;
  std::string system_pipe_dir = "/tmp/nvidia-mps";  // where a system daemon listens
  std::string proc_dir = "/proc";                   // where its server processes are looked for
  // The guardian that stops the private daemon should gpuscope die: its command line without
  // the journal and PID that are appended ({gpuscope, "bench", "--mps-guardian"}); empty: none
  // (in-process tests).
  std::vector<std::string> guardian_argv;
  std::string state_dir;  // where the daemon's journal goes (REQUIRES: set for a private one)
  // CUDA_VISIBLE_DEVICES of a private daemon: the one GPU it serves (its UUID), so that it
  // never takes the machine's other GPUs; "" serves every GPU. run_share sets the GPU's.
  std::string visible_devices;
};

struct ShareOptions {
  std::string torch_bin;  // REQUIRES: set when the workload is a row
  unsigned gpu = 0;       // NVML index, sampled and run on (as RunOptions::gpu)
  int interval_ms = 100;
  std::vector<int> counts = {1, 2, 4};
  std::vector<ShareMode> modes = {ShareMode::timeslice, ShareMode::mps};
  // The GPU's MIG instances (mode mig puts one copy on each); empty: the GPU is not in MIG mode.
  std::vector<ShareSlice> slices;
  MpsOptions mps;
  // The run folder: the barrier's go file and the private MPS pipe and log folders go under
  // it. REQUIRES: an existing directory with a short path (a socket path has 107 bytes at most).
  std::string run_dir;
  double trial_timeout_s = 900;    // a copy still running after this is stopped
  double barrier_timeout_s = 300;  // copies not ready by then: go anyway
  bool progress = true;
  // The GPU's compute mode as NVML reports it ("default", "exclusive_process", ...); reported,
  // never changed. exclusive_process: time-sliced trials with N > 1 are skipped (one context at
  // a time), MPS ones run (it is MPS's recommended mode).
  std::optional<std::string> compute_mode;
};

// One copy of a trial.
struct ShareCopy {
  std::string target;  // "GPU 0", or the MIG instance's label
  Row row;             // as a bench row (no telemetry of its own: the GPU is shared)
  // Its rate over the interval where every copy of the trial was timing.
  std::optional<double> together_samples_per_second;
};

// N copies in one mode.
struct ShareTrial {
  ShareMode mode = ShareMode::timeslice;
  int copies = 1;
  std::vector<ShareCopy> runs;
  // The trial could not run at all (MPS refused, too few MIG instances, ...): why. Empty else.
  std::string skip_reason;
  bool fits = false;            // every copy measured (none out of memory, none failed)
  int out_of_memory = 0;        // copies that ran out of memory
  bool overlapped = false;      // the copies' timed windows overlapped (else rates are alone)
  double together_seconds = 0;  // length of that overlap
  std::optional<double> total_samples_per_second;     // sum over the measured copies
  std::optional<double> per_copy_samples_per_second;  // mean
  std::optional<double> fairness;                     // slowest / fastest copy, 0..1
  std::optional<double> gain;                         // total / one process alone (summarize_share)
  std::optional<double> memory_per_copy_bytes;        // the largest peak reserved of a copy
  std::optional<double> gpu_memory_peak_bytes;        // NVML, the whole trial
  // The whole GPU over the overlap: energy, mean power, energy per sample of all copies.
  std::optional<double> energy_j, power_avg_w, energy_per_sample_j;
  double wall_seconds = 0;
};

struct ShareResult {
  std::string workload;  // ShareWorkload::label()
  std::vector<ShareTrial> trials;
  // One process alone: the time-sliced N = 1 trial, else the lowest-N trial of the mode.
  std::optional<double> alone_samples_per_second;
  // Per mode that ran: the largest N whose total is at least kSharePaysOff x alone and above
  // the next smaller N's total by that much too.
  std::vector<std::pair<ShareMode, int>> pays_off_up_to;
  // MPS's best total over time slicing's best total, where both ran with some N > 1.
  std::optional<double> mps_over_timeslice;
  std::string answer;  // in words
  // "private (pipe folder DIR)", "system (DIR)" or "" when no trial used MPS.
  std::string mps_daemon;
  std::optional<int> mps_active_thread_percentage;
  std::optional<std::string> compute_mode;
  unsigned gpu_index = 0;
  std::optional<std::string> gpu_name, gpu_uuid, driver_version;
  double started_unix_s = 0, wall_seconds = 0;
  bool interrupted = false;
  std::vector<std::string> warnings;
};

// A total must beat the step before it by this factor to pay off (5 %: above run-to-run noise).
inline constexpr double kSharePaysOff = 1.05;

// Runs every mode (in order) x every N (ascending). Fails before anything runs with
// invalid_argument (no counts or modes, a row without torch_bin, a GPU that does not exist),
// failed_precondition when an MPS daemon cannot be had (a system daemon running and not to be
// used; the control program missing or failing): the message says which and what to do.
// SIGINT/SIGTERM are forwarded to the copies; the trials so far are kept (interrupted = true)
// and a private MPS daemon is stopped in every case. Progress goes to `err`.
Result<ShareResult> run_share(const nvml::Session* session, const ShareWorkload& workload,
                              const ShareOptions& options, std::ostream& err);

// Fills each trial's gain, the result's alone rate, pays_off_up_to, mps_over_timeslice and
// answer from the trials' totals. Idempotent.
void summarize_share(ShareResult& result);

inline constexpr int kShareSchemaVersion = 1;
// {"kind": "gpuscope.bench.share", "schema_version": 1, "shares": [...]} for one or several
// workloads.
nlohmann::json share_to_json(const std::vector<ShareResult>& results);
void print_share(const ShareResult& result, std::ostream& out);
// The store's run (kind "bench"): per trial and copy its samples/s, tagged share_mode and
// share_copies; per trial the total (tag "copy": "total"), gain, fairness, energy per sample.
store::RunData share_to_run(const std::vector<ShareResult>& results,
                            const std::string& command_line);

// The body of the MPS guardian process (`gpuscope bench --mps-guardian JOURNAL PID`): once its
// owner is gone, stops the private daemon the journal names (if it is still there) and removes
// its folders and the journal.
int run_mps_guardian(const std::string& journal_path);
// Stops the private MPS daemons of gpuscope processes that are gone (their journals in
// `state_dir`), as the next `bench --share` does first. Returns how many it stopped.
Result<int> stop_leftover_mps(const std::string& state_dir, std::ostream& out);

}  // namespace gpuscope::bench
