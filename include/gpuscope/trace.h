// Reading what libgpuscope_inject.so recorded: one record file per process in a run folder
// (docs/trace-records.md), turned into plain structs. Times are nanoseconds on the clock the
// header names (CLOCK_MONOTONIC); sizes are bytes.
#pragma once

#include <array>
#include <cstdint>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "gpuscope/monitor.h"
#include "gpuscope/status.h"

namespace gpuscope::trace {

// The record-file format version this reader understands (the header's "version").
inline constexpr int kRecordFormatVersion = 1;

struct WindowSettings {
  std::optional<uint64_t> skip_steps, steps;
  std::optional<double> skip_s, duration_s;
};

struct TraceHeader {
  int version = 0;
  int64_t pid = 0, ppid = 0;
  std::string host, exe;
  std::vector<std::string> cmdline;
  std::string started_by;           // "nvtx", "cuda" (the entry point that ran first) or "fork"
  std::string clock;                // "CLOCK_MONOTONIC"
  uint64_t origin_ns = 0;           // when the library started in the process, on `clock`
  uint64_t origin_realtime_ns = 0;  // the same moment on CLOCK_REALTIME
  WindowSettings window;
  std::string step_mark;
  std::string kinds;       // CUPTI kinds recorded in the window: "kernel,memcpy,..."
  uint64_t max_bytes = 0;  // 0: no cap
  uint64_t flush_ms = 0;
  std::vector<std::string> config_errors;
};

struct CuptiState {
  // "not_loaded" (the CUDA driver never loaded the library: no CUDA use, or no
  // CUDA_INJECTION64_PATH), "ok", "unavailable", "taken_by_another_subscriber".
  std::string status = "not_loaded";
  std::string reason;
  uint32_t version = 0;             // CUPTI's API version at run time
  std::vector<std::string> errors;  // "cuptiActivityEnable kernel: CUPTI_ERROR_..."
};

struct KernelRecord {
  uint64_t start_ns = 0, end_ns = 0;
  uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  uint32_t name = 0;  // ProcessTrace::name()
  std::array<uint32_t, 3> grid{}, block{};
  uint32_t registers_per_thread = 0;
  uint32_t static_shared_bytes = 0, dynamic_shared_bytes = 0;
  uint32_t graph_id = 0;  // 0: not launched from a CUDA graph
  uint64_t graph_node_id = 0;
};

struct CopyRecord {
  uint64_t start_ns = 0, end_ns = 0;
  uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  uint64_t bytes = 0;
  std::string kind;        // "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", ...
  std::string src_memory;  // "pageable", "pinned", "device", "managed", ...
  std::string dst_memory;
  bool async = false;
  std::optional<uint32_t> src_device, dst_device;  // peer copies
  uint32_t graph_id = 0;
};

struct MemsetRecord {
  uint64_t start_ns = 0, end_ns = 0;
  uint32_t device = 0, context = 0, stream = 0, correlation = 0;
  uint64_t bytes = 0;
  std::string memory;
  uint32_t graph_id = 0;
};

struct ApiCall {
  bool runtime = true;  // false: driver API
  uint64_t start_ns = 0, end_ns = 0;
  uint32_t tid = 0;  // as CUPTI reports the thread
  uint32_t correlation = 0;
  uint32_t name = 0;  // "cudaLaunchKernel_v7000"
  uint32_t cbid = 0;
  uint32_t result = 0;  // the call's return code; 0 = success
};

struct SyncRecord {
  uint64_t start_ns = 0, end_ns = 0;
  std::string type;  // "stream_synchronize", "event_synchronize", "context_synchronize", ...
  uint32_t correlation = 0;
  std::optional<uint32_t> context, stream, event;
};

struct OverheadRecord {
  uint64_t start_ns = 0, end_ns = 0;
  std::string kind;  // "command_buffer_full" (the launch queue ran full), "cupti_buffer_flush", ...
  std::optional<uint32_t> tid;
  std::optional<uint32_t> device, context, stream;
  std::optional<uint32_t> queue_length;
};

struct NvtxMark {
  uint64_t ts_ns = 0;
  uint32_t tid = 0;
  uint32_t name = 0;
  uint32_t domain = 0;  // 0: the default domain
  uint32_t category = 0;
  std::optional<double> payload;
};

struct NvtxRange {
  uint64_t start_ns = 0, end_ns = 0;
  uint32_t tid = 0;                 // the thread that started it
  std::optional<uint32_t> end_tid;  // start/end ranges ended on another thread
  uint32_t name = 0;
  std::optional<uint32_t> depth;  // push/pop ranges: 0 = outermost in its thread and domain
  uint32_t domain = 0;
};

struct StepMark {
  uint64_t n = 0;  // 0-based: mark n ends step n
  uint64_t ts_ns = 0;
  uint32_t tid = 0;
};

struct ThreadInfo {
  uint32_t tid = 0;
  std::string comm;       // the OS thread name when the thread first recorded
  std::string nvtx_name;  // nvtxNameOsThread
};

// The recording window: CUPTI records exist only between begin and end.
struct TraceWindow {
  std::optional<uint64_t> begin_ns, end_ns;
  std::optional<uint64_t> first_step;  // the first step inside
  std::optional<uint64_t> end_step;    // the first step after (steps [first_step, end_step))
  std::string begin_reason;            // "always", "steps", "time"
  std::string end_reason;              // "steps", "duration", "steps_stalled", "exit", "signal"
  // Opened on time (no step marked by then), the program then marked steps: the traced steps
  // begin here, at step `steps_step`; the recording before is warm-up (compilation, loading).
  std::optional<uint64_t> steps_begin_ns, steps_step;
  std::optional<uint64_t> enable_ns, disable_ns;  // what turning CUPTI on and off cost
  // After the close, CUPTI recorded on until the GPU had finished the window's work: when that
  // was, and "done" or "timeout" (the GPU was given up on).
  std::optional<uint64_t> gpu_end_ns;
  std::string gpu_end_status;
};

struct ProcessTrace {
  std::filesystem::path path;
  TraceHeader header;
  CuptiState cupti;
  std::vector<KernelRecord> kernels;
  std::vector<CopyRecord> copies;
  std::vector<MemsetRecord> memsets;
  std::vector<ApiCall> api_calls;
  std::vector<SyncRecord> syncs;
  std::vector<OverheadRecord> overheads;
  std::vector<NvtxMark> marks;
  std::vector<NvtxRange> ranges;
  std::vector<StepMark> steps;
  std::vector<ThreadInfo> threads;
  std::map<uint32_t, uint32_t> domains;  // domain id -> name
  std::vector<uint64_t> forks_ns;        // when this process forked (children name it as ppid)
  TraceWindow window;
  std::vector<int> signals;  // SIGINT/SIGTERM seen (the records reached the file)
  std::map<std::string, uint64_t> dropped_by_kind;  // past GPUSCOPE_TRACE_MAX_BYTES
  uint64_t dropped_cupti = 0;                       // records CUPTI lost (no buffer free)
  bool ended = false;  // the "end" line is there: the process finished normally
  std::string end_reason;
  bool truncated = false;      // no "end" line: the process was killed or is still running
  size_t malformed_lines = 0;  // lines that are not JSON objects (a cut last line counts)
  size_t unknown_records = 0;  // record types this reader does not know (newer writer)
  std::unordered_map<uint32_t, std::string> names;  // the file's string table

