#include "telemetry/lines_sink.h"

#include <fmt/format.h>

#include <ostream>

#include "telemetry/latest.h"

namespace gpuscope::telemetry::detail {
namespace {

std::string cell(std::optional<double> v, double scale, int width, int decimals = 0) {
  if (!v) return fmt::format("{:>{}}", "-", width);
  return fmt::format("{:>{}.{}f}", *v * scale, width, decimals);
}

class LinesSink : public Sink {
 public:
  explicit LinesSink(std::ostream& out) : out_(out) {}
  std::string describe() const override { return "per-second lines"; }

  Status begin(const SessionInfo& session) override {
    latest_ = std::make_unique<Latest>(session.gpus);
    out_ << fmt::format("{:>8} {:>3} {:>5} {:>6} {:>5} {:>5} {:>9} {:>7} {:>5} {:>6}  {}\n", "#t_s",
                        "gpu", "sm%", "tens%", "dram%", "duty%", "mem_GiB", "power_W", "temp",
                        "sm_MHz", "throttle")
         << std::flush;
    return stream_status();
  }

  Status write(const Tick& tick) override {
    latest_->add(tick);
    if (next_ && tick.t_s < *next_) return Status{};
    next_ = (next_ ? *next_ : tick.t_s) + 1.0;
    for (const LatestGpu& g : latest_->gpus()) {
      if (g.lost) {
        out_ << fmt::format("{:>8.1f} {:>3} lost\n", tick.t_s, g.identity.target.gpu_index);
        continue;
      }
      const MetricValues& v = g.values;
      std::string throttle = "-";
      if (auto mask = v.get(Metric::clock_event_reasons)) {
        auto names = nvml::clock_event_reason_names(static_cast<std::uint64_t>(*mask) & ~1ULL);
        if (!names.empty()) {
          throttle.clear();
          for (const auto& n : names) throttle += (throttle.empty() ? "" : ",") + n;
        }
      }
      out_ << fmt::format(
          "{:>8.1f} {:>3} {} {} {} {} {} {} {} {}  {}\n", tick.t_s, g.identity.target.gpu_index,
          cell(v.get(Metric::sm_activity), 100, 5), cell(v.get(Metric::tensor_activity), 100, 6),
          cell(v.get(Metric::dram_activity), 100, 5), cell(v.get(Metric::gpu_utilization), 100, 5),
          cell(v.get(Metric::memory_used_bytes), 1.0 / (1 << 30), 9, 2),
          cell(v.get(Metric::power_w), 1, 7), cell(v.get(Metric::temperature_c), 1, 5),
          cell(v.get(Metric::sm_clock_hz), 1e-6, 6), throttle);
    }
    out_.flush();
    return stream_status();
  }

  Status end(const Summary*) override { return Status{}; }

 private:
  // A stream that failed (disk full, file-size limit, a closed pipe) is a failed sink.
  Status stream_status() const {
    if (out_.good()) return Status{};
    return Status(Code::io_error, "writing the per-second lines failed");
  }

  std::ostream& out_;
  std::unique_ptr<Latest> latest_;
  std::optional<double> next_;
};

}  // namespace

std::unique_ptr<Sink> make_lines_sink(std::ostream& out) {
  return std::make_unique<LinesSink>(out);
}

}  // namespace gpuscope::telemetry::detail
