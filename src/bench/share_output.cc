// `bench --share` out: the JSON document, the console table, the results-store run.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <ostream>

#include "gpuscope/bench_share.h"
#include "gpuscope/version.h"

namespace gpuscope::bench {
namespace {

namespace names = store::names;

nlohmann::json opt(const std::optional<double>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json copy_json(const ShareCopy& c) {
  const Row& r = c.row;
  nlohmann::json j = {{"target", c.target},
                      {"skipped", r.skipped},
                      {"samples_per_second", opt(r.samples_per_second)},
                      {"together_samples_per_second", opt(c.together_samples_per_second)},
                      {"peak_allocated_bytes", opt(r.peak_allocated_bytes)},
                      {"peak_reserved_bytes", opt(r.peak_reserved_bytes)},
                      {"wall_seconds", r.wall_seconds}};
  if (r.batch) j["batch"] = *r.batch;
  if (r.skipped) {
    j["skip_code"] = r.skip_code;
    j["skip_reason"] = r.skip_reason;
  }
  return j;
}

nlohmann::json trial_json(const ShareTrial& t) {
  nlohmann::json copies = nlohmann::json::array();
  for (const ShareCopy& c : t.runs) copies.push_back(copy_json(c));
  nlohmann::json j = {{"mode", std::string(share_mode_name(t.mode))},
                      {"copies", t.copies},
                      {"fits", t.fits},
                      {"out_of_memory", t.out_of_memory},
                      {"overlapped", t.overlapped},
                      {"together_seconds", t.together_seconds},
                      {"total_samples_per_second", opt(t.total_samples_per_second)},
                      {"per_copy_samples_per_second", opt(t.per_copy_samples_per_second)},
                      {"gain", opt(t.gain)},
                      {"fairness", opt(t.fairness)},
                      {"memory_per_copy_bytes", opt(t.memory_per_copy_bytes)},
                      {"gpu_memory_peak_bytes", opt(t.gpu_memory_peak_bytes)},
                      {"energy_j", opt(t.energy_j)},
                      {"power_avg_w", opt(t.power_avg_w)},
                      {"energy_per_sample_j", opt(t.energy_per_sample_j)},
                      {"wall_seconds", t.wall_seconds},
                      {"runs", copies}};
  if (!t.skip_reason.empty()) j["skip_reason"] = t.skip_reason;
  return j;
}

std::string cell(const std::optional<double>& v, const char* format) {
  return v ? fmt::format(fmt::runtime(format), *v) : std::string("-");
}

std::string host_name() {
  char name[256] = {};
  if (::gethostname(name, sizeof name - 1) != 0) return "";
  return name;
}

}  // namespace

nlohmann::json share_to_json(const std::vector<ShareResult>& results) {
  nlohmann::json shares = nlohmann::json::array();
  for (const ShareResult& r : results) {
    nlohmann::json trials = nlohmann::json::array();
    for (const ShareTrial& t : r.trials) trials.push_back(trial_json(t));
    nlohmann::json pays = nlohmann::json::object();
    for (const auto& [mode, k] : r.pays_off_up_to) pays[std::string(share_mode_name(mode))] = k;
    nlohmann::json j = {{"workload", r.workload},
                        {"answer", r.answer},
                        {"alone_samples_per_second", opt(r.alone_samples_per_second)},
                        {"pays_off_up_to", pays},
                        {"mps_over_timeslice", opt(r.mps_over_timeslice)},
                        {"mps_daemon", r.mps_daemon},
                        {"gpu_index", r.gpu_index},
                        {"started_unix_s", r.started_unix_s},
                        {"wall_seconds", r.wall_seconds},
                        {"interrupted", r.interrupted},
                        {"warnings", r.warnings},
                        {"trials", trials}};
    if (r.mps_active_thread_percentage) {
      j["mps_active_thread_percentage"] = *r.mps_active_thread_percentage;
    }
    if (r.compute_mode) j["compute_mode"] = *r.compute_mode;
    if (r.gpu_name) j["gpu_name"] = *r.gpu_name;
    if (r.gpu_uuid) j["gpu_uuid"] = *r.gpu_uuid;
    if (r.driver_version) j["driver_version"] = *r.driver_version;
    shares.push_back(j);
  }
  return {{"kind", "gpuscope.bench.share"},
          {"schema_version", kShareSchemaVersion},
          {"gpuscope_version", std::string(version())},
          {"shares", shares}};
}

void print_share(const ShareResult& r, std::ostream& out) {
  out << fmt::format("Sharing GPU {}{}: {}\n", r.gpu_index,
                     r.gpu_name ? " (" + *r.gpu_name + ")" : "", r.workload);
  if (!r.mps_daemon.empty()) {
    out << fmt::format("MPS daemon: {}{}\n", r.mps_daemon,
                       r.mps_active_thread_percentage
                           ? fmt::format(", active threads {} %", *r.mps_active_thread_percentage)
                           : "");
  }
  if (r.compute_mode) out << "compute mode: " << *r.compute_mode << '\n';
  out << fmt::format("{:<10} {:>6} {:>12} {:>12} {:>7} {:>8} {:>10} {:>9}  {}\n", "mode", "copies",
                     "total/s", "per copy/s", "gain", "fairness", "mem/copy", "J/sample", "fits");
  for (const ShareTrial& t : r.trials) {
    if (!t.skip_reason.empty()) {
      out << fmt::format("{:<10} {:>6}  skipped: {}\n", share_mode_name(t.mode), t.copies,
                         t.skip_reason);
      continue;
    }
    const std::string fits =
        t.fits ? "yes"
               : (t.out_of_memory > 0 ? fmt::format("no ({} out of memory)", t.out_of_memory)
                                      : std::string("no"));
    out << fmt::format(
        "{:<10} {:>6} {:>12} {:>12} {:>7} {:>8} {:>10} {:>9}  {}{}\n", share_mode_name(t.mode),
        t.copies, cell(t.total_samples_per_second, "{:.1f}"),
        cell(t.per_copy_samples_per_second, "{:.1f}"), cell(t.gain, "{:.2f}x"),
        cell(t.fairness, "{:.2f}"),
        cell(t.memory_per_copy_bytes ? std::optional(*t.memory_per_copy_bytes / 1e9) : std::nullopt,
             "{:.2f} GB"),
        cell(t.energy_per_sample_j, "{:.4f}"), fits,
        t.copies > 1 && !t.overlapped ? " (copies did not overlap)" : "");
    if (t.mode == ShareMode::mig) {
      for (const ShareCopy& c : t.runs) {
        out << fmt::format("{:>17} {:>12}  {}\n", "",
                           c.row.skipped
                               ? "-"
                               : cell(c.together_samples_per_second ? c.together_samples_per_second
                                                                    : c.row.samples_per_second,
                                      "{:.1f}"),
                           c.target);
      }
    }
  }
  for (const auto& w : r.warnings) out << "warning: " << w << '\n';
  out << "Answer: " << r.answer << '\n';
}

store::RunData share_to_run(const std::vector<ShareResult>& results,
                            const std::string& command_line) {
  store::RunData data;
  store::RunRecord& run = data.run;
  run.kind = "bench";
  run.host = host_name();
  run.command_line = command_line;
  run.gpuscope_version = std::string(version());
  if (results.empty()) return data;
  const ShareResult& first = results.front();
  run.started_unix_s = first.started_unix_s;
  run.ended_unix_s = first.started_unix_s;
  run.driver_version = first.driver_version;
  const int gpu = static_cast<int>(first.gpu_index);
  store::GpuRecord g;
  g.gpu = gpu;
  g.name = first.gpu_name.value_or("");
  g.uuid = first.gpu_uuid.value_or("");
  run.gpus.push_back(g);
  for (const ShareResult& r : results) {
    run.ended_unix_s = std::max(run.ended_unix_s.value_or(0), r.started_unix_s + r.wall_seconds);
    for (const ShareTrial& t : r.trials) {
      if (!t.skip_reason.empty()) continue;
      nlohmann::json tags = {{"workload", r.workload},
                             {"share_mode", std::string(share_mode_name(t.mode))},
                             {"share_copies", t.copies}};
      if (!t.runs.empty() && !t.runs.front().row.spec.model.empty()) {
        const RowSpec& spec = t.runs.front().row.spec;
        tags["model"] = spec.model;
        tags["task"] = spec.task;
        tags["mode"] = spec.mode;
      }
      auto add = [&](const char* name, std::optional<double> value, const char* unit,
                     nlohmann::json extra) {
        if (!value) return;
        nlohmann::json all = tags;
        if (extra.is_object()) all.update(extra);
        data.measurements.push_back({gpu, "", name, value, unit, all});
      };
      add(names::kSamplesPerS, t.total_samples_per_second, "1/s", {{"copy", "total"}});
      add("share_gain", t.gain, "1", {});
      add("share_fairness", t.fairness, "1", {});
      add(names::kEnergyPerSample, t.energy_per_sample_j, "J", {{"copy", "total"}});
      add(names::kPowerAvg, t.power_avg_w, "W", {{"copy", "total"}});
      for (std::size_t i = 0; i < t.runs.size(); ++i) {
        const ShareCopy& c = t.runs[i];
        if (c.row.skipped) {
          nlohmann::json all = tags;
          all.update({{"copy", i}, {"skip_code", c.row.skip_code}, {"skipped", c.row.skip_reason}});
          data.measurements.push_back({gpu, "", names::kSamplesPerS, std::nullopt, "1/s", all});
          continue;
        }
        add(names::kSamplesPerS,
            c.together_samples_per_second ? c.together_samples_per_second
                                          : c.row.samples_per_second,
            "1/s", {{"copy", i}, {"target", c.target}});
        add(names::kPeakMemory, c.row.peak_allocated_bytes, "B", {{"copy", i}});
      }
    }
  }
  return data;
}

}  // namespace gpuscope::bench
