// The SQLite results store as a sink: one run of kind "monitor". Samples are batched and
// committed (one transaction) at least every kStoreCommitIntervalS, which bounds what a SIGKILL
// can lose: SQLite's WAL keeps every committed transaction when the process dies (only a power
// loss could undo the last ones, with synchronous=NORMAL).
#include <fmt/format.h>

#include <chrono>
#include <cmath>

#include "gpuscope/monitor.h"
#include "gpuscope/store.h"

namespace gpuscope::telemetry {

store::RunRecord monitor_run_record(const SessionInfo& session) {
  store::RunRecord run;
  run.kind = "monitor";
  run.started_unix_s = session.started_unix_s;
  run.host = session.host;
  run.gpuscope_version = session.gpuscope_version;
  run.command_line = session.command_line;
  run.driver_version = session.driver_version;
  run.cuda_driver_version = session.cuda_driver_version;
  for (const SampledGpu& g : session.gpus) {
    store::GpuRecord gpu;
    gpu.gpu = static_cast<int>(g.target.gpu_index);
    gpu.name = g.target.name;
    gpu.uuid = g.target.gpu_uuid;
    gpu.pci_bus_id = g.target.pci_bus_id;
    gpu.memory_total_bytes = g.target.memory_total_bytes;
    gpu.power_limit_w = g.power_limit_w;
    run.gpus.push_back(std::move(gpu));
  }
  return run;
}

namespace {

class StoreSink : public Sink {
 public:
  explicit StoreSink(std::unique_ptr<store::Store> db) : db_(std::move(db)) {}
  std::string describe() const override { return "results store " + db_->path(); }

  Status begin(const SessionInfo& session) override {
    GPUSCOPE_ASSIGN_OR_RETURN(run_, db_->write_run(monitor_run_record(session)));
    last_commit_ = std::chrono::steady_clock::now();
    return Status{};
  }

  Status write(const Tick& tick) override {
    for (const GpuSample& s : tick.gpus) {
      if (s.lost) {
        // Written at once: the session may end on it (every GPU lost) or be killed next.
        std::string message = s.problems.empty() ? std::string() : s.problems.front();
        GPUSCOPE_RETURN_IF_ERROR(db_->add_findings(
            run_, {store::gpu_lost_finding(static_cast<int>(s.gpu), s.t_s, message)}));
        continue;
      }
      for (const MetricInfo& info : metric_catalogue()) {
        auto v = s.values.get(info.metric);
        if (!v || !std::isfinite(*v)) continue;
        pending_.push_back({static_cast<int>(s.gpu), s.t_s, std::string(info.name), *v});
      }
    }
    if (std::chrono::steady_clock::now() - last_commit_ >=
        std::chrono::duration<double>(kStoreCommitIntervalS)) {
      return commit();
    }
    return Status{};
  }

  Status end(const Summary* summary) override {
    GPUSCOPE_RETURN_IF_ERROR(commit());
    if (summary == nullptr) return Status{};
    GPUSCOPE_RETURN_IF_ERROR(db_->add_measurements(run_, measurements(*summary)));
    return db_->finish_run(run_, summary->started_unix_s + summary->wall_s);
  }

 private:
  Status commit() {
    last_commit_ = std::chrono::steady_clock::now();
    if (pending_.empty()) return Status{};
    Status status = db_->add_telemetry(run_, pending_);
    pending_.clear();
    return status;
  }

  static std::vector<store::Measurement> measurements(const Summary& summary) {
    namespace names = store::names;
    std::vector<store::Measurement> rows;
    auto add = [&rows](int gpu, const char* name, std::optional<double> value, const char* unit,
                       nlohmann::json tags = nlohmann::json::object()) {
      if (!value) return;
      rows.push_back({gpu, "", name, value, unit, std::move(tags)});
    };
    for (const GpuSummary& g : summary.gpus) {
      const int gpu = static_cast<int>(g.gpu.target.gpu_index);
      if (g.energy) add(gpu, names::kEnergy, g.energy->joules, "J");
      add(gpu, names::kPowerAvg, g.power_avg_w, "W");
      add(gpu, names::kTemperatureMax, g.temperature_max_c, "degC");
      add(gpu, names::kSmClockAvg, g.sm_clock_avg_hz, "Hz");
      add(gpu, names::kSmActivityAvg, g.sm_activity_avg, "1");
      add(gpu, names::kTensorActivityAvg, g.tensor_activity_avg, "1");
      add(gpu, names::kPeakMemory, g.memory_peak_bytes, "B");
      for (const auto& [reason, time] : g.throttle) {
        add(gpu, names::kThrottleSeconds, time.seconds, "s",
            {{"reason", std::string(nvml::throttle_reason_name(reason))},
             {"source", time.from_counter ? "counter" : "samples"}});
      }
    }
    return rows;
  }

  std::unique_ptr<store::Store> db_;
  store::RunId run_ = 0;
  std::vector<store::TelemetrySample> pending_;
  std::chrono::steady_clock::time_point last_commit_;
};

}  // namespace

Result<std::unique_ptr<Sink>> open_store_sink(const std::string& path) {
  GPUSCOPE_ASSIGN_OR_RETURN(auto db, store::Store::open(path));
  return std::unique_ptr<Sink>(new StoreSink(std::move(db)));
}

}  // namespace gpuscope::telemetry
