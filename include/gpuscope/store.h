// The results store: every run gpuscope made, kept in one SQLite file for history and
// comparisons (`--store FILE` on the measuring commands, `gpuscope report STORE...`).
//
// Plain records go in and come out; the store knows no metric. A run is one invocation of a
// command: the GPUs it saw (identity and limits), the configurations it measured, its
// measurements (name, value, SI unit, tags), telemetry time series and findings. What a
// measurement means is a convention between the command that writes it and the report that
// reads it; the names the report understands are listed in `names` below.
//
// Units are SI throughout: seconds, bytes, watts, joules, hertz, FLOP/s, degrees Celsius;
// ratios are fractions (0.79, not 79). Times of day are UTC seconds since the Unix epoch.
//
// Thread safety: a Store is one SQLite connection; use it from one thread at a time. Several
// processes may use the same file (WAL mode; writers wait up to a few seconds for each other).
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "gpuscope/analysis.h"
#include "gpuscope/status.h"

namespace gpuscope {
struct PeakRates;   // gpuscope/datasheet.h
struct SystemInfo;  // gpuscope/info.h
namespace burn {
struct Report;  // gpuscope/burn.h
}  // namespace burn
}  // namespace gpuscope

namespace gpuscope::store {

using RunId = std::int64_t;

// The schema this gpuscope writes. An older store is migrated when opened for writing (reading
// works on any version up to this one); a newer one is refused with data_error.
inline constexpr int kStoreSchemaVersion = 3;

// Datasheet peak rates of a GPU, kept with the run so that "% of peak" needs no table lookup
// when the report is drawn years later.
struct PeakRecord {
  std::string model;                          // "H100 SXM5 80GB"
  std::map<std::string, double> flops_per_s;  // by precision name ("bf16"); dense rates
  std::optional<double> memory_bytes_per_s;
  std::string source;      // datasheet title and URL, or the estimate's formula
  bool estimated = false;  // an estimate from SM count x clock, not a datasheet
};

// One GPU (or MIG instance) as a run saw it. Every reading is optional: absent = not reported.
struct GpuRecord {
  int gpu = 0;  // its number within the run (the NVML index); measurements refer to it
  std::string name;
  std::string uuid;
  std::optional<std::string> pci_bus_id;
  std::optional<std::string> compute_capability;  // "9.0"
  std::optional<int> sm_count;
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<double> power_limit_w, power_default_limit_w, power_min_limit_w, power_max_limit_w;
  std::optional<double> sm_clock_max_hz, memory_clock_max_hz;
  std::optional<double> temperature_slowdown_c;
  std::optional<int> pcie_generation_max, pcie_width_max;
  std::optional<PeakRecord> peak;
  nlohmann::json details = nlohmann::json::object();  // anything else (e.g. its `info` record)
};

// A named set of parameters that measurements were taken under ("resnet50 train amp bs=256").
struct Configuration {
  std::string name;  // unique within the run
  nlohmann::json params = nlohmann::json::object();
};

struct RunRecord {
  RunId id = 0;      // set by the store; ignored by write_run
  std::string kind;  // the command: "info", "burn", "bench", "sweep", "monitor", "run", ...
  double started_unix_s = 0;
  std::optional<double> ended_unix_s;  // absent while running, or if it never finished
  std::string host;
  std::string command_line;
  std::string gpuscope_version;
  std::optional<std::string> driver_version;        // "580.159.04"
  std::optional<std::string> cuda_driver_version;   // what the driver supports, "13.0"
  std::optional<std::string> cuda_runtime_version;  // what gpuscope was built with
  std::optional<std::string> torch_version;         // workloads that ran LibTorch
  std::optional<std::string> label;                 // a person's name for it (schema 2)
  std::vector<GpuRecord> gpus;
  std::vector<Configuration> configurations;
};

// One number. A skipped measurement ("fp8 is not supported before Ada", "out of memory") has no
// value and says why in tags["skipped"]: partial failure is data.
struct Measurement {
  std::optional<int> gpu;     // absent: about the host or the whole run
  std::string configuration;  // a Configuration::name of the run, or empty
  std::string name;           // see `names`
  std::optional<double> value;
  std::string unit;  // SI symbol: "FLOP/s" "B/s" "B" "W" "J" "s" "Hz" "degC" "1/s" "1"
  nlohmann::json tags = nlohmann::json::object();  // what distinguishes rows: precision, mode...
};

// One telemetry reading; add_telemetry takes them in any order.
struct TelemetrySample {
  int gpu = 0;
  double t_s = 0;      // seconds since the run's started_unix_s
  std::string metric;  // see names::telemetry_unit()
  double value = 0;
};

// One metric of one GPU over time, as loaded (sorted by time).
struct TelemetrySeries {
  int gpu = 0;
  std::string metric;
  std::string unit;
  std::vector<double> t_s;
  std::vector<double> values;
};

// Findings are gpuscope's one findings model (gpuscope/analysis.h), kept whole: id, severity,
// title, evidence, fix, expected gain, confidence, subjects and GPU (schema 3; older stores give
// id, severity, title and GPU).
using analysis::Finding;
using analysis::Severity;
using analysis::severity_name;

// The finding of a GPU that stopped answering during a recording, whichever way it was recorded
// (the monitor's store, its JSON lines): `t_s` seconds into the recording when known, the
// driver's words in `message` when any.
Finding gpu_lost_finding(std::optional<int> gpu, std::optional<double> t_s,
                         std::string_view message);

// Everything about one run.
struct RunData {
  RunRecord run;
  std::vector<Measurement> measurements;
  std::vector<TelemetrySeries> telemetry;
  std::vector<Finding> findings;
  std::string source;  // where it was read from ("results.db", "burn.jsonl"); not stored
};

struct RunSummary {
  RunId id = 0;
  std::string kind;
  double started_unix_s = 0;
  std::optional<double> ended_unix_s;
  std::string host;
  std::optional<std::string> label;
  std::vector<std::string> gpu_names;
  std::int64_t measurement_count = 0;
};

struct StoreOptions {
  // Never creates, migrates or writes; the file must exist. Any schema up to the current one.
  bool read_only = false;
  // The store may not grow beyond this many bytes: writes past it fail with io_error, as on a
  // full disk. Absent: no limit.
  std::optional<std::uint64_t> max_size_bytes;
};

namespace detail {
class Database;
}

class Store {
 public:
  // Opens the store at `path`, creating it (and nothing else: not its directory) when missing.
  // A store of an older schema is migrated, all steps in one transaction.
  // Fails with:
  //   io_error    the file cannot be created, opened or written (no such directory,
  //               permissions, disk full)
  //   not_found   read_only and there is no such file
  //   data_error  not a SQLite file, a corrupt one, a SQLite file that is not a gpuscope store,
  //               or a store written by a newer gpuscope
  // A file that fails to open is left exactly as it was (the checks read before anything is
  // written, and a foreign file is never handed to SQLite in write mode).
  static Result<std::unique_ptr<Store>> open(const std::string& path,
                                             const StoreOptions& options = {});
  ~Store();
  Store(const Store&) = delete;
  Store& operator=(const Store&) = delete;

