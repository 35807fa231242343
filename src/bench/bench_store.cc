// A bench run as results-store records, in the names `gpuscope report` reads (store.h `names`).
#include <unistd.h>

#include <cmath>

#include "gpuscope/bench.h"
#include "gpuscope/host.h"
#include "gpuscope/version.h"

namespace gpuscope::bench {
namespace {

namespace names = store::names;

nlohmann::json row_tags(const Row& r) {
  nlohmann::json tags = {{"model", r.spec.model}, {"task", r.spec.task}, {"mode", r.spec.mode}};
  if (r.batch) tags["batch_size"] = *r.batch;
  const std::string variant = r.spec.variant();
  if (!variant.empty()) tags["variant"] = variant;
  if (r.guard) tags["guard"] = std::string(verdict_name(r.guard->verdict));
  return tags;
}

}  // namespace

store::RunData bench_to_run(const BenchResult& result, const std::string& command_line) {
  store::RunData data;
  store::RunRecord& run = data.run;
  run.kind = "bench";
  run.started_unix_s = result.started_unix_s;
  run.ended_unix_s = result.started_unix_s + result.wall_seconds;
  run.host = host_name();
  run.command_line = command_line;
  run.gpuscope_version = std::string(version());
  run.driver_version = result.driver_version;
  for (const Row& r : result.rows) {
    if (r.torch_version) {
      run.torch_version = r.torch_version;
      break;
    }
  }
  const int gpu = static_cast<int>(result.gpu_index);
  store::GpuRecord g;
  g.gpu = gpu;
  g.name = result.gpu_name.value_or("");
  for (const Row& r : result.rows) {
    if (g.name.empty() && r.device_name) g.name = *r.device_name;
  }
  g.uuid = result.gpu_uuid.value_or("");
  run.gpus.push_back(g);

  auto add = [&](const Row& r, const char* name, std::optional<double> value, const char* unit) {
    if (!value) return;
    data.measurements.push_back({gpu, "", name, value, unit, row_tags(r)});
  };
  for (const Row& r : result.rows) {
    if (r.skipped) {
      nlohmann::json tags = row_tags(r);
      tags["skipped"] = r.skip_reason;
      tags["skip_code"] = r.skip_code;
      data.measurements.push_back({gpu, "", names::kSamplesPerS, std::nullopt, "1/s", tags});
      continue;
    }
    add(r, names::kSamplesPerS, r.samples_per_second, "1/s");
    add(r, names::kPeakMemory, r.peak_allocated_bytes, "B");
    add(r, "peak_reserved_bytes", r.peak_reserved_bytes, "B");
    add(r, names::kEnergyPerSample, r.energy_per_sample_j, "J");
    add(r, names::kPowerAvg, r.power_avg_w, "W");
    add(r, names::kEnergy, r.energy_j, "J");
    add(r, names::kSmActivityAvg, r.sm_activity, "1");
    add(r, names::kTensorActivityAvg, r.tensor_activity, "1");
    add(r, names::kThrottleSeconds, r.throttle_s, "s");
    add(r, "step_relative_spread", r.step_relative_spread, "1");
  }
  for (const GuardRun& gr : result.guards) {
    if (gr.curve) {
      for (std::size_t step = 0; step < gr.curve->losses.size(); ++step) {
        const double loss = gr.curve->losses[step];
        if (!std::isfinite(loss)) continue;
        data.measurements.push_back({gpu,
                                     "",
                                     names::kLoss,
                                     loss,
                                     "1",
                                     {{"model", gr.model},
                                      {"task", "train"},
                                      {"mode", gr.mode},
                                      {"step", step},
                                      {"source", "guard"}}});
      }
    }
    if (verdict_is_bad(gr.result.verdict)) {
      data.findings.push_back(
          {.id = "convergence_guard",
           .severity = store::Severity::warning,
           .title = gr.model + " " + gr.mode + " " + std::string(verdict_name(gr.result.verdict)) +
                    ": " + gr.result.reason + ". Do not use this mode for training as it is.",
           .gpu = gpu});
    }
  }
  return data;
}

}  // namespace gpuscope::bench
