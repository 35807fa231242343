// CSV: one row per GPU sample, a column per catalogue metric, SI units, empty = absent.
#include <fmt/format.h>

#include <cmath>

#include "gpuscope/monitor.h"
#include "telemetry/locked_file.h"

namespace gpuscope::telemetry {
namespace {

class CsvSink : public Sink {
 public:
  explicit CsvSink(std::unique_ptr<detail::LockedFile> file) : file_(std::move(file)) {}
  std::string describe() const override { return "CSV file " + file_->path(); }

  Status begin(const SessionInfo& session) override {
    for (const SampledGpu& g : session.gpus) uuids_.emplace(g.target.gpu_index, g.target.gpu_uuid);
    std::string header = "unix_s,t_s,gpu,uuid,lost";
    for (const MetricInfo& info : metric_catalogue()) {
      header += ',';
      header += info.name;
    }
    header += '\n';
    GPUSCOPE_RETURN_IF_ERROR(file_->append_row(header, detail::LockedFile::Row::meta));
    return file_->flush();  // a path that cannot take a single row fails now, not later
  }

  Status write(const Tick& tick) override {
    for (const GpuSample& s : tick.gpus) {
      std::string row = fmt::format("{:.3f},{:.4f},{},{},{}", s.unix_s, s.t_s, s.gpu, uuids_[s.gpu],
                                    s.lost ? 1 : 0);
      for (const MetricInfo& info : metric_catalogue()) {
        row += ',';
        if (auto v = s.values.get(info.metric); v && std::isfinite(*v))
          row += fmt::format("{}", *v);
      }
      row += '\n';
      GPUSCOPE_RETURN_IF_ERROR(file_->append_row(row));
    }
    return Status{};
  }

  Status end(const Summary*) override { return file_->flush(); }

 private:
  std::unique_ptr<detail::LockedFile> file_;
  std::map<unsigned, std::string> uuids_;
};

}  // namespace

Result<std::unique_ptr<Sink>> open_csv_sink(const std::string& path) {
  GPUSCOPE_ASSIGN_OR_RETURN(auto file, detail::LockedFile::create(path));
  return std::unique_ptr<Sink>(new CsvSink(std::move(file)));
}

}  // namespace gpuscope::telemetry