  const std::string& path() const { return path_; }
  int schema_version() const { return schema_version_; }  // of the file, as opened

  // Writes the run, its GPUs and configurations in one transaction; returns the new run's id.
  // REQUIRES: GPU numbers and configuration names unique within the run (invalid_argument).
  Result<RunId> write_run(const RunRecord& run);
  // Sets ended_unix_s. not_found when there is no such run.
  Status finish_run(RunId run, double ended_unix_s);
  // Each call is one transaction: all rows are written or none.
  // REQUIRES: every configuration named is one of the run's (invalid_argument).
  Status add_measurements(RunId run, const std::vector<Measurement>& rows);
  Status add_telemetry(RunId run, const std::vector<TelemetrySample>& samples);
  Status add_findings(RunId run, const std::vector<Finding>& findings);
  // A whole run at once (imports, tests): one transaction. Returns the new id.
  Result<RunId> write(const RunData& data);

  // Newest first.
  Result<std::vector<RunSummary>> list_runs() const;
  // not_found when there is no such run. source is set to path().
  Result<RunData> load_run(RunId run) const;

 private:
  Store(std::string path, std::unique_ptr<detail::Database> db, int schema_version);
  Status write_run_rows(const RunRecord& run, RunId* id);
  Status write_measurement_rows(RunId run, const std::vector<Measurement>& rows);
  Status write_telemetry_rows(RunId run, const std::vector<TelemetrySample>& samples);
  Status write_finding_rows(RunId run, const std::vector<Finding>& findings);