  // The string `id` names; "" if the file never defined it.
  std::string_view name(uint32_t id) const;
  uint64_t dropped_total() const;
};

// Reads one record file. A file cut anywhere (SIGKILL) is read up to its last whole line with
// `truncated` set. Fails: io_error (unreadable), data_error (no header, or a format version
// other than kRecordFormatVersion).
Result<ProcessTrace> read_process_trace(const std::filesystem::path& file);

// Every record file (gpuscope-trace-*.jsonl) in `dir`, in pid order. Fails: io_error (no such
// folder), or the first file that fails.
Result<std::vector<ProcessTrace>> read_trace_dir(const std::filesystem::path& dir);

}  // namespace gpuscope::trace

// ---------------------------------------------------------------------------------------------
// `gpuscope trace -- CMD`: run a command with the injection library (and, for Python, the step
// shim), sample the GPUs and the command's threads while it runs, then read what was recorded
// and write the run folder: trace.json (Chrome Trace Event format), summary.json, telemetry.jsonl
// and the record files.

namespace gpuscope::trace {

struct TraceOptions {
  std::vector<std::string> command;  // run directly, no shell
  std::filesystem::path out_dir;     // created; refused when it holds a trace already
  // The recording window: it opens after skip_steps steps, or after skip_s seconds when the
  // program marks no steps, and stays open for `steps` steps (or duration_s seconds).
  // whole_run: open from the start to the end (every kernel of the run is recorded).
  std::uint64_t skip_steps = 10;
  double skip_s = 20;
  std::uint64_t steps = 50;
  double duration_s = 10;
  bool whole_run = false;
  std::optional<std::string> step_range;  // a user's NVTX range that spans one step
  bool shim = true;                       // put the Python step shim first on PYTHONPATH
  // Record only CUPTI's kinds that cost per kernel launch (kernels, copies, memsets, overhead),
  // not those that cost on every CUDA call (synchronizations, runtime and driver calls): for a
  // launch-bound program, whose CUDA calls the per-call kinds slow (bench/RESULTS.md).
  bool light = false;
  std::vector<std::string> gpus;  // sampled GPUs (empty: all)
  int interval_ms = 100;
  std::size_t max_trace_events = 1'000'000;  // trace.json's cap
  bool command_stdout_to_err = false;        // --json: stdout holds the JSON document alone
  // Where the injection library and the shim are (empty: found next to the gpuscope binary,
  // in the build tree, or through GPUSCOPE_INJECT_LIBRARY / GPUSCOPE_SHIM_DIR).
  std::string inject_library, shim_dir;
};

struct TraceRun {
  std::filesystem::path out_dir;
  telemetry::MonitorResult monitor;  // the command's exit and the GPUs' telemetry
  std::size_t processes_traced = 0;
  std::vector<std::string> notes;  // what a reader must know: CUPTI taken, killed, ...
  nlohmann::json summary;          // summary.json's content ("kind": "gpuscope.trace")
  std::size_t trace_events = 0, trace_events_dropped = 0;
};

// Checks the options and the folder before anything runs: invalid_argument (no command, a
// window of no length), io_error (a folder that cannot be made or written, or that holds a
// trace already), not_found (the injection library is missing). Then runs the command to its
// end (signals forwarded, as `monitor -- CMD`) and analyses what was recorded. A command that
// used no GPU still gets its summary, saying so.
Result<TraceRun> run_trace(const nvml::Session& session, const TraceOptions& options,
                           std::ostream& out, std::ostream& err);

// Analyses a trace folder again (without running anything): summary.json's content.
Result<nlohmann::json> analyse_trace_dir(const std::filesystem::path& dir,
                                         std::optional<std::string> step_range);

// The summary for people: the window, steps, GPU busy share, where GPU time went, idle gaps,
// copies, syncs, data wait, CPU by thread, and what was written.
void print_trace(const TraceRun& run, std::ostream& out);

inline constexpr int kTraceSchemaVersion = 1;

}  // namespace gpuscope::trace
