#include "trace/records.h"

#include <fmt/format.h>

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "common/json_fields.h"

namespace gpuscope::trace {
namespace detail {
namespace {

using gpuscope::detail::JsonFields;
using nlohmann::json;

// The fields of one record, named "<record type>.<field>" in problems. What the injection
// library always writes is required (absent: "missing"); what it writes only when set is
// optional, read with opt_*.
uint32_t u32(JsonFields& r, const char* key) {
  return r.count<uint32_t>(key);
}
uint64_t u64(JsonFields& r, const char* key) {
  return r.count<uint64_t>(key);
}
std::optional<uint32_t> opt_u32(JsonFields& r, const char* key) {
  return r.opt_unsigned<uint32_t>(key);
}
// A required [x, y, z] of unsigned integers (a grid or block shape).
std::array<uint32_t, 3> triple(JsonFields& r, const char* key) {
  std::array<uint32_t, 3> out{};
  if (!r.has(key)) r.fail(key, "missing");
  const json& list = r.list(key);
  if (list.size() != 3) {
    if (r.has(key)) r.fail(key, "expected a list of 3 non-negative integers");
    return out;
  }
  for (size_t i = 0; i < 3; ++i) {
    if (!list[i].is_number_unsigned() || list[i].get<uint64_t>() > UINT32_MAX) {
      r.fail(key, "expected a list of 3 non-negative integers");
      return out;
    }
    out[i] = list[i].get<uint32_t>();
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

Status read_header(const json& record, TraceHeader& h) {
  JsonFields r(record, "header");
  if (r.opt_text("t") != "header") {
    return {Code::data_error, "not a gpuscope record file: the first line is not a header"};
  }
  h.version = r.integer("version");
  GPUSCOPE_RETURN_IF_ERROR(r.status());
  if (h.version != kRecordFormatVersion) {
    return {Code::data_error, "record format version " + std::to_string(h.version) +
                                  " (this reader knows " + std::to_string(kRecordFormatVersion) +
                                  ")"};
  }
  h.pid = r.integer("pid");
  h.ppid = r.integer("ppid");
  h.host = r.text("host");
  h.exe = r.text("exe");
  h.cmdline = r.texts("cmdline");
  h.started_by = r.text("started_by");
  h.clock = r.text("clock");
  h.origin_ns = u64(r, "origin_ns");
  h.origin_realtime_ns = u64(r, "origin_realtime_ns");
  if (!r.has("window")) r.fail("window", "missing");
  JsonFields w(r.member("window"), "header.window");
  h.window.skip_steps = w.opt_unsigned<uint64_t>("skip_steps");
  h.window.steps = w.opt_unsigned<uint64_t>("steps");
  h.window.skip_s = w.opt_number("skip_s");
  h.window.duration_s = w.opt_number("duration_s");
  r.take_problem("window", w);
  h.step_mark = r.text("step_mark");
  h.kinds = r.text("kinds");
  h.max_bytes = u64(r, "max_bytes");
  h.flush_ms = u64(r, "flush_ms");
  h.config_errors = r.texts("config_errors");
  return r.status();
}

// The fields every record of work on the GPU carries (kernels, copies, memsets).
template <class GpuWork>
void read_gpu_work(JsonFields& r, GpuWork& w) {
  w.start_ns = u64(r, "start");
  w.end_ns = u64(r, "end");
  w.device = u32(r, "dev");
  w.context = u32(r, "ctx");
  w.stream = u32(r, "stream");
  w.correlation = u32(r, "corr");
}

// One record after the header, into `trace` only when it reads whole. Fails with data_error
// naming the record and field for a field missing or of the wrong type; false: a type this
// reader does not know.
Result<bool> apply(const json& record, ProcessTrace& trace) {
  JsonFields untyped(record, "record");
  const std::string type = untyped.text("t");
  GPUSCOPE_RETURN_IF_ERROR(untyped.status());
  JsonFields r(record, type);
  const auto keep = [&r](auto& list, auto&& item) {
    if (r.status().ok()) list.push_back(std::move(item));
  };
  if (type == "name") {
    const uint32_t id = u32(r, "id");
    std::string text = r.text("s");
    if (r.status().ok()) trace.names[id] = std::move(text);
  } else if (type == "kernel") {
    KernelRecord k;
    read_gpu_work(r, k);
    k.name = u32(r, "name");
    k.grid = triple(r, "grid");
    k.block = triple(r, "block");
    k.registers_per_thread = u32(r, "regs");
    k.static_shared_bytes = u32(r, "smem_static");
    k.dynamic_shared_bytes = u32(r, "smem_dynamic");
    k.graph_id = opt_u32(r, "graph").value_or(0);
    k.graph_node_id = r.opt_unsigned<uint64_t>("graph_node").value_or(0);
    keep(trace.kernels, k);
  } else if (type == "memcpy") {
    CopyRecord c;
    read_gpu_work(r, c);
    c.bytes = u64(r, "bytes");
    c.kind = r.text("kind");
    c.src_memory = r.text("src");
    c.dst_memory = r.text("dst");
    c.async = r.boolean("async");
    c.src_device = opt_u32(r, "src_dev");
    c.dst_device = opt_u32(r, "dst_dev");
    c.graph_id = opt_u32(r, "graph").value_or(0);
    keep(trace.copies, c);
  } else if (type == "memset") {
    MemsetRecord m;
    read_gpu_work(r, m);
    m.bytes = u64(r, "bytes");
    m.memory = r.text("mem");
    m.graph_id = opt_u32(r, "graph").value_or(0);
    keep(trace.memsets, m);
  } else if (type == "runtime" || type == "driver") {
    ApiCall a;
    a.runtime = type == "runtime";
    a.start_ns = u64(r, "start");
    a.end_ns = u64(r, "end");
    a.tid = u32(r, "tid");
    a.correlation = u32(r, "corr");
    a.name = u32(r, "name");
    a.cbid = u32(r, "cbid");
    a.result = opt_u32(r, "ret").value_or(0);
    keep(trace.api_calls, a);
  } else if (type == "sync") {
    SyncRecord s;
    s.start_ns = u64(r, "start");
    s.end_ns = u64(r, "end");
    s.type = r.text("type");
    s.correlation = u32(r, "corr");
    s.context = opt_u32(r, "ctx");
    s.stream = opt_u32(r, "stream");
    s.event = opt_u32(r, "event");
    keep(trace.syncs, s);
  } else if (type == "overhead") {
    OverheadRecord o;
    o.start_ns = u64(r, "start");
    o.end_ns = u64(r, "end");
    o.kind = r.text("kind");
    o.tid = opt_u32(r, "tid");
    o.device = opt_u32(r, "dev");
    o.context = opt_u32(r, "ctx");
    o.stream = opt_u32(r, "stream");
    o.queue_length = opt_u32(r, "queue_length");
    keep(trace.overheads, o);
  } else if (type == "mark") {
    NvtxMark m;
    m.ts_ns = u64(r, "ts");
    m.tid = u32(r, "tid");
    m.name = u32(r, "name");
    m.domain = opt_u32(r, "dom").value_or(0);
    m.category = opt_u32(r, "cat").value_or(0);
    m.payload = r.opt_number("payload");
    keep(trace.marks, m);
  } else if (type == "range") {
    NvtxRange g;
    g.start_ns = u64(r, "start");
    g.end_ns = u64(r, "end");
    g.tid = u32(r, "tid");
    g.end_tid = opt_u32(r, "end_tid");
    g.name = u32(r, "name");
    g.depth = opt_u32(r, "depth");
    g.domain = opt_u32(r, "dom").value_or(0);
    keep(trace.ranges, g);
  } else if (type == "step") {
    keep(trace.steps, StepMark{u64(r, "n"), u64(r, "ts"), u32(r, "tid")});
  } else if (type == "thread") {
    const uint32_t tid = u32(r, "tid");
    std::string comm = r.text("comm");
    if (r.status().ok()) thread(trace, tid).comm = std::move(comm);
  } else if (type == "thread_name") {
    const uint32_t tid = u32(r, "tid");
    const uint32_t id = u32(r, "name");
    if (r.status().ok()) thread(trace, tid).nvtx_name = std::string(trace.name(id));
  } else if (type == "domain") {
    const uint32_t domain = u32(r, "dom");
    const uint32_t name = u32(r, "name");
    if (r.status().ok()) trace.domains[domain] = name;
  } else if (type == "category") {
    // Kept in the file for people; no analysis uses category names yet.
  } else if (type == "window_begin" || type == "window_end") {
    const bool begin = type == "window_begin";
    const uint64_t ts = u64(r, "ts");
    const uint64_t step = u64(r, "step");
    std::string reason = r.text("reason");
    const std::optional<uint64_t> cost =
        r.opt_unsigned<uint64_t>(begin ? "enable_ns" : "disable_ns");
    if (r.status().ok()) {
      TraceWindow& w = trace.window;
      (begin ? w.begin_ns : w.end_ns) = ts;
      (begin ? w.first_step : w.end_step) = step;
      (begin ? w.begin_reason : w.end_reason) = std::move(reason);
      if (cost) (begin ? w.enable_ns : w.disable_ns) = cost;
    }
  } else if (type == "window_steps") {
    const uint64_t ts = u64(r, "ts");
    const uint64_t step = u64(r, "step");
    if (r.status().ok()) {
      trace.window.steps_begin_ns = ts;
      trace.window.steps_step = step;
    }
  } else if (type == "window_gpu_end") {
    const uint64_t ts = u64(r, "ts");
    std::string status = r.text("status");
    const std::optional<uint64_t> disable_ns = r.opt_unsigned<uint64_t>("disable_ns");
    if (r.status().ok()) {
      trace.window.gpu_end_ns = ts;
      trace.window.gpu_end_status = std::move(status);
      if (disable_ns) trace.window.disable_ns = disable_ns;
    }
  } else if (type == "cupti") {
    std::string status = r.text("status");
    std::string reason = r.opt_text("reason").value_or("");
    const uint32_t version = u32(r, "version");
    if (r.status().ok()) {
      trace.cupti.status = std::move(status);
      trace.cupti.reason = std::move(reason);
      trace.cupti.version = version;
    }
  } else if (type == "cupti_error") {
    keep(trace.cupti.errors, r.text("call") + " " + r.text("kind") + ": " + r.text("error"));
  } else if (type == "dropped") {
    // CUPTI's count, or what GPUSCOPE_TRACE_MAX_BYTES left out, per record kind.
    if (r.text("reason") == "cupti_buffers") {
      const uint64_t count = u64(r, "count");
      if (r.status().ok()) trace.dropped_cupti += count;
    } else {
      std::map<std::string, uint64_t> by_kind;
      for (const auto& [key, value] : record.items()) {
        if (key == "t" || key == "reason" || key == "total" || !value.is_number()) continue;
        by_kind[key] = u64(r, key.c_str());
      }
      if (r.status().ok()) {
        for (const auto& [kind, count] : by_kind) trace.dropped_by_kind[kind] += count;
      }
    }
  } else if (type == "signal") {
    keep(trace.signals, r.integer("sig"));
  } else if (type == "fork") {
    keep(trace.forks_ns, u64(r, "ts"));
  } else if (type == "end") {
    std::string reason = r.text("reason");
    if (r.status().ok()) {
      trace.ended = true;
      trace.end_reason = std::move(reason);
    }
  } else if (r.status().ok()) {
    return false;
  }
  GPUSCOPE_RETURN_IF_ERROR(r.status());
  return true;
}

}  // namespace

Status parse_records(std::string_view text, ProcessTrace& trace) {
  bool have_header = false;
  size_t pos = 0;
  size_t number = 0;  // of the line
  while (pos < text.size()) {
    ++number;
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
    if (!have_header) {
      GPUSCOPE_RETURN_IF_ERROR(read_header(record, trace.header));
      have_header = true;
      continue;
    }
    auto applied = apply(record, trace);
    if (!applied.ok()) return applied.status().with_context(fmt::format("line {}", number));
    if (!*applied) ++trace.unknown_records;
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