  std::string path_;
  std::unique_ptr<detail::Database> db_;
  int schema_version_ = 0;
};

// The datasheet's peak rates for a GPU as a run describes it (gpuscope/datasheet.h: the table
// entry, else an estimate from SM count and clock, marked estimated); nullopt when neither.
std::optional<PeakRecord> datasheet_peak(const GpuRecord& gpu);
// The same rates as a record ("bf16" -> FLOP/s; the notes are not kept).
PeakRecord peak_record(const PeakRates& peak);

// ---------------------------------------------------------------------------------------------
// Result files: runs kept as JSON instead of SQLite (fixtures, exchange), and the JSON outputs
// of gpuscope commands read as runs.

// Bumped when a field of the records format is renamed, removed or changes meaning.
inline constexpr int kRecordsSchemaVersion = 1;

// {"kind": "gpuscope.records", "schema_version": 1, "runs": [{"run": {...}, "gpus": [...],
//  "configurations": [...], "measurements": [...], "telemetry": [...], "findings": [...]}]}.
nlohmann::json runs_to_json(const std::vector<RunData>& runs);
// data_error (with the offending field) when the document does not follow the format.
Result<std::vector<RunData>> runs_from_json(const nlohmann::json& document);

// The runs in a gpuscope JSON document: a records document, `info --json` or `burn --json`
// output. This is how a command that prints JSON also writes `--store FILE`:
//   store->write(runs_from_document(burn_json)->front()) (after setting its times and command).
// data_error for another kind of document.
Result<std::vector<RunData>> runs_from_document(const nlohmann::json& document);

// What `gpuscope info` collected as one "info" run: the machine and its driver versions, a GPU
// record per GPU (identity, limits, peak rates, its whole info record in details), and findings
// for a GPU throttled at rest and for a GPU that could not be read. Its times and command line
// are the caller's to set.
RunData info_to_run(const SystemInfo& info);

// What `gpuscope burn` measured as one "burn" run: a GPU record per target (a GPU or a MIG
// instance) whose peak rates are the ones burn compared with (from each row's fraction of
// peak), the GEMM rates, errors and telemetry aggregates per precision, the memory, host-link
// and overlap rates as measurements, and findings for errors, failed or interrupted workers and
// burn's warnings. Its times are the caller's to set.
RunData burn_to_run(const burn::Report& report);

// Reads the runs in a file, whatever it holds: a records document, `gpuscope info --json`
// output (one "info" run with its GPUs), `gpuscope burn --json` output (one "burn" run, a GPU
// per target), `gpuscope monitor --jsonl` files (one "monitor" run with its telemetry), or the
// JSON lines of gpuscope-burn-worker (protocol version 1: one "burn" run).
// io_error when unreadable, data_error when none of these.
Result<std::vector<RunData>> read_result_file(const std::string& path);

// ---------------------------------------------------------------------------------------------
// Measurement and telemetry names that `gpuscope report` understands. A command may write any
// other name; the report lists those in a generic table.
namespace names {

// burn, per GPU and precision. Tags: {"precision": "bf16"}, plus "stat" ("median", "min",
// "max", "mean") on gemm_flop_per_s, "windows" (count) and "span_s" (the timed span, seconds)
// on the median.
inline constexpr char kGemmFlopPerS[] = "gemm_flop_per_s";               // FLOP/s
inline constexpr char kGemmWindowFlopPerS[] = "gemm_window_flop_per_s";  // + "window", "t_s"
inline constexpr char kGemmErrors[] = "gemm_errors";  // count: mismatches + NaN + Inf + ref
inline constexpr char kTemperatureMax[] = "temperature_max_c";      // degC, while it ran
inline constexpr char kTemperatureStart[] = "temperature_start_c";  // degC, as its span began
inline constexpr char kThrottleSeconds[] = "throttle_s";     // s, + "reason" ("sw_power_cap")
inline constexpr char kPowerAvg[] = "power_avg_w";           // W
inline constexpr char kEnergy[] = "energy_j";                // J
inline constexpr char kFlopPerJoule[] = "flop_per_j";        // FLOP/J
inline constexpr char kSmClockAvg[] = "sm_clock_avg_hz";     // Hz
inline constexpr char kSmActivityAvg[] = "sm_activity_avg";  // 1
inline constexpr char kTensorActivityAvg[] = "tensor_activity_avg";  // 1
// burn, per GPU: device memory (+ "kernel": copy/read/write/memcpy), host link (+ "direction":
// h2d/d2h/bidirectional, "memory": pinned/pageable, "size_bytes"), copy/compute overlap
// (+ "memory"; a ratio, 1 = fully overlapped).
inline constexpr char kMemoryBytesPerS[] = "memory_bytes_per_s";
inline constexpr char kHostLinkBytesPerS[] = "host_link_bytes_per_s";
inline constexpr char kOverlapEfficiency[] = "overlap_efficiency";

// bench and sweep, per GPU. Tags: "model", "task" (train/infer), "mode" (fp32, tf32, amp_fp16,
// amp_bf16, fp16, ...), "batch_size"; in a sweep also "power_limit_w". Loss rows add "step".
inline constexpr char kSamplesPerS[] = "samples_per_s";            // 1/s
inline constexpr char kPeakMemory[] = "peak_memory_bytes";         // B
inline constexpr char kEnergyPerSample[] = "energy_per_sample_j";  // J
inline constexpr char kLoss[] = "loss";                            // 1

// Telemetry metrics (TelemetrySample::metric) and their units.
inline constexpr char kPowerW[] = "power_w";                 // W
inline constexpr char kSmClockHz[] = "sm_clock_hz";          // Hz
inline constexpr char kMemoryClockHz[] = "memory_clock_hz";  // Hz
inline constexpr char kTemperatureC[] = "temperature_c";     // degC
inline constexpr char kMemoryTemperatureC[] = "memory_temperature_c";
inline constexpr char kSmActivity[] = "sm_activity";             // 1 (fraction of time, GPM/DCGM)
inline constexpr char kTensorActivity[] = "tensor_activity";     // 1
inline constexpr char kDramActivity[] = "dram_activity";         // 1
inline constexpr char kGpuUtilization[] = "gpu_utilization";     // 1 (NVML's kernel duty cycle)
inline constexpr char kMemoryUsedBytes[] = "memory_used_bytes";  // B
inline constexpr char kClockEventReasons[] = "clock_event_reasons";  // NVML bitmask

// The unit of a known telemetry metric; "" for one this list does not know.
std::string_view telemetry_unit(std::string_view metric);

}  // namespace names
}  // namespace gpuscope::store
