// `gpuscope monitor`: a sampling session, its sinks, and a command observed for its whole life.
//
//   Sink                 where ticks go: CSV, JSON lines, the SQLite store, the Prometheus
//                        endpoint, the live terminal view; any combination at once
//   run_monitor          samples until the command ends (or Ctrl-C, --duration, 'q'), feeding
//                        every sink from one writer thread so a slow disk never delays sampling
//   print_summary /      the summary for people / for programs ("kind": "gpuscope.monitor.summary")
//   summary_to_json
#pragma once

#include <functional>
#include <iosfwd>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "gpuscope/nvml.h"
#include "gpuscope/process.h"
#include "gpuscope/status.h"
#include "gpuscope/telemetry.h"

namespace gpuscope::store {
struct RunRecord;
}

namespace gpuscope::telemetry {

// What every sink is told before the first tick.
struct SessionInfo {
  std::vector<SampledGpu> gpus;
  double started_unix_s = 0;
  double interval_s = 0;
  std::string host;
  std::vector<std::string> command;  // the observed command; empty without one
  std::string gpuscope_version;
  std::string command_line;  // how gpuscope itself was run ("gpuscope monitor --csv m.csv")
  std::optional<std::string> driver_version;       // "580.159.04"; absent when NVML does not say
  std::optional<std::string> cuda_driver_version;  // what the driver supports, "13.0"
};

// A destination for ticks. Called from one thread: begin, write per tick, end.
class Sink {
 public:
  virtual ~Sink() = default;
  virtual std::string describe() const = 0;  // "CSV file out.csv"
  virtual Status begin(const SessionInfo& session) = 0;
  virtual Status write(const Tick& tick) = 0;
  // Flushes and closes. `summary` is null when the session ends without one (the sink failed).
  virtual Status end(const Summary* summary) = 0;
};

// Files are created (or truncated) when opened and locked against a second gpuscope writing
// the same path: that one fails with io_error naming the file. Failures (no such directory,
// permissions, disk full) are io_error with the system's words; rows written before a failure
// stay in the file, and rows are flushed at least once a second.
//
// CSV: one row per GPU sample; columns unix_s, t_s, gpu, then every catalogue metric by name
// (SI units); an empty cell is a reading absent at that sample.
Result<std::unique_ptr<Sink>> open_csv_sink(const std::string& path);
// JSON lines, "schema_version": kJsonlSchemaVersion: a "session" line, then a "sample" line per
// GPU sample (metrics by name, processes when read), "gpu_lost" lines, and a last "summary".
inline constexpr int kJsonlSchemaVersion = 1;
Result<std::unique_ptr<Sink>> open_jsonl_sink(const std::string& path);

// A JSON-lines file read back: its session, every sample (lost GPUs as samples with `lost`), in
// file order, and the summary line if the session ended cleanly. io_error when unreadable,
// data_error (with the line number) when it is not such a file.
struct Recording {
  SessionInfo session;
  std::vector<GpuSample> samples;
  std::optional<nlohmann::json> summary;
};
Result<Recording> read_recording(const std::string& path);
// The one reader of the format, over its lines parsed (a null entry is a blank line, skipped):
// read_recording reads a file with it, the store a monitor run. The first line must be the
// session; lines of other types are skipped. data_error naming the line ("line 3: ...") when a
// line does not follow the format or the session is of another kind or a newer schema.
Result<Recording> recording_from_lines(const std::vector<nlohmann::json>& lines);
// The SQLite results store (store.h): one run of kind "monitor" with its GPUs; samples are
// committed at least every kStoreCommitInterval, so a SIGKILL loses at most that much. Several
// monitors may write one store at once (each writes its own run). not_supported when this
// gpuscope was built without SQLite.
inline constexpr double kStoreCommitIntervalS = 0.5;
Result<std::unique_ptr<Sink>> open_store_sink(const std::string& path);
// The store's run for a monitoring session: kind "monitor", its start, host, versions, command
// line and a GPU record per sampled GPU. The store sink writes it live; the store's import of a
// --jsonl recording starts from it.
store::RunRecord monitor_run_record(const SessionInfo& session);

// The Prometheus text exposition (format 0.0.4) of the latest readings, with dcgm-exporter's
// metric names and labels (gpu, UUID, pci_bus_id, device, modelName, Hostname). Metrics a GPU
// does not report, and GPUs that are lost, are left out.
class PrometheusExporter : public Sink {
 public:
  PrometheusExporter();
  ~PrometheusExporter() override;
  std::string describe() const override { return "Prometheus endpoint"; }
  Status begin(const SessionInfo& session) override;
  Status write(const Tick& tick) override;
  Status end(const Summary* summary) override;
  // Safe from any thread.
  std::string render() const;

