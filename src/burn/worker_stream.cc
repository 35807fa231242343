#include "burn/worker_stream.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

namespace gpuscope::burn::detail {
namespace {

using json = nlohmann::json;

constexpr int kProblemsKept = 5;

// Reads fields of one object without exceptions; the first missing or mistyped field makes the
// whole line bad (`missing` names it).
class Fields {
 public:
  explicit Fields(const json& object) : object_(object) {}

  const json* find(const char* key) const {
    const auto it = object_.find(key);
    return it == object_.end() || it->is_null() ? nullptr : &*it;
  }
  double number(const char* key, double fallback = 0) {
    const json* v = find(key);
    if (v == nullptr || !v->is_number()) {
      fail(key);
      return fallback;
    }
    return v->get<double>();
  }
  std::optional<double> optional_number(const char* key) const {
    const json* v = find(key);
    if (v == nullptr || !v->is_number()) return std::nullopt;
    return v->get<double>();
  }
  std::uint64_t count(const char* key) {
    const json* v = find(key);
    if (v == nullptr || !v->is_number_unsigned()) {
      fail(key);
      return 0;
    }
    return v->get<std::uint64_t>();
  }
  int integer(const char* key) {
    const json* v = find(key);
    if (v == nullptr || !v->is_number_integer()) {
      fail(key);
      return 0;
    }
    return v->get<int>();
  }
  bool boolean(const char* key, bool fallback = false) {
    const json* v = find(key);
    if (v == nullptr || !v->is_boolean()) {
      fail(key);
      return fallback;
    }
    return v->get<bool>();
  }
  std::string text(const char* key) {
    const json* v = find(key);
    if (v == nullptr || !v->is_string()) {
      fail(key);
      return std::string();
    }
    return v->get<std::string>();
  }
  std::string optional_text(const char* key) const {
    const json* v = find(key);
    return v != nullptr && v->is_string() ? v->get<std::string>() : std::string();
  }
  Precision precision(const char* key = "precision") {
    const std::optional<Precision> p = parse_precision(text(key));
    if (!p) fail(key);
    return p.value_or(Precision::fp32);
  }
  Fields object(const char* key) {
    const json* v = find(key);
    if (v == nullptr || !v->is_object()) {
      fail(key);
      return Fields(empty_);
    }
    return Fields(*v);
  }

  const std::string& missing() const { return missing_; }
  void fail(const char* key) {
    if (missing_.empty()) missing_ = key;
  }

