// study.json: the plan, the options and every step that ended, saved after each step.
#include <fmt/format.h>

#include <system_error>

#include "common/enum_names.h"
#include "gpuscope/files.h"
#include "gpuscope/study.h"

namespace gpuscope::study {
namespace {

using nlohmann::json;
namespace fs = std::filesystem;

constexpr char kStateFile[] = "study.json";
constexpr char kKind[] = "gpuscope.study.state";

constexpr gpuscope::detail::EnumName<StepStatus> kStepStatusNames[] = {
    {StepStatus::ok, "ok"},
    {StepStatus::failed, "failed"},
    {StepStatus::skipped, "skipped"},
    {StepStatus::interrupted, "interrupted"}};
static_assert(gpuscope::detail::names_every_value(kStepStatusNames, StepStatus::interrupted));

json optional_int(const std::optional<int>& value) {
  return value ? json(*value) : json();
}

std::optional<int> read_optional_int(const json& j, const char* key) {
  if (!j.contains(key) || !j[key].is_number_integer()) return std::nullopt;
  return j[key].get<int>();
}

Result<StepStatus> parse_status(const std::string& name) {
  if (auto status = gpuscope::detail::value_named(kStepStatusNames, name)) return *status;
  return Status(Code::data_error, fmt::format("study.json: unknown step status '{}'", name));
}

Result<StepKind> parse_kind(const std::string& name) {
  for (StepKind k : {StepKind::info, StepKind::burn, StepKind::bench, StepKind::sweep}) {
    if (step_kind_name(k) == name) return k;
  }
  return Status(Code::data_error, fmt::format("study.json: unknown step kind '{}'", name));
}

json step_to_json(const Step& s) {
  json j = {{"id", s.id},
            {"kind", step_kind_name(s.kind)},
            {"gpu", optional_int(s.gpu)},
            {"title", s.title},
            {"args", s.args},
            {"json_on_stdout", s.json_on_stdout},
            {"estimate_s", s.estimate_seconds},
            {"timeout_s", s.timeout_seconds}};
  j["skip_reason"] = s.skip_reason ? json(*s.skip_reason) : json();
  return j;
}

json record_to_json(const StepRecord& r) {
  return {{"status", step_status_name(r.status)},
          {"exit_code", optional_int(r.exit_code)},
          {"term_signal", optional_int(r.term_signal)},
          {"duration_s", r.duration_seconds},
          {"message", r.message},
          {"resumable", r.resumable},
          {"json", r.json_path},
          {"log", r.log_path},
          {"store", r.store_path}};
}

}  // namespace

std::string_view step_status_name(StepStatus status) {
  return gpuscope::detail::name_in(kStepStatusNames, status, "interrupted");
}

bool step_done(const State& state, const std::string& step_id) {
  auto it = state.steps.find(step_id);
  return it != state.steps.end() && it->second.status != StepStatus::interrupted &&
         !it->second.resumable;
}

json state_to_json(const State& state) {
  json gpus = json::array();
  for (const Target& g : state.machine.gpus) {
    json gpu = {{"index", g.gpu_index}, {"uuid", g.gpu_uuid}, {"name", g.gpu_name}};
    if (g.mig_mode) gpu["mig_mode"] = true;
    if (g.mig) {
      gpu["mig"] = {{"uuid", g.mig->uuid},
                    {"gpu_instance_id", g.mig->gpu_instance_id},
                    {"compute_instance_id", g.mig->compute_instance_id},
                    {"profile", g.mig->profile},
                    {"name", g.name}};
    }
    gpus.push_back(gpu);
  }
  json plan = json::array();
  for (const Step& s : state.plan) plan.push_back(step_to_json(s));
  json steps = json::object();
  for (const auto& [id, record] : state.steps) steps[id] = record_to_json(record);
  return {{"kind", kKind},
          {"schema_version", state.schema_version},
          {"gpuscope_version", state.gpuscope_version},
          {"started_unix_s", state.started_unix_s},
          {"command_line", state.command_line},
          {"note", state.note},
          {"options",
           {{"level", level_name(state.options.level)},
            {"gpus", state.options.gpus},
            {"allow_power_changes", state.options.allow_power_changes}}},
          {"machine", {{"hostname", state.machine.hostname}, {"gpus", gpus}}},
          {"plan", plan},
          {"steps", steps}};
}

Result<State> state_from_json(const json& doc) {
  // value("kind", json()): a "kind" of another type is a foreign file, not a type_error.
  if (!doc.is_object() || doc.value("kind", json()) != kKind) {
    return Status(Code::data_error, "not a gpuscope study state (study.json)");
  }
  if (!doc.contains("schema_version") || !doc["schema_version"].is_number_integer()) {
    return Status(Code::data_error, "study.json has no schema_version");
  }
  const int version = doc["schema_version"].get<int>();
  if (version > kStateSchemaVersion) {
    return Status(Code::data_error,
                  fmt::format("study.json has schema version {}, newer than this gpuscope "
                              "understands ({}): resume it with a newer gpuscope",
                              version, kStateSchemaVersion));
  }
  try {
    State state;
    state.schema_version = version;
    state.gpuscope_version = doc.value("gpuscope_version", "");
    state.started_unix_s = doc.value("started_unix_s", 0.0);
    state.command_line = doc.value("command_line", "");
    state.note = doc.value("note", "");
    const json& options = doc.at("options");
    GPUSCOPE_ASSIGN_OR_RETURN(state.options.level,
                              parse_level(options.at("level").get<std::string>()));
    state.options.gpus = options.value("gpus", std::vector<std::string>{});
    state.options.allow_power_changes = options.value("allow_power_changes", false);
    const json& machine = doc.at("machine");
    state.machine.hostname = machine.value("hostname", "");
    for (const json& g : machine.at("gpus")) {
      Target gpu;
      gpu.gpu_index = static_cast<unsigned>(g.at("index").get<int>());
      gpu.gpu_uuid = g.value("uuid", "");
      gpu.gpu_name = g.value("name", "");
      gpu.name = gpu.gpu_name;
      gpu.mig_mode = g.value("mig_mode", false);
      if (g.contains("mig")) {
        const json& m = g.at("mig");
        gpu.mig = MigPlacement{m.value("gpu_instance_id", 0u), m.value("compute_instance_id", 0u),
                               m.value("uuid", ""), m.value("profile", "")};
        gpu.name = m.value("name", "");
      }
      state.machine.gpus.push_back(std::move(gpu));
    }
    for (const json& s : doc.at("plan")) {
      Step step;
      step.id = s.at("id").get<std::string>();
      GPUSCOPE_ASSIGN_OR_RETURN(step.kind, parse_kind(s.at("kind").get<std::string>()));
      step.gpu = read_optional_int(s, "gpu");
      step.title = s.value("title", step.id);
      step.args = s.value("args", std::vector<std::string>{});
      step.json_on_stdout = s.value("json_on_stdout", true);
      step.estimate_seconds = s.value("estimate_s", 0.0);
      step.timeout_seconds = s.value("timeout_s", 0.0);
      if (s.contains("skip_reason") && s["skip_reason"].is_string()) {
        step.skip_reason = s["skip_reason"].get<std::string>();
      }
      state.plan.push_back(std::move(step));
    }
    for (const auto& [id, r] : doc.at("steps").items()) {
      StepRecord record;
      GPUSCOPE_ASSIGN_OR_RETURN(record.status, parse_status(r.at("status").get<std::string>()));
      record.exit_code = read_optional_int(r, "exit_code");
      record.term_signal = read_optional_int(r, "term_signal");
      record.duration_seconds = r.value("duration_s", 0.0);
      record.message = r.value("message", "");
      record.resumable = r.value("resumable", false);
      record.json_path = r.value("json", "");
      record.log_path = r.value("log", "");
      record.store_path = r.value("store", "");
      state.steps[id] = std::move(record);
    }
    return state;
  } catch (const json::exception& e) {
    return Status(Code::data_error, fmt::format("study.json: {}", e.what()));
  }
}

Status save_state(const fs::path& dir, const State& state) {
  return files::write_file_atomically((dir / kStateFile).string(),
                                      state_to_json(state).dump(2) + "\n");
}

Result<State> load_state(const fs::path& dir) {
  const fs::path path = dir / kStateFile;
  std::error_code ec;
  if (!fs::exists(path, ec)) {
    return Status(Code::not_found,
                  fmt::format("{} is not a study: it has no {}", dir.string(), kStateFile));
  }
  GPUSCOPE_ASSIGN_OR_RETURN(std::string text,
                            files::read_file(path.string(), files::kMaxStateFileBytes));
  json doc = json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return Status(Code::data_error, fmt::format("{} is not valid JSON", path.string()));
  }
  auto state = state_from_json(doc);
  if (!state.ok()) return state.status().with_context(path.string());
  return state;
}

