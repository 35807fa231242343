// The Prometheus text exposition (format 0.0.4) with dcgm-exporter's names and labels.
//
// Each family is written once: "# HELP", "# TYPE", then one line per GPU that has the metric.
// Values are in DCGM's units (MiB, MHz, mJ, %, ...) for DCGM-named metrics, in our SI units for
// gpuscope_* ones. Absent readings and lost GPUs are left out; nothing is ever a sentinel.
#include <fmt/format.h>

#include <cmath>
#include <mutex>

#include "gpuscope/monitor.h"
#include "telemetry/latest.h"

namespace gpuscope::telemetry {
namespace {

std::string escape_label_value(std::string_view value) {
  std::string out;
  for (char c : value) {
    switch (c) {
      case '\\':
        out += "\\\\";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\n':
        out += "\\n";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string escape_help(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '\\') {
      out += "\\\\";
    } else if (c == '\n') {
      out += "\\n";
    } else {
      out += c;
    }
  }
  return out;
}

std::string labels(const SampledGpu& gpu, const std::string& host) {
  // dcgm-exporter's "device" is the /dev/nvidiaN node; NVML's index matches it on the usual
  // machines (no GPUs hidden from the driver).
  return fmt::format(
      R"({{gpu="{}",UUID="{}",pci_bus_id="{}",device="nvidia{}",modelName="{}",Hostname="{}"}})",
      gpu.target.gpu_index, escape_label_value(gpu.target.gpu_uuid),
      escape_label_value(gpu.target.pci_bus_id.value_or("")), gpu.target.gpu_index,
      escape_label_value(gpu.target.name), escape_label_value(host));
}

}  // namespace

struct PrometheusExporter::State {
  mutable std::mutex mutex;
  std::string host;
  std::unique_ptr<detail::Latest> latest;
};

PrometheusExporter::PrometheusExporter() : state_(std::make_unique<State>()) {}
PrometheusExporter::~PrometheusExporter() = default;

Status PrometheusExporter::begin(const SessionInfo& session) {
  std::lock_guard lock(state_->mutex);
  state_->host = session.host;
  state_->latest = std::make_unique<detail::Latest>(session.gpus);
  return Status{};
}

Status PrometheusExporter::write(const Tick& tick) {
  std::lock_guard lock(state_->mutex);
  if (state_->latest) state_->latest->add(tick);
  return Status{};
}

Status PrometheusExporter::end(const Summary*) {
  return Status{};
}

std::string PrometheusExporter::render() const {
  std::lock_guard lock(state_->mutex);
  std::string out;
  if (!state_->latest) return out;
  const auto& gpus = state_->latest->gpus();
  for (const MetricInfo& info : metric_catalogue()) {
    std::string lines;
    const bool dcgm = !info.dcgm_name.empty();
    const std::string name =
        dcgm ? std::string(info.dcgm_name) : "gpuscope_" + std::string(info.name);
    for (const detail::LatestGpu& gpu : gpus) {
      if (gpu.lost) continue;
      auto v = gpu.values.get(info.metric);
      if (!v) continue;
      const double value = dcgm ? *v * info.dcgm_scale : *v;
      if (!std::isfinite(value)) continue;
      lines += fmt::format("{}{} {}\n", name, labels(gpu.identity, state_->host), value);
    }
    if (lines.empty()) continue;
    const std::string help =
        dcgm ? std::string(info.dcgm_help) : fmt::format("{} (in {}).", info.help, info.unit);
    out += fmt::format("# HELP {} {}\n# TYPE {} {}\n", name, escape_help(help), name,
                       info.kind == MetricKind::counter ? "counter" : "gauge");
    out += lines;
  }
  return out;
}

}  // namespace gpuscope::telemetry
