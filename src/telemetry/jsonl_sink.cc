// JSON lines: a "session" line, a "sample" line per GPU sample, "gpu_lost" lines, a "summary".
// recording_from_lines is the one reader of the format: read_recording reads a file with it
// (fixtures recorded on real GPUs are kept this way), the store its runs.
#include <fmt/format.h>

#include <fstream>

#include "common/json_fields.h"
#include "gpuscope/monitor.h"
#include "telemetry/locked_file.h"
#include "telemetry/sample_json.h"

namespace gpuscope::telemetry {
namespace {

using gpuscope::detail::JsonFields;
using nlohmann::json;

constexpr char kKind[] = "gpuscope.monitor";

class JsonlSink : public Sink {
 public:
  explicit JsonlSink(std::unique_ptr<detail::LockedFile> file) : file_(std::move(file)) {}
  std::string describe() const override { return "JSON-lines file " + file_->path(); }

  Status begin(const SessionInfo& session) override {
    json gpus = json::array();
    for (const SampledGpu& g : session.gpus) gpus.push_back(detail::identity_to_json(g));
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

namespace {

Status read_session(JsonFields& f, SessionInfo& session) {
  if (f.opt_text("kind").value_or("") != kKind) {
    return Status(Code::data_error, fmt::format("{}: not a gpuscope monitor recording", f.where()));
  }
  const std::optional<int> version = f.opt_int("schema_version");
  if (!version || *version > kJsonlSchemaVersion) {
    return Status(Code::data_error,
                  fmt::format("{}: monitor schema_version {} is not one this gpuscope reads (up "
                              "to {})",
                              f.where(), version ? std::to_string(*version) : "(missing)",
                              kJsonlSchemaVersion));
  }
  session.started_unix_s = f.opt_number("started_unix_s").value_or(0);
  session.interval_s = f.opt_number("interval_s").value_or(0);
  session.host = f.opt_text("host").value_or("");
  session.gpuscope_version = f.opt_text("gpuscope_version").value_or("");
  session.command_line = f.opt_text("command_line").value_or("");
  session.driver_version = f.opt_text("driver_version");
  session.cuda_driver_version = f.opt_text("cuda_driver_version");
  session.command = f.texts("command");
  const json& gpus = f.list("gpus");
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    JsonFields g(gpus[i], fmt::format("{}: gpus[{}]", f.where(), i));
    session.gpus.push_back(detail::identity_from_json(g));
    GPUSCOPE_RETURN_IF_ERROR(g.status());
  }
  return f.status();
}

GpuSample lost_gpu(JsonFields& f) {
  GpuSample lost;
  lost.lost = true;
  lost.gpu = f.opt_unsigned<unsigned>("gpu").value_or(0);
  lost.t_s = f.opt_number("t_s").value_or(0);
  lost.unix_s = f.opt_number("unix_s").value_or(0);
  // What the driver said, as "problems"; older files have it as "message".
  const json& problems = f.member("problems");
  for (std::size_t i = 0; problems.is_array() && i < problems.size(); ++i) {
    if (problems[i].is_string()) lost.problems.push_back(problems[i].get<std::string>());
  }
  if (lost.problems.empty()) {
    if (auto message = f.opt_text("message")) lost.problems.push_back(*message);
  }
  return lost;
}

}  // namespace

Result<Recording> recording_from_lines(const std::vector<json>& lines) {
  Recording rec;
  bool session = false;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    if (lines[i].is_null()) continue;  // a blank line
    JsonFields f(lines[i], fmt::format("line {}", i + 1));
    const std::string type = f.opt_text("type").value_or("");
    GPUSCOPE_RETURN_IF_ERROR(f.status());
    if (!session) {
      if (type != "session") {
        return Status(Code::data_error, fmt::format("{}: no session line first", f.where()));
      }
      GPUSCOPE_RETURN_IF_ERROR(read_session(f, rec.session));
      session = true;
    } else if (type == "sample") {
      auto sample = detail::sample_from_json(lines[i]);
      if (!sample.ok()) return sample.status().with_context(f.where());
      rec.samples.push_back(std::move(sample).value());
    } else if (type == "gpu_lost") {
      rec.samples.push_back(lost_gpu(f));
    } else if (type == "summary") {
      const json& summary = f.member("summary");
      rec.summary = summary.is_object() ? summary : json::object();
    }
    GPUSCOPE_RETURN_IF_ERROR(f.status());
  }
  if (!session) return Status(Code::data_error, "an empty recording");
  return rec;
}

Result<Recording> read_recording(const std::string& path) {
  std::ifstream in(path);
  if (!in) return Status(Code::io_error, fmt::format("{}: cannot read", path));
  std::vector<json> lines;
  for (std::string text; std::getline(in, text);) {
    if (text.find_first_not_of(" \t\r") == std::string::npos) {
      lines.emplace_back();  // kept, so that line numbers are the file's
      continue;
    }
    json line = json::parse(text, nullptr, /*allow_exceptions=*/false);
    if (line.is_discarded() || !line.is_object()) {
      return Status(Code::data_error,
                    fmt::format("{}:{}: not a JSON object", path, lines.size() + 1));
    }
    lines.push_back(std::move(line));
  }
  auto rec = recording_from_lines(lines);
  if (!rec.ok()) return rec.status().with_context(path);
  return rec;
}

}  // namespace gpuscope::telemetry