 private:
  static inline const json empty_ = json::object();
  const json& object_;
  std::string missing_;
};

std::string describe_algorithm(Fields a) {
  const std::optional<double> id = a.optional_number("algo_id");
  if (!id) return {};
  std::string text = fmt::format("algo {:.0f}", *id);
  if (const auto tile = a.optional_number("tile_id")) text += fmt::format(" tile {:.0f}", *tile);
  if (const auto stages = a.optional_number("stages_id")) {
    text += fmt::format(" stages {:.0f}", *stages);
  }
  if (const auto split = a.optional_number("split_k"); split && *split > 1) {
    text += fmt::format(" split-k {:.0f}", *split);
  }
  if (const std::string layout = a.optional_text("layout"); !layout.empty()) text += " " + layout;
  if (const std::string type = a.optional_text("compute_type"); !type.empty()) text += " " + type;
  return text;
}

void parse_result(Fields& f, ResultLine& r) {
  r.precision = f.precision();
  r.n = f.integer("n");
  r.partial = f.boolean("partial");
  r.windows = f.integer("windows");
  Fields rate = f.object("flop_per_second");
  r.median = rate.optional_number("median");
  r.min = rate.optional_number("min");
  r.max = rate.optional_number("max");
  r.mean = rate.optional_number("mean");
  Fields v = f.object("verification");
  r.errors.gemms_checked = v.count("gemms_checked");
  r.errors.mismatches = v.count("mismatches");
  r.errors.nan_count = v.count("nan_count");
  r.errors.inf_count = v.count("inf_count");
  // Older recordings lack the reference-tile counts.
  r.errors.reference_tiles_checked =
      static_cast<int>(v.optional_number("reference_tiles_checked").value_or(0));
  r.errors.reference_tiles_failed =
      static_cast<int>(v.optional_number("reference_tiles_failed").value_or(0));
  r.verification_ok = v.boolean("ok");
  if (!v.missing().empty()) f.fail("verification");
  r.fault_injected = f.find("fault_injected") != nullptr && f.boolean("fault_injected");
  if (f.find("algorithm") != nullptr) r.algorithm = describe_algorithm(f.object("algorithm"));
}

void note_problem(WorkerStream& stream, std::string problem) {
  ++stream.bad_lines;
  if (static_cast<int>(stream.problems.size()) < kProblemsKept) {
    stream.problems.push_back(std::move(problem));
  }
}

Status add_parsed(WorkerStream& stream, const nlohmann::json& j, std::string_view line,
                  double received_at);

std::string quoted(std::string_view line) {
  constexpr std::size_t kShown = 120;
  return line.size() <= kShown ? fmt::format("'{}'", line)
                               : fmt::format("'{}...'", line.substr(0, kShown));
}

}  // namespace

Status add_line(WorkerStream& stream, std::string_view line, double received_at) {
  if (line.empty()) return {};
  const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  if (j.is_discarded() || !j.is_object()) {
    std::string problem = "not JSON: " + quoted(line);
    note_problem(stream, problem);
    return Status(Code::data_error, problem);
  }
  return add_parsed(stream, j, line, received_at);
}

Status add_object(WorkerStream& stream, const json& object, double received_at) {
  const std::string text = object.dump();
  if (!object.is_object()) {
    std::string problem = "not a JSON object: " + quoted(std::string_view(text));
    note_problem(stream, problem);
    return Status(Code::data_error, problem);
  }
  return add_parsed(stream, object, text, received_at);
}

namespace {

Status add_parsed(WorkerStream& stream, const json& j, std::string_view line, double received_at) {
  Fields f(j);
  const std::optional<double> version = f.optional_number("v");
  if (!version || *version != kWorkerProtocolVersion) {
    std::string problem = fmt::format("protocol version {} (expected {}): {}",
                                      version ? fmt::format("{}", *version) : "missing",
                                      kWorkerProtocolVersion, quoted(line));
    note_problem(stream, problem);
    return Status(Code::data_error, problem);
  }
  const std::string type = f.text("type");

  if (type == "device") {
    WorkerDevice d;
    d.name = f.text("name");
    d.uuid = f.optional_text("uuid");
    d.pci_bus_id = f.optional_text("pci_bus_id");
    d.compute_capability = f.optional_text("compute_capability");
    d.sm_count = static_cast<int>(f.optional_number("sm_count").value_or(0));
    d.total_memory_bytes =
        static_cast<std::uint64_t>(f.optional_number("total_memory_bytes").value_or(0));
    DeviceDetails details;
    details.sm_clock_max_hz = f.optional_number("sm_clock_max_hz");
    details.memory_clock_max_hz = f.optional_number("memory_clock_max_hz");
    if (const auto v = f.optional_number("driver_cuda_version")) {
      details.driver_cuda_version = static_cast<int>(*v);
    }
    if (const auto v = f.optional_number("runtime_cuda_version")) {
      details.runtime_cuda_version = static_cast<int>(*v);
    }
    if (f.missing().empty() && stream.device && stream.device->uuid != d.uuid) {
      std::string problem =
          fmt::format("a second device ({} after {}): one worker's lines describe one GPU: {}",
                      d.uuid, stream.device->uuid, quoted(line));
      note_problem(stream, problem);
      return Status(Code::data_error, problem);
    }
    if (f.missing().empty()) {
      stream.device = d;
      stream.device_details = details;
    }
  } else if (type == "gemm_window") {
    WindowLine w;
    w.precision = f.precision();
    w.index = f.integer("window");
    w.gemms = f.count("gemms");
    w.flop = f.number("flop");
    w.seconds = f.number("seconds");
    w.elapsed_seconds = f.number("elapsed_seconds");
    w.flop_per_second =
        f.optional_number("flop_per_second").value_or(w.seconds > 0 ? w.flop / w.seconds : 0);
    w.mismatches = f.count("mismatches");
    w.nan_count = f.count("nan_count");
    w.inf_count = f.count("inf_count");
    w.received_at = received_at;
    if (f.missing().empty()) {
      stream.windows.push_back(w);
      stream.last_precision = w.precision;
    }
  } else if (type == "progress") {
    ProgressLine p;
    p.precision = f.precision();
    p.elapsed_seconds = f.number("elapsed_seconds");
    p.fraction = f.number("fraction");
    if (f.missing().empty()) {
      stream.last_progress = p;
      stream.last_precision = p.precision;
    }
  } else if (type == "gemm_result") {
    ResultLine r;
    parse_result(f, r);
    r.received_at = received_at;
    if (f.missing().empty()) {
      stream.results.push_back(r);
      stream.last_precision = r.precision;
    }
  } else if (type == "skipped") {
    SkippedTest s{f.text("what"), f.optional_text("code"), f.optional_text("reason")};
    if (f.missing().empty()) stream.skipped.push_back(std::move(s));
  } else if (type == "memory_bw") {
    MemoryRow m;
    m.kernel = f.text("kernel");
    m.buffer_bytes = f.count("buffer_bytes");
    m.bytes_read = f.count("bytes_read");
    m.bytes_written = f.count("bytes_written");
    m.bytes_counted = f.count("bytes_counted");
    m.seconds = f.number("seconds");
    m.bytes_per_second =
        f.optional_number("bytes_per_second")
            .value_or(m.seconds > 0 ? static_cast<double>(m.bytes_counted) / m.seconds : 0);
    if (f.missing().empty()) {
      stream.memory.push_back(std::move(m));
      stream.memory_variants.push_back(f.optional_text("variant"));
    }
  } else if (type == "host_link") {
    HostLinkRow h;
    h.direction = f.text("direction");
    h.memory = f.text("memory");
    h.size_bytes = f.count("size_bytes");
    h.bytes_moved = f.count("bytes_moved");
    h.seconds = f.number("seconds");
    h.timing = f.optional_text("timing");
    h.bytes_per_second =
        f.optional_number("bytes_per_second")
            .value_or(h.seconds > 0 ? static_cast<double>(h.bytes_moved) / h.seconds : 0);
    if (f.missing().empty()) stream.host_link.push_back(std::move(h));
  } else if (type == "overlap") {
    OverlapRow o;
    o.memory = f.text("memory");
    o.copy_bytes = f.count("copy_bytes");
    o.copy_seconds = f.number("copy_seconds");
    o.compute_seconds = f.number("compute_seconds");
    o.both_seconds = f.number("both_seconds");
    o.efficiency = f.number("efficiency");
    if (f.missing().empty()) stream.overlap.push_back(std::move(o));
  } else if (type == "error") {
    WorkerError e{f.text("code"), f.text("message"), std::nullopt};
    if (f.find("precision") != nullptr) e.precision = f.precision();
    if (f.missing().empty()) stream.errors.push_back(std::move(e));
  } else if (type == "done") {
    DoneLine d{f.boolean("ok"), f.boolean("interrupted"), f.integer("exit_code")};
    if (f.missing().empty()) stream.done = d;
  } else if (f.missing().empty()) {
    return {};  // a type this parent does not know: newer workers may add some
  }

  if (!f.missing().empty()) {
    std::string problem =
        fmt::format("'{}' line without a valid '{}': {}", type, f.missing(), quoted(line));
    note_problem(stream, problem);
    return Status(Code::data_error, problem);
  }
  stream.last_type = type;
  return {};
}

}  // namespace
}  // namespace gpuscope::burn::detail