Status check_same_machine(const State& state, const Machine& now) {
  if (state.machine.hostname != now.hostname) {
    return Status(Code::invalid_argument,
                  fmt::format("this study was made on host '{}', this is '{}': start a new study "
                              "here instead of resuming that one",
                              state.machine.hostname, now.hostname));
  }
  for (const Step& step : state.plan) {
    if (!step.gpu) continue;
    auto find = [&](const Machine& m) -> const Target* {
      for (const Target& g : m.gpus) {
        if (!g.mig && static_cast<int>(g.gpu_index) == *step.gpu) return &g;
      }
      return nullptr;
    };
    const Target* then = find(state.machine);
    const Target* here = find(now);
    if (then == nullptr) continue;
    if (here == nullptr || here->gpu_uuid != then->gpu_uuid) {
      return Status(Code::invalid_argument,
                    fmt::format("this study ran on GPU {} {} ({}), which is not GPU {} here "
                                "(found {}): start a new study instead of resuming that one",
                                then->gpu_index, then->gpu_name, then->gpu_uuid, then->gpu_index,
                                here ? here->gpu_uuid : "no such GPU"));
    }
  }
  return {};
}

DirKind classify_dir(const fs::path& dir) {
  std::error_code ec;
  if (!fs::exists(dir, ec)) return DirKind::absent_or_empty;
  if (!fs::is_directory(dir, ec)) return DirKind::not_a_folder;
  if (fs::exists(dir / kStateFile, ec)) return DirKind::study;
  if (fs::is_directory(dir, ec) && fs::is_empty(dir, ec)) return DirKind::absent_or_empty;
  return DirKind::other;
}

Status require_folder(const fs::path& dir, std::string_view option) {
  if (classify_dir(dir) != DirKind::not_a_folder) return {};
  return Status(Code::invalid_argument,
                fmt::format("{} {}: that is a file, and {} takes a folder (the study's files go "
                            "into it); name a folder, new or empty",
                            option, dir.string(), option));
}

}  // namespace gpuscope::study
