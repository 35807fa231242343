#include "burn/worker_stream.h"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "common/json_fields.h"

namespace gpuscope::burn::detail {
namespace {

using json = nlohmann::json;

constexpr int kProblemsKept = 5;

using gpuscope::detail::JsonFields;

// A required precision ("bf16", ...).
Precision precision(JsonFields& f, const char* key = "precision") {
  const std::string name = f.text(key);
  const std::optional<Precision> p = parse_precision(name);
  if (!p && f.status().ok()) f.fail(key, fmt::format("'{}' is not a precision", name));
  return p.value_or(Precision::fp32);
}

std::string describe_algorithm(JsonFields& a) {
  const std::optional<double> id = a.opt_number("algo_id");
  if (!id) return {};
  std::string text = fmt::format("algo {:.0f}", *id);
  if (const auto tile = a.opt_number("tile_id")) text += fmt::format(" tile {:.0f}", *tile);
  if (const auto stages = a.opt_number("stages_id")) {
    text += fmt::format(" stages {:.0f}", *stages);
  }
  if (const auto split = a.opt_number("split_k"); split && *split > 1) {
    text += fmt::format(" split-k {:.0f}", *split);
  }
  if (const auto layout = a.opt_text("layout"); layout && !layout->empty()) text += " " + *layout;
  if (const auto type = a.opt_text("compute_type"); type && !type->empty()) text += " " + *type;
  return text;
}

// The reader of `f`'s object member `key`; absent is a problem of `f` (once read, hand it
// back with f.take_problem(key, member)).
JsonFields member(JsonFields& f, const char* key) {
  if (!f.has(key)) f.fail(key, "missing");
  return JsonFields(f.member(key), f.where().empty() ? key : f.where() + "." + key);
}

void parse_result(JsonFields& f, ResultLine& r) {
  r.precision = precision(f);
  r.n = f.integer("n");
  r.partial = f.boolean("partial");
  r.windows = f.integer("windows");
  JsonFields rate = member(f, "flop_per_second");
  r.median = rate.opt_number("median");
  r.min = rate.opt_number("min");
  r.max = rate.opt_number("max");
  r.mean = rate.opt_number("mean");
  f.take_problem("flop_per_second", rate);
  JsonFields v = member(f, "verification");
  r.errors.gemms_checked = v.count<std::uint64_t>("gemms_checked");
  r.errors.mismatches = v.count<std::uint64_t>("mismatches");
  r.errors.nan_count = v.count<std::uint64_t>("nan_count");
  r.errors.inf_count = v.count<std::uint64_t>("inf_count");
  // Older recordings lack the reference-tile counts.
  r.errors.reference_tiles_checked = v.opt_int("reference_tiles_checked").value_or(0);
  r.errors.reference_tiles_failed = v.opt_int("reference_tiles_failed").value_or(0);
  r.verification_ok = v.boolean("ok");
  f.take_problem("verification", v);
  r.fault_injected = f.opt_bool("fault_injected").value_or(false);
  if (f.has("algorithm")) {
    JsonFields a = member(f, "algorithm");
    r.algorithm = describe_algorithm(a);
    f.take_problem("algorithm", a);
  }
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
  JsonFields f(j, "");
  const std::optional<double> version = f.opt_number("v");
  if (!version || *version != kWorkerProtocolVersion) {
    std::string problem = fmt::format("protocol version {} (expected {}): {}",
                                      version ? fmt::format("{}", *version) : "missing",
                                      kWorkerProtocolVersion, quoted(line));
    note_problem(stream, problem);
    return Status(Code::data_error, problem);
  }
  const std::string type = f.text("type");
  // An optional text field: absent reads as "".
  auto optional_text = [&f](const char* key) { return f.opt_text(key).value_or(""); };

  if (type == "device") {
    WorkerDevice d;
    d.name = f.text("name");
    d.uuid = optional_text("uuid");
    d.pci_bus_id = optional_text("pci_bus_id");
    d.compute_capability = optional_text("compute_capability");
    d.sm_count = f.opt_int("sm_count").value_or(0);
    d.total_memory_bytes = f.opt_unsigned<std::uint64_t>("total_memory_bytes").value_or(0);
    DeviceDetails details;
    details.sm_clock_max_hz = f.opt_number("sm_clock_max_hz");
    details.memory_clock_max_hz = f.opt_number("memory_clock_max_hz");
    details.driver_cuda_version = f.opt_int("driver_cuda_version");
    details.runtime_cuda_version = f.opt_int("runtime_cuda_version");
    if (f.status().ok() && stream.device && stream.device->uuid != d.uuid) {
      std::string problem =
          fmt::format("a second device ({} after {}): one worker's lines describe one GPU: {}",
                      d.uuid, stream.device->uuid, quoted(line));
      note_problem(stream, problem);
      return Status(Code::data_error, problem);
    }
    if (f.status().ok()) {
      stream.device = d;
      stream.device_details = details;
    }
  } else if (type == "gemm_window") {
    WindowLine w;
    w.precision = precision(f);
    w.index = f.integer("window");
    w.gemms = f.count<std::uint64_t>("gemms");
    w.flop = f.number("flop");
    w.seconds = f.number("seconds");
    w.elapsed_seconds = f.number("elapsed_seconds");
    w.flop_per_second =
        f.opt_number("flop_per_second").value_or(w.seconds > 0 ? w.flop / w.seconds : 0);
    w.mismatches = f.count<std::uint64_t>("mismatches");
    w.nan_count = f.count<std::uint64_t>("nan_count");
    w.inf_count = f.count<std::uint64_t>("inf_count");
    w.received_at = received_at;
    if (f.status().ok()) {
      stream.windows.push_back(w);
      stream.last_precision = w.precision;
    }
  } else if (type == "progress") {
    ProgressLine p;
    p.precision = precision(f);
    p.elapsed_seconds = f.number("elapsed_seconds");
    p.fraction = f.number("fraction");
    if (f.status().ok()) {
      stream.last_progress = p;
      stream.last_precision = p.precision;
    }
  } else if (type == "gemm_result") {
    ResultLine r;
    parse_result(f, r);
    r.received_at = received_at;
    if (f.status().ok()) {
      stream.results.push_back(r);
      stream.last_precision = r.precision;
    }
  } else if (type == "skipped") {
    SkippedTest s{f.text("what"), optional_text("code"), optional_text("reason")};
    if (f.status().ok()) stream.skipped.push_back(std::move(s));
  } else if (type == "memory_bw") {
    MemoryRow m;
    m.kernel = f.text("kernel");
    m.buffer_bytes = f.count<std::uint64_t>("buffer_bytes");
    m.bytes_read = f.count<std::uint64_t>("bytes_read");
    m.bytes_written = f.count<std::uint64_t>("bytes_written");
    m.bytes_counted = f.count<std::uint64_t>("bytes_counted");
    m.seconds = f.number("seconds");
    m.bytes_per_second =
        f.opt_number("bytes_per_second")
            .value_or(m.seconds > 0 ? static_cast<double>(m.bytes_counted) / m.seconds : 0);
    std::string variant = optional_text("variant");
    if (f.status().ok()) {
      stream.memory.push_back(std::move(m));
      stream.memory_variants.push_back(std::move(variant));
    }
  } else if (type == "host_link") {
    HostLinkRow h;
    h.direction = f.text("direction");
    h.memory = f.text("memory");
    h.size_bytes = f.count<std::uint64_t>("size_bytes");
    h.bytes_moved = f.count<std::uint64_t>("bytes_moved");
    h.seconds = f.number("seconds");
    h.timing = optional_text("timing");
    h.bytes_per_second =
        f.opt_number("bytes_per_second")
            .value_or(h.seconds > 0 ? static_cast<double>(h.bytes_moved) / h.seconds : 0);
    if (f.status().ok()) stream.host_link.push_back(std::move(h));
  } else if (type == "overlap") {
    OverlapRow o;
    o.memory = f.text("memory");
    o.copy_bytes = f.count<std::uint64_t>("copy_bytes");
    o.copy_seconds = f.number("copy_seconds");
    o.compute_seconds = f.number("compute_seconds");
    o.both_seconds = f.number("both_seconds");
    o.efficiency = f.number("efficiency");
    if (f.status().ok()) stream.overlap.push_back(std::move(o));
  } else if (type == "error") {
    WorkerError e{f.text("code"), f.text("message"), std::nullopt};
    if (f.has("precision")) e.precision = precision(f);
    if (f.status().ok()) stream.errors.push_back(std::move(e));
  } else if (type == "done") {
    DoneLine d{f.boolean("ok"), f.boolean("interrupted"), f.integer("exit_code")};
    if (f.status().ok()) stream.done = d;
  } else if (f.status().ok()) {
    return {};  // a type this parent does not know: newer workers may add some
  }

  if (!f.status().ok()) {
    std::string problem = fmt::format("'{}' line without a valid '{}' ({}): {}", type,
                                      f.failed_key(), f.status().message(), quoted(line));
    note_problem(stream, problem);
    return Status(Code::data_error, problem);
  }
  stream.last_type = type;
  return {};
}

}  // namespace
}  // namespace gpuscope::burn::detail
