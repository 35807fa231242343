// JSON lines: a "session" line, a "sample" line per GPU sample, "gpu_lost" lines, a "summary".
// read_recording reads such a file back (fixtures recorded on real GPUs are kept this way).
#include <fmt/format.h>

#include <fstream>

#include "gpuscope/monitor.h"
#include "telemetry/locked_file.h"
#include "telemetry/sample_json.h"

namespace gpuscope::telemetry {
namespace {

using nlohmann::json;

constexpr char kKind[] = "gpuscope.monitor";

class JsonlSink : public Sink {
 public:
  explicit JsonlSink(std::unique_ptr<detail::LockedFile> file) : file_(std::move(file)) {}
  std::string describe() const override { return "JSON-lines file " + file_->path(); }

  Status begin(const SessionInfo& session) override {
    json gpus = json::array();
    for (const GpuIdentity& g : session.gpus) gpus.push_back(detail::identity_to_json(g));
    json line = {{"type", "session"},
                 {"kind", kKind},
                 {"schema_version", kJsonlSchemaVersion},
                 {"started_unix_s", session.started_unix_s},
                 {"interval_s", session.interval_s},
                 {"host", session.host},
                 {"command", session.command},
                 {"gpuscope_version", session.gpuscope_version},
                 {"gpus", std::move(gpus)}};
    if (!session.command_line.empty()) line["command_line"] = session.command_line;
    if (session.driver_version) line["driver_version"] = *session.driver_version;
    if (session.cuda_driver_version) line["cuda_driver_version"] = *session.cuda_driver_version;
    GPUSCOPE_RETURN_IF_ERROR(file_->append_row(line.dump() + "\n", detail::LockedFile::Row::meta));
    return file_->flush();
  }

  Status write(const Tick& tick) override {
    for (const GpuSample& s : tick.gpus) {
      json line;
      if (s.lost) {
        line = {{"type", "gpu_lost"}, {"gpu", s.gpu}, {"t_s", s.t_s}, {"unix_s", s.unix_s}};
        if (!s.problems.empty()) line["problems"] = s.problems;
      } else {
        line = detail::sample_to_json(s);
      }
      GPUSCOPE_RETURN_IF_ERROR(file_->append_row(line.dump() + "\n"));
    }
    return Status{};
  }

  Status end(const Summary* summary) override {
    if (summary != nullptr) {
      json line = {{"type", "summary"}, {"summary", detail::summary_core_to_json(*summary)}};
      GPUSCOPE_RETURN_IF_ERROR(
          file_->append_row(line.dump() + "\n", detail::LockedFile::Row::meta));
    }
    return file_->flush();
  }

 private:
  std::unique_ptr<detail::LockedFile> file_;
};

}  // namespace

Result<std::unique_ptr<Sink>> open_jsonl_sink(const std::string& path) {
  GPUSCOPE_ASSIGN_OR_RETURN(auto file, detail::LockedFile::create(path));
  return std::unique_ptr<Sink>(new JsonlSink(std::move(file)));
}

Result<Recording> read_recording(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status(Code::io_error, fmt::format("{}: cannot read", path));
  Recording rec;
  std::string text;
  int number = 0;
  bool session = false;
  while (std::getline(in, text)) {
    ++number;
    if (text.empty()) continue;
    json line = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (line.is_discarded() || !line.is_object()) {
      return Status(Code::data_error, fmt::format("{}:{}: not a JSON object", path, number));
    }
    // A field of the wrong type ({"type": 1}) throws from json::value and get: such a line is
    // not ours, like one that is not JSON.
    try {
      const std::string type = line.value("type", "");
      if (type == "session") {
        if (line.value("kind", "") != kKind ||
            line.value("schema_version", 0) != kJsonlSchemaVersion) {
          return Status(Code::data_error,
                        fmt::format("{}:{}: not a gpuscope monitor recording of schema {}", path,
                                    number, kJsonlSchemaVersion));
        }
        session = true;
        rec.session.started_unix_s = line.value("started_unix_s", 0.0);
        rec.session.interval_s = line.value("interval_s", 0.0);
        rec.session.host = line.value("host", "");
        rec.session.gpuscope_version = line.value("gpuscope_version", "");
        rec.session.command = line.value("command", std::vector<std::string>{});
        rec.session.command_line = line.value("command_line", "");
        if (line.contains("driver_version")) {
          rec.session.driver_version = line.value("driver_version", "");
        }
        if (line.contains("cuda_driver_version")) {
          rec.session.cuda_driver_version = line.value("cuda_driver_version", "");
        }
        for (const json& g : line.value("gpus", json::array())) {
          rec.session.gpus.push_back(detail::identity_from_json(g));
        }
      } else if (!session) {
        return Status(Code::data_error, fmt::format("{}:{}: no session line first", path, number));
      } else if (type == "sample") {
        auto sample = detail::sample_from_json(line);
        if (!sample.ok()) return sample.status().with_context(fmt::format("{}:{}", path, number));
        rec.samples.push_back(std::move(sample).value());
      } else if (type == "gpu_lost") {
        GpuSample lost;
        lost.gpu = line.value("gpu", 0u);
        lost.t_s = line.value("t_s", 0.0);
        lost.unix_s = line.value("unix_s", 0.0);
        lost.lost = true;
        rec.samples.push_back(std::move(lost));
      } else if (type == "summary") {
        rec.summary = line.value("summary", json::object());
      }
    } catch (const json::exception& e) {
      return Status(Code::data_error, fmt::format("{}:{}: {}", path, number, e.what()));
    }
  }
  if (!session) return Status(Code::data_error, fmt::format("{}: empty recording", path));
  return rec;
}

}  // namespace gpuscope::telemetry
