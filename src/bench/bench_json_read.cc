// The bench JSON document read back (bench_json.cc writes it), for `gpuscope bench --resume`.
// Every field bench_json.cc writes is read except the derived ones (answers, scaling, variant,
// torch_args, rows_finished): a round trip gives the same document.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <stdexcept>

#include "common/json_fields.h"
#include "gpuscope/bench.h"

namespace gpuscope::bench {
namespace {

using nlohmann::json;

using gpuscope::detail::JsonFields;

// What is wrong, with where: "rows[3].mode: expected a string". The reader stops at the first.
class Malformed : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// Throws the first problem `f` found (JsonFields collects it; this reader stops there).
void check(const JsonFields& f) {
  if (!f.status().ok()) throw Malformed(f.status().message());
}

// The member `key` of `f`, which must be there.
const json& need(JsonFields& f, const char* key) {
  if (!f.has(key)) f.fail(key, "missing");
  check(f);
  return f.member(key);
}

std::string path(const JsonFields& f, const char* key) {
  return f.where().empty() ? key : f.where() + "." + key;
}

// The object `j`, named `where` in messages; throws when it is not an object.
JsonFields object_at(const json& j, std::string where) {
  JsonFields f(j, std::move(where));
  check(f);
  return f;
}

// The object member `key` of `f`; throws when it is not an object.
JsonFields object_member(JsonFields& f, const char* key) {
  return object_at(f.member(key), path(f, key));
}

Verdict verdict(JsonFields& f) {
  const std::string name = f.text("verdict");
  check(f);
  auto v = parse_verdict(name);
  if (!v) throw Malformed(path(f, "verdict") + ": unknown verdict '" + name + "'");
  return *v;
}

RowSpec spec_from(JsonFields& f) {
  RowSpec s;
  s.model = f.text("model");
  s.task = f.text("task");
  s.mode = f.text("mode");
  s.batch = f.opt_text("batch_requested").value_or("");
  check(f);
  if (f.has("knobs")) {
    JsonFields knobs = object_member(f, "knobs");
    // Written as an object (sorted by name); a RowSpec keeps them in knob order.
    for (const std::string& name : knob_names()) {
      if (auto value = knobs.opt_text(name.c_str())) s.knobs.emplace_back(name, *value);
    }
    check(knobs);
    for (const auto& [name, value] : f.member("knobs").items()) {
      const auto& known = knob_names();
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        throw Malformed(knobs.where() + ": unknown knob '" + name + "'");
      }
    }
  }
  if (f.has("input")) {
    JsonFields in = object_member(f, "input");
    s.input.kind = in.text("kind");
    s.input.workers = in.opt_int("loader_workers");
    s.input.pinned = in.opt_bool("pinned");
    s.input.non_blocking = in.opt_bool("non_blocking");
    s.input.data_dir = in.opt_text("data").value_or("");
    check(in);
  }
  s.warmup = f.opt_int("warmup");
  s.windows = f.opt_int("windows");
  s.steps = f.opt_int("steps");
  s.guard_steps = f.opt_int("guard_steps");
  s.extra_args = f.texts("extra_args");
  s.gpus = f.opt_int("gpus").value_or(1);  // older documents: one GPU
  s.grad_sync = f.opt_bool("grad_sync").value_or(true);
  check(f);
  if (s.gpus < 1) throw Malformed(path(f, "gpus") + ": expected at least 1");
  return s;
}

Row row_from(const json& j, const std::string& where) {
  JsonFields f = object_at(j, where);
  Row r;
  r.spec = spec_from(f);
  const std::string status = f.text("status");
  check(f);
  if (status != "ok" && status != "skipped") {
    throw Malformed(path(f, "status") + ": expected ok or skipped, not '" + status + "'");
  }
  r.skipped = status == "skipped";
  r.skip_code = f.opt_text("skip_code").value_or("");
  r.skip_reason = f.opt_text("skip_reason").value_or("");
  r.batch = f.opt_int("batch");
  r.samples_per_second = f.opt_number("samples_per_second");
  r.step_seconds_median = f.opt_number("step_seconds_median");
  r.step_relative_spread = f.opt_number("step_relative_spread");
  r.peak_allocated_bytes = f.opt_number("peak_allocated_bytes");
  r.peak_reserved_bytes = f.opt_number("peak_reserved_bytes");
  r.timed_seconds = f.opt_number("timed_seconds");
  r.timed_samples = f.opt_number("timed_samples");
  r.energy_j = f.opt_number("energy_j");
  r.power_avg_w = f.opt_number("power_avg_w");
  r.energy_per_sample_j = f.opt_number("joules_per_sample");
  r.sm_activity = f.opt_number("sm_activity");
  r.tensor_activity = f.opt_number("tensor_activity");
  r.throttle_s = f.opt_number("throttle_seconds");
  r.gpu_memory_peak_bytes = f.opt_number("gpu_memory_peak_bytes");
  r.short_windows = f.opt_bool("short_energy_windows").value_or(false);
  r.torch_version = f.opt_text("torch_version");
  r.device_name = f.opt_text("device_name");
  r.wall_seconds = f.opt_number("wall_seconds").value_or(0);
  check(f);
  if (f.has("guard")) {
    JsonFields g = object_member(f, "guard");
    const Verdict v = verdict(g);
    r.guard = GuardResult{v, g.opt_text("reason").value_or("")};
    check(g);
  }
  if (f.has("data_parallel")) {
    JsonFields dp = object_member(f, "data_parallel");
    r.world_size = dp.opt_int("world_size");
    r.collective_seconds_per_step = dp.opt_number("collective_seconds_per_step");
    r.exposed_seconds_per_step = dp.opt_number("exposed_seconds_per_step");
    r.overlap_fraction = dp.opt_number("overlap_fraction");
    r.peak_reserved_per_gpu_bytes = dp.opt_number("peak_reserved_per_gpu_bytes");
    r.slowest_rank_samples_per_second = dp.opt_number("slowest_rank_samples_per_second");
    r.all_reduce = dp.opt_text("all_reduce");
    r.all_reduce_fallback = dp.opt_text("all_reduce_fallback");
    // Absent from bench documents written before --shard-optimizer.
    r.optimizer_sharded = dp.opt_bool("optimizer_sharded");
    check(dp);
  }
  return r;
}

GuardRun guard_from(const json& j, const std::string& where) {
  JsonFields f = object_at(j, where);
  GuardRun g;
  g.model = f.text("model");
  g.mode = f.text("mode");
  check(f);
  const Verdict v = verdict(f);
  g.result = {v, f.opt_text("reason").value_or("")};
  check(f);
  if (f.has("curve")) {
    JsonFields c = object_member(f, "curve");
    LossCurve curve;
    for (const json& loss : c.list("losses")) {
      if (!loss.is_number() && !loss.is_null()) {
        throw Malformed(path(c, "losses") + ": expected numbers");
      }
      // null: a step whose loss was not finite (JSON has no NaN).
      curve.losses.push_back(loss.is_number() ? loss.get<double>()
                                              : std::numeric_limits<double>::quiet_NaN());
    }
    curve.loss_scale = c.opt_number("loss_scale");
    curve.skipped_steps = c.opt_int("skipped_steps");
    check(c);
    g.curve = std::move(curve);
  }
  return g;
}

BenchResult result_from(const json& document) {
  JsonFields f(document, "");
  BenchResult r;
  r.complete = f.opt_bool("complete").value_or(true);  // older documents: written at the end
  r.started_unix_s = f.opt_number("started_unix_s").value_or(0);
  r.wall_seconds = f.opt_number("wall_seconds").value_or(0);
  r.earlier_wall_seconds = f.opt_number("earlier_wall_seconds").value_or(0);
  r.interrupted = f.opt_bool("interrupted").value_or(false);
  const double planned = f.number("rows_planned");
  check(f);
  if (planned < 0) throw Malformed("rows_planned: negative");
  r.planned = static_cast<std::size_t>(planned);
  r.resumed_rows = static_cast<std::size_t>(f.opt_int("resumed_rows").value_or(0));
  r.guard_enabled = f.opt_bool("guard_enabled").value_or(true);
  r.guard_seed = f.opt_int("guard_seed").value_or(0);
  r.torch_bin = f.opt_text("torch_bin").value_or("");
  r.gpu_index = static_cast<unsigned>(std::max(0, f.opt_int("gpu_index").value_or(0)));
  if (f.has("gpu")) {
    JsonFields gpu = object_member(f, "gpu");
    r.gpu_name = gpu.opt_text("name");
    r.gpu_uuid = gpu.opt_text("uuid");
    check(gpu);
  }
  r.driver_version = f.opt_text("driver_version");
  r.warnings = f.texts("warnings");
  check(f);
  const json& rows = need(f, "rows");
  if (!rows.is_array()) throw Malformed("rows: expected an array");
  for (std::size_t i = 0; i < rows.size(); ++i) {
    r.rows.push_back(row_from(rows[i], fmt::format("rows[{}]", i)));
  }
  if (r.rows.size() > r.planned) {
    throw Malformed(fmt::format("{} rows but rows_planned is {}", r.rows.size(), r.planned));
  }
  const json& guards = f.list("guard");
  check(f);
  for (std::size_t i = 0; i < guards.size(); ++i) {
    r.guards.push_back(guard_from(guards[i], fmt::format("guard[{}]", i)));
  }
  r.answers = compute_answers(r.rows);
  return r;
}

}  // namespace

Result<BenchResult> bench_from_json(const json& document) {
  if (!document.is_object() || document.value("kind", json()) != "gpuscope.bench") {
    return Status(Code::data_error,
                  "not a gpuscope bench document (no \"kind\": "
                  "\"gpuscope.bench\"); it is what `gpuscope bench --json` "
                  "writes");
  }
  const json& version = document.value("schema_version", json());
  if (!version.is_number_integer()) {
    return Status(Code::data_error, "schema_version: missing or not an integer");
  }
  if (version.get<int>() > kBenchSchemaVersion) {
    return Status(Code::data_error,
                  fmt::format("schema_version {} is newer than this gpuscope's ({}); use the "
                              "gpuscope that wrote it",
                              version.get<int>(), kBenchSchemaVersion));
  }
  try {
    return result_from(document);
  } catch (const Malformed& e) {
    return Status(Code::data_error, e.what());
  } catch (const json::exception& e) {
    return Status(Code::data_error, e.what());
  }
}

}  // namespace gpuscope::bench