 private:
  struct State;
  std::unique_ptr<State> state_;
};

// The HTTP server of GET (and HEAD) /metrics, on its own threads: libmicrohttpd's event loop,
// which serves every connection at once, and a watchdog. Each connection carries one request
// ("Connection: close"). Other paths answer 404, other methods 405, malformed requests 4xx.
// A client that stalls the endpoint is cut off, and the resources a flood of connections can
// take are bounded, by the limits below.
class MetricsServer {
 public:
  // Connections held at once, over all clients; more wait in the kernel's listen queue.
  static constexpr unsigned kMaxConnections = 64;
  // Connections held at once from one client address; more are closed as they arrive.
  static constexpr unsigned kMaxConnectionsPerClient = 16;
  // A connection on which nothing arrives for this long is closed.
  static constexpr unsigned kIdleTimeoutS = 2;
  // A connection is closed this long after it was accepted, whatever it is doing: a client
  // trickling its request a byte at a time cannot hold a connection longer.
  static constexpr unsigned kConnectionDeadlineS = 5;
  // Memory for one connection's request (line and headers) and the response's headers; a
  // longer request is answered 431 or 414, or closed.
  static constexpr std::size_t kConnectionMemoryBytes = 16 * 1024;

  // `address` is "[HOST:]PORT" ("9400", "0.0.0.0:9400", "[::1]:9400"); HOST defaults to
  // 127.0.0.1 so nothing is exposed beyond this machine unless asked; PORT 0 picks a free port.
  // Fails with invalid_argument for a malformed address, io_error when it cannot bind.
  static Result<std::unique_ptr<MetricsServer>> start(const std::string& address,
                                                      const PrometheusExporter& exporter);
  ~MetricsServer();  // stops serving
  MetricsServer(const MetricsServer&) = delete;
  MetricsServer& operator=(const MetricsServer&) = delete;
  std::string bound_address() const;  // "127.0.0.1:9400"
  int port() const;

 private:
  struct State;
  explicit MetricsServer(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

enum class View {
  none,   // only the sinks (and the summary at the end)
  lines,  // a line per GPU per second on `out`, like nvidia-smi dmon
  live,   // the ncurses live view (needs a terminal)
};

struct MonitorOptions {
  SamplerOptions sampler;
  std::optional<std::string> csv_path, jsonl_path, store_path;
  std::optional<std::string> listen;  // "[HOST:]PORT"
  View view = View::none;
  std::optional<double> duration_s;  // only without a command
  // Run directly (no shell), sampled for its whole life; SIGINT/SIGTERM are forwarded to it.
  std::vector<std::string> command;
  // The command's stdout lines go to `err` instead of being inherited: `monitor --json -- CMD`
  // keeps stdout for the JSON document alone, so that it can be piped.
  bool command_stdout_to_err = false;
  // Set in the command's environment on top of this process's (trace's injection library).
  std::vector<std::pair<std::string, std::string>> command_env;
  // Called about every `while_running_interval_s` on the session's thread while the command
  // runs, with its pid (trace reads its threads' CPU time); not while the live view is shown.
  std::function<void(pid_t command_pid)> while_running;
  double while_running_interval_s = 0.5;
  // How gpuscope was run, recorded with the session (the store's run). Empty: "gpuscope
  // monitor", with " -- CMD ARGS" when there is a command.
  std::string command_line;
};

struct CommandOutcome {
  std::vector<std::string> argv;
  unsigned pid = 0;  // 0 when it could not start
  ProcessExit exit;
  // Why it could not start although found (an unknown binary format): then exit.exit_code is
  // what a shell answers (command_start_exit_code in process.h) and the session's data is kept.
  std::optional<std::string> start_error;
};

struct MonitorResult {
  Summary summary;
  std::optional<CommandOutcome> command;
  // Sinks that failed during the session ("CSV file out.csv: ... No space left on device;
  // the 1234 rows written before are kept"). The others, the command, and a session without a
  // command went on: a failed sink never ends a session.
  std::vector<std::string> sink_failures;
  bool interrupted = false;              // ended by SIGINT/SIGTERM (without a command)
  std::optional<std::string> listening;  // where /metrics was served
};

// Whether `argv` can be started (check_program in process.h): not_found / permission_denied
// with "cannot run ..." otherwise. run_monitor checks it too; callers answer like a shell
// with command_start_exit_code (127 / 126).
Status check_command(const std::vector<std::string>& argv);

// Runs a session. Fails before anything runs with invalid_argument (options, GPUs), not_found /
// permission_denied (the command does not exist / is not executable), io_error (a sink cannot
// be created, is locked by another monitor, the port cannot be bound), not_supported (a sink
// this build lacks). Once sampling has started it returns a MonitorResult: a command always
// runs to its end, whatever happens to the sinks or GPUs; a command found but refused by the
// system at its start (an unknown binary format) is an outcome with its start_error. As soon as
// /metrics is bound, "gpuscope: serving /metrics on http://ADDR:PORT/metrics" goes to `err` (the
// port chosen for PORT 0 is known then). Warnings (a GPU lost, a sink that failed) go to `err` as
// they happen (after the live view closes, with the live view).
Result<MonitorResult> run_monitor(const nvml::Session& session, const MonitorOptions& options,
                                  std::ostream& out, std::ostream& err);

// The summary for people: per GPU energy (J and Wh), average and peak power, peak memory,
// time-weighted SM/tensor activity, the NVML duty cycle (labelled as such), time throttled by
// reason, whether the command used it; then the sampler's own cost.
void print_summary(const MonitorResult& result, std::ostream& out);
// {"kind": "gpuscope.monitor.summary", "schema_version": 1, ...}; units in the key names.
nlohmann::json summary_to_json(const MonitorResult& result);

}  // namespace gpuscope::telemetry
