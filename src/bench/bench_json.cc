// The bench JSON document (kind "gpuscope.bench", schema kBenchSchemaVersion). `gpuscope study`
// reads "answers" and "rows", `bench --resume` all of it (bench_json_read.cc); the field names
// below are a contract pinned by tests/bench.
#include <cmath>

#include "gpuscope/bench.h"
#include "gpuscope/bench_scaling.h"
#include "gpuscope/version.h"

namespace gpuscope::bench {
namespace {

nlohmann::json opt(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
nlohmann::json opt(const std::optional<std::string>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
nlohmann::json opt(const std::optional<int>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}
nlohmann::json opt(const std::optional<bool>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json guard_json(const std::optional<GuardResult>& g) {
  if (!g) return nullptr;
  return {{"verdict", verdict_name(g->verdict)}, {"reason", g->reason}};
}

nlohmann::json spec_json(const RowSpec& s) {
  nlohmann::json knobs = nlohmann::json::object();
  for (const auto& [k, v] : s.knobs) knobs[k] = v;
  nlohmann::json input = {{"kind", s.input.kind}};
  input["loader_workers"] = s.input.workers ? nlohmann::json(*s.input.workers) : nullptr;
  input["pinned"] = s.input.pinned ? nlohmann::json(*s.input.pinned) : nullptr;
  input["non_blocking"] = s.input.non_blocking ? nlohmann::json(*s.input.non_blocking) : nullptr;
  input["data"] =
      s.input.data_dir.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.input.data_dir);
  return {{"model", s.model},
          {"task", s.task},
          {"mode", s.mode},
          {"batch_requested", s.batch.empty() ? nlohmann::json(nullptr) : nlohmann::json(s.batch)},
          {"knobs", knobs},
          {"input", input},
          {"variant", s.variant()},
          {"warmup", opt(s.warmup)},
          {"windows", opt(s.windows)},
          {"steps", opt(s.steps)},
          {"guard_steps", opt(s.guard_steps)},
          {"gpus", s.gpus},
          {"grad_sync", s.grad_sync},
          {"extra_args", s.extra_args},
          {"torch_args", s.torch_args()}};
}

nlohmann::json row_json(const Row& r) {
  nlohmann::json j = spec_json(r.spec);
  j["status"] = r.skipped ? "skipped" : "ok";
  j["skip_code"] = r.skipped ? nlohmann::json(r.skip_code) : nlohmann::json(nullptr);
  j["skip_reason"] = r.skipped ? nlohmann::json(r.skip_reason) : nlohmann::json(nullptr);
  j["batch"] = r.batch ? nlohmann::json(*r.batch) : nlohmann::json(nullptr);
  j["samples_per_second"] = opt(r.samples_per_second);
  j["step_seconds_median"] = opt(r.step_seconds_median);
  j["step_relative_spread"] = opt(r.step_relative_spread);
  j["peak_allocated_bytes"] = opt(r.peak_allocated_bytes);
  j["peak_reserved_bytes"] = opt(r.peak_reserved_bytes);
  j["timed_seconds"] = opt(r.timed_seconds);
  j["timed_samples"] = opt(r.timed_samples);
  j["energy_j"] = opt(r.energy_j);
  j["power_avg_w"] = opt(r.power_avg_w);
  j["joules_per_sample"] = opt(r.energy_per_sample_j);
  j["sm_activity"] = opt(r.sm_activity);
  j["tensor_activity"] = opt(r.tensor_activity);
  j["throttle_seconds"] = opt(r.throttle_s);
  j["gpu_memory_peak_bytes"] = opt(r.gpu_memory_peak_bytes);
  j["short_energy_windows"] = r.short_windows;
  j["torch_version"] = opt(r.torch_version);
  j["device_name"] = opt(r.device_name);
  j["wall_seconds"] = r.wall_seconds;
  j["guard"] = guard_json(r.guard);
  j["data_parallel"] = nullptr;
  if (r.world_size) {
    j["data_parallel"] = {
        {"world_size", *r.world_size},
        {"collective_seconds_per_step", opt(r.collective_seconds_per_step)},
        {"exposed_seconds_per_step", opt(r.exposed_seconds_per_step)},
        {"overlap_fraction", opt(r.overlap_fraction)},
        {"peak_reserved_per_gpu_bytes", opt(r.peak_reserved_per_gpu_bytes)},
        {"slowest_rank_samples_per_second", opt(r.slowest_rank_samples_per_second)},
        {"all_reduce", opt(r.all_reduce)},
        {"all_reduce_fallback", opt(r.all_reduce_fallback)},
        {"optimizer_sharded", opt(r.optimizer_sharded)}};
  }
  return j;
}

nlohmann::json choice_json(const std::optional<Choice>& c, bool energy) {
  if (!c) return nullptr;
  nlohmann::json j = {{"mode", c->mode},
                      {"variant", c->variant},
                      {"samples_per_second", c->samples_per_second},
                      {"peak_allocated_bytes", opt(c->peak_allocated_bytes)}};
  if (energy) j["joules_per_sample"] = opt(c->joules_per_sample);
  if (!c->tied_with.empty()) j["tied_with"] = c->tied_with;  // within the measured spread
  return j;
}

}  // namespace

nlohmann::json bench_to_json(const BenchResult& r) {
  nlohmann::json answers = nlohmann::json::array();
  for (const Answer& a : r.answers) {
    nlohmann::json knobs = nlohmann::json::array();
    for (const KnobEffect& e : a.knob_effects) {
      knobs.push_back({{"knob", e.knob},
                       {"from", e.from},
                       {"to", e.to},
                       {"mode", e.mode},
                       {"variant", e.variant},
                       {"speedup", e.speedup},
                       {"memory_change_bytes", opt(e.memory_change_bytes)}});
    }
    nlohmann::json smallest = nullptr;
    if (a.smallest_memory) {
      smallest = {{"mode", a.smallest_memory->mode},
                  {"variant", a.smallest_memory->variant},
                  {"peak_allocated_bytes", opt(a.smallest_memory->peak_allocated_bytes)}};
    }
    answers.push_back({{"model", a.model},
                       {"task", a.task},
                       {"fastest", choice_json(a.fastest, false)},
                       {"most_efficient", choice_json(a.most_efficient, true)},
                       {"smallest_memory", smallest},
                       {"knob_effects", knobs}});
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const Row& row : r.rows) rows.push_back(row_json(row));
  nlohmann::json guards = nlohmann::json::array();
  for (const GuardRun& g : r.guards) {
    nlohmann::json curve = nullptr;
    if (g.curve) {
      nlohmann::json losses = nlohmann::json::array();
      for (double v : g.curve->losses) {
        losses.push_back(std::isfinite(v) ? nlohmann::json(v) : nlohmann::json(nullptr));
      }
      curve = {{"losses", losses},
               {"loss_scale", opt(g.curve->loss_scale)},
               {"skipped_steps", g.curve->skipped_steps ? nlohmann::json(*g.curve->skipped_steps)
                                                        : nlohmann::json(nullptr)}};
    }
    guards.push_back({{"model", g.model},
                      {"mode", g.mode},
                      {"verdict", verdict_name(g.result.verdict)},
                      {"reason", g.result.reason},
                      {"curve", curve}});
  }
  return {{"kind", "gpuscope.bench"},
          {"schema_version", kBenchSchemaVersion},
          {"gpuscope_version", std::string(version())},
          {"complete", r.complete},
          {"started_unix_s", r.started_unix_s},
          {"wall_seconds", r.wall_seconds},
          {"earlier_wall_seconds", r.earlier_wall_seconds},
          {"interrupted", r.interrupted},
          {"rows_planned", r.planned},
          {"rows_finished", r.rows.size()},
          {"resumed_rows", r.resumed_rows},
          {"guard_enabled", r.guard_enabled},
          {"guard_seed", r.guard_seed},
          {"torch_bin", r.torch_bin},
          {"gpu_index", r.gpu_index},
          {"gpu", {{"name", opt(r.gpu_name)}, {"uuid", opt(r.gpu_uuid)}}},
          {"driver_version", opt(r.driver_version)},
          {"warnings", r.warnings},
          {"answers", answers},
          {"rows", rows},
          {"scaling", scaling_to_json(scaling_table(r.rows))},
          {"guard", guards}};
}

}  // namespace gpuscope::bench
