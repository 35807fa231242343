#include "trace/records.h"

#include <algorithm>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

namespace gpuscope::trace {
namespace detail {
namespace {

using nlohmann::json;

uint64_t u64(const json& r, const char* key, uint64_t fallback = 0) {
  const auto found = r.find(key);
  if (found == r.end() || !found->is_number()) return fallback;
  return found->is_number_float() ? static_cast<uint64_t>(found->get<double>())
                                  : found->get<uint64_t>();
}
uint32_t u32(const json& r, const char* key) {
  return static_cast<uint32_t>(u64(r, key));
}
std::optional<uint32_t> opt_u32(const json& r, const char* key) {
  if (!r.contains(key) || !r[key].is_number()) return std::nullopt;
  return u32(r, key);
}
std::string str(const json& r, const char* key) {
  const auto found = r.find(key);
  return found != r.end() && found->is_string() ? found->get<std::string>() : std::string();
}
std::array<uint32_t, 3> triple(const json& r, const char* key) {
  std::array<uint32_t, 3> out{};
  const auto found = r.find(key);
  if (found == r.end() || !found->is_array()) return out;
  for (size_t i = 0; i < 3 && i < found->size(); ++i) {
    if ((*found)[i].is_number()) out[i] = (*found)[i].get<uint32_t>();
  }
  return out;
}

ThreadInfo& thread(ProcessTrace& trace, uint32_t tid) {
  for (auto& t : trace.threads) {
    if (t.tid == tid) return t;
  }
  trace.threads.push_back(ThreadInfo{tid, "", ""});
  return trace.threads.back();
}

Status read_header(const json& r, TraceHeader& h) {
  if (!r.is_object() || str(r, "t") != "header") {
    return {Code::data_error, "not a gpuscope record file: the first line is not a header"};
  }
  h.version = static_cast<int>(u64(r, "version"));
  if (h.version != kRecordFormatVersion) {
    return {Code::data_error, "record format version " + std::to_string(h.version) +
                                  " (this reader knows " + std::to_string(kRecordFormatVersion) +
                                  ")"};
  }
  h.pid = r.value("pid", int64_t{0});
  h.ppid = r.value("ppid", int64_t{0});
  h.host = str(r, "host");
  h.exe = str(r, "exe");
  if (r.contains("cmdline") && r["cmdline"].is_array()) {
    for (const auto& arg : r["cmdline"]) {
      if (arg.is_string()) h.cmdline.push_back(arg.get<std::string>());
    }
  }
  h.started_by = str(r, "started_by");
  h.clock = str(r, "clock");
  h.origin_ns = u64(r, "origin_ns");
  h.origin_realtime_ns = u64(r, "origin_realtime_ns");
  if (r.contains("window") && r["window"].is_object()) {
    const json& w = r["window"];
    if (w.contains("skip_steps")) h.window.skip_steps = u64(w, "skip_steps");
    if (w.contains("steps")) h.window.steps = u64(w, "steps");
    if (w.contains("skip_s")) h.window.skip_s = w["skip_s"].get<double>();
    if (w.contains("duration_s")) h.window.duration_s = w["duration_s"].get<double>();
  }
  h.step_mark = str(r, "step_mark");
  h.kinds = str(r, "kinds");
  h.max_bytes = u64(r, "max_bytes");
  h.flush_ms = u64(r, "flush_ms");
  if (r.contains("config_errors") && r["config_errors"].is_array()) {
    for (const auto& e : r["config_errors"]) {
      if (e.is_string()) h.config_errors.push_back(e.get<std::string>());
    }
  }
  return {};
}

// The fields every record of work on the GPU carries (kernels, copies, memsets).
template <class GpuWork>
void read_gpu_work(const json& r, GpuWork& w) {
  w.start_ns = u64(r, "start");
  w.end_ns = u64(r, "end");
  w.device = u32(r, "dev");
  w.context = u32(r, "ctx");
  w.stream = u32(r, "stream");
  w.correlation = u32(r, "corr");
}

// One record after the header. False: a type this reader does not know.
bool apply(const json& r, ProcessTrace& trace) {
  const std::string type = str(r, "t");
  if (type == "name") {
    trace.names[u32(r, "id")] = str(r, "s");
  } else if (type == "kernel") {
    KernelRecord k;
    read_gpu_work(r, k);
    k.name = u32(r, "name");
    k.grid = triple(r, "grid");
    k.block = triple(r, "block");
    k.registers_per_thread = u32(r, "regs");
    k.static_shared_bytes = u32(r, "smem_static");
    k.dynamic_shared_bytes = u32(r, "smem_dynamic");
    k.graph_id = u32(r, "graph");
    k.graph_node_id = u64(r, "graph_node");
    trace.kernels.push_back(k);
  } else if (type == "memcpy") {
    CopyRecord c;
    read_gpu_work(r, c);
    c.bytes = u64(r, "bytes");
    c.kind = str(r, "kind");
    c.src_memory = str(r, "src");
    c.dst_memory = str(r, "dst");
    c.async = r.value("async", false);
    c.src_device = opt_u32(r, "src_dev");
    c.dst_device = opt_u32(r, "dst_dev");
    c.graph_id = u32(r, "graph");
    trace.copies.push_back(std::move(c));
  } else if (type == "memset") {
    MemsetRecord m;
    read_gpu_work(r, m);
    m.bytes = u64(r, "bytes");
    m.memory = str(r, "mem");
    m.graph_id = u32(r, "graph");
    trace.memsets.push_back(std::move(m));
  } else if (type == "runtime" || type == "driver") {
    ApiCall a;
    a.runtime = type == "runtime";
    a.start_ns = u64(r, "start");
    a.end_ns = u64(r, "end");
    a.tid = u32(r, "tid");
    a.correlation = u32(r, "corr");
    a.name = u32(r, "name");
    a.cbid = u32(r, "cbid");
    a.result = u32(r, "ret");
    trace.api_calls.push_back(a);
  } else if (type == "sync") {
    SyncRecord s;
    s.start_ns = u64(r, "start");
    s.end_ns = u64(r, "end");
    s.type = str(r, "type");
    s.correlation = u32(r, "corr");
    s.context = opt_u32(r, "ctx");
    s.stream = opt_u32(r, "stream");
    s.event = opt_u32(r, "event");
    trace.syncs.push_back(std::move(s));
  } else if (type == "overhead") {
    OverheadRecord o;
    o.start_ns = u64(r, "start");
    o.end_ns = u64(r, "end");
    o.kind = str(r, "kind");
    o.tid = opt_u32(r, "tid");
    o.device = opt_u32(r, "dev");
    o.context = opt_u32(r, "ctx");
    o.stream = opt_u32(r, "stream");
    o.queue_length = opt_u32(r, "queue_length");
    trace.overheads.push_back(std::move(o));
  } else if (type == "mark") {
    NvtxMark m;
    m.ts_ns = u64(r, "ts");
    m.tid = u32(r, "tid");
    m.name = u32(r, "name");
    m.domain = u32(r, "dom");
    m.category = u32(r, "cat");
    if (r.contains("payload") && r["payload"].is_number()) m.payload = r["payload"].get<double>();
    trace.marks.push_back(m);
  } else if (type == "range") {
    NvtxRange g;
    g.start_ns = u64(r, "start");
    g.end_ns = u64(r, "end");
    g.tid = u32(r, "tid");
    g.end_tid = opt_u32(r, "end_tid");
    g.name = u32(r, "name");
    g.depth = opt_u32(r, "depth");
    g.domain = u32(r, "dom");
    trace.ranges.push_back(g);
  } else if (type == "step") {
    trace.steps.push_back(StepMark{u64(r, "n"), u64(r, "ts"), u32(r, "tid")});
  } else if (type == "thread") {
    thread(trace, u32(r, "tid")).comm = str(r, "comm");
  } else if (type == "thread_name") {
    const uint32_t id = u32(r, "name");
    thread(trace, u32(r, "tid")).nvtx_name = std::string(trace.name(id));
  } else if (type == "domain") {
    trace.domains[u32(r, "dom")] = u32(r, "name");
  } else if (type == "category") {
    // Kept in the file for people; no analysis uses category names yet.
  } else if (type == "window_begin") {
    trace.window.begin_ns = u64(r, "ts");
    trace.window.first_step = u64(r, "step");
    trace.window.begin_reason = str(r, "reason");
    if (r.contains("enable_ns")) trace.window.enable_ns = u64(r, "enable_ns");
  } else if (type == "window_end") {
    trace.window.end_ns = u64(r, "ts");
    trace.window.end_step = u64(r, "step");
    trace.window.end_reason = str(r, "reason");
    if (r.contains("disable_ns")) trace.window.disable_ns = u64(r, "disable_ns");
  } else if (type == "window_gpu_end") {
    trace.window.gpu_end_ns = u64(r, "ts");
    trace.window.gpu_end_status = str(r, "status");
    if (r.contains("disable_ns")) trace.window.disable_ns = u64(r, "disable_ns");
  } else if (type == "cupti") {
    trace.cupti.status = str(r, "status");
    trace.cupti.reason = str(r, "reason");
    trace.cupti.version = u32(r, "version");
  } else if (type == "cupti_error") {
    trace.cupti.errors.push_back(str(r, "call") + " " + str(r, "kind") + ": " + str(r, "error"));
  } else if (type == "dropped") {
    if (str(r, "reason") == "cupti_buffers") {
      trace.dropped_cupti += u64(r, "count");
    } else {
      for (const auto& [key, value] : r.items()) {
        if (key == "t" || key == "reason" || key == "total" || !value.is_number()) continue;
        trace.dropped_by_kind[key] += value.get<uint64_t>();
      }
    }
  } else if (type == "signal") {
    trace.signals.push_back(static_cast<int>(r.value("sig", 0)));
  } else if (type == "fork") {
    trace.forks_ns.push_back(u64(r, "ts"));
  } else if (type == "end") {
    trace.ended = true;
    trace.end_reason = str(r, "reason");
  } else {
    return false;
  }
  return true;
}

}  // namespace

Status parse_records(std::string_view text, ProcessTrace& trace) {
  bool have_header = false;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    const bool cut = end == std::string_view::npos;
    if (cut) end = text.size();
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.empty()) continue;
    const json record = json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (record.is_discarded() || !record.is_object()) {
      if (!have_header) return {Code::data_error, "not a gpuscope record file: no header line"};
      ++trace.malformed_lines;
      continue;
    }
    try {
      if (!have_header) {
        GPUSCOPE_RETURN_IF_ERROR(read_header(record, trace.header));
        have_header = true;
      } else if (!apply(record, trace)) {
        ++trace.unknown_records;
      }
    } catch (const json::exception&) {  // a field of the wrong type
      ++trace.malformed_lines;
    }
  }
  if (!have_header) return {Code::data_error, "not a gpuscope record file: empty"};
  trace.truncated = !trace.ended;
  std::sort(trace.steps.begin(), trace.steps.end(),
            [](const StepMark& a, const StepMark& b) { return a.n < b.n; });
  return {};
}

}  // namespace detail

std::string_view ProcessTrace::name(uint32_t id) const {
  const auto found = names.find(id);
  return found == names.end() ? std::string_view() : std::string_view(found->second);
}

uint64_t ProcessTrace::dropped_total() const {
  uint64_t total = dropped_cupti;
  for (const auto& [kind, count] : dropped_by_kind) total += count;
  return total;
}

Result<ProcessTrace> read_process_trace(const std::filesystem::path& file) {
  std::ifstream in(file, std::ios::binary);
  if (!in) return Status{Code::io_error, "cannot read " + file.string()};
  std::stringstream buffer;
  buffer << in.rdbuf();
  ProcessTrace trace;
  trace.path = file;
  const Status parsed = detail::parse_records(buffer.str(), trace);
  if (!parsed.ok()) return parsed.with_context(file.string());
  return trace;
}

Result<std::vector<ProcessTrace>> read_trace_dir(const std::filesystem::path& dir) {
  std::error_code error;
  std::vector<std::filesystem::path> files;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    const std::string name = entry.path().filename().string();
    if (name.starts_with("gpuscope-trace-") && name.ends_with(".jsonl")) {
      files.push_back(entry.path());
    }
  }
  if (error) return Status{Code::io_error, "cannot list " + dir.string() + ": " + error.message()};
  std::vector<ProcessTrace> traces;
  for (const auto& file : files) {
    auto trace = read_process_trace(file);
    if (!trace.ok()) return trace.status();
    traces.push_back(std::move(trace).value());
  }
  std::sort(traces.begin(), traces.end(), [](const ProcessTrace& a, const ProcessTrace& b) {
    return a.header.pid != b.header.pid ? a.header.pid < b.header.pid : a.path < b.path;
  });
  return traces;
}

}  // namespace gpuscope::trace
