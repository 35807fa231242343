// Starting a study: the `info` step into a scratch directory (no GPU: nothing is written), then
// a new plan and study.json, or an earlier study checked to be of this machine.
#include <fmt/format.h>
#include <stdlib.h>

#include "gpuscope/study.h"
#include "gpuscope/version.h"

namespace gpuscope::study {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

constexpr int kExitNoGpu = 3;  // gpuscope's exit code for "no driver / no GPU" (exit_codes.h)

Status check_new_dir(const StartRequest& request) {
  switch (classify_dir(request.dir)) {
    case DirKind::study:
      if (request.force) return {};
      return Status(Code::invalid_argument,
                    fmt::format("{} holds a study already: resume it with `gpuscope study "
                                "--resume {}`, or pass --force to start over",
                                request.dir.string(), request.dir.string()));
    case DirKind::other:
      if (request.force) return {};
      return Status(Code::invalid_argument,
                    fmt::format("{} is not empty and holds no study; choose another -o DIR, or "
                                "pass --force to write into it",
                                request.dir.string()));
    case DirKind::not_a_folder:
      return require_folder(request.dir, "-o");
    case DirKind::absent_or_empty:
    default:
      return {};
  }
}

// What `info` said went wrong, as a Status of the matching code.
Status info_failure(const ChildEnd& end, const StepRecord& record) {
  std::string message = record.message;
  std::string code;
  if (end.output && end.output->contains("error") && (*end.output)["error"].is_object()) {
    const json& e = (*end.output)["error"];
    message = e.value("message", message);
    code = e.value("code", "");
  }
  if (code == "no_driver") return Status(Code::no_driver, message);
  if (code == "no_device") return Status(Code::no_device, message);
  if (code == "permission_denied") return Status(Code::permission_denied, message);
  if (end.exit_code == kExitNoGpu) return Status(Code::no_driver, message);
  return Status(Code::internal, fmt::format("`gpuscope info` failed: {}", message));
}

class ScratchDir {
 public:
  ScratchDir() {
    char name[] = "/tmp/gpuscope-study-XXXXXX";
    if (mkdtemp(name) != nullptr) path_ = name;
  }
  ~ScratchDir() {
    std::error_code ec;
    if (!path_.empty()) fs::remove_all(path_, ec);
  }
  ScratchDir(const ScratchDir&) = delete;
  ScratchDir& operator=(const ScratchDir&) = delete;
  const fs::path& path() const { return path_; }

 private:
  fs::path path_;
};

}  // namespace

Result<State> start_study(const StartRequest& request, StepRunner& runner) {
  State state;
  if (request.resume) {
    GPUSCOPE_RETURN_IF_ERROR(require_folder(request.dir, "--resume"));
    GPUSCOPE_ASSIGN_OR_RETURN(state, load_state(request.dir));
  } else {
    GPUSCOPE_RETURN_IF_ERROR(check_new_dir(request));
    state.options = request.options;
  }

  ScratchDir scratch;
  if (scratch.path().empty()) {
    return Status(Code::io_error, "cannot create a scratch directory in /tmp");
  }
  const Step info_step = make_info_step();
  const StepFiles probe{scratch.path() / "info.json", scratch.path() / "info.log", {}};
  const ChildEnd end = runner.run(info_step, probe);
  StepRecord info = classify_step_end(info_step, end);
  if (info.status == StepStatus::interrupted) {
    return Status(Code::cancelled, "interrupted before anything was measured");
  }
  if (info.status != StepStatus::ok) return info_failure(end, info);
  GPUSCOPE_ASSIGN_OR_RETURN(Machine machine, machine_from_info(*end.output));

  if (request.resume) {
    Status same = check_same_machine(state, machine);
    if (!same.ok()) return same.with_context(request.dir.string());
    return state;
  }

  GPUSCOPE_ASSIGN_OR_RETURN(state.plan, build_plan(state.options, machine));
  std::error_code ec;
  if (request.force) {
    for (const char* name : {"steps", "study.json", "report.html", "gpuscope.db", "summary.json"}) {
      fs::remove_all(request.dir / name, ec);
    }
  }
  fs::create_directories(request.dir / "steps", ec);
  if (ec) {
    return Status(Code::io_error,
                  fmt::format("cannot create {}: {}", request.dir.string(), ec.message()));
  }
  state.gpuscope_version = std::string(version());
  state.started_unix_s = request.now_unix_s;
  state.command_line = request.command_line;
  state.machine = machine;
  const StepFiles files = step_files(request.dir, info_step);
  for (const auto& [from, to] : {std::pair{probe.json, files.json}, {probe.log, files.log}}) {
    fs::copy_file(from, to, fs::copy_options::overwrite_existing, ec);
    if (ec) {
      return Status(Code::io_error, fmt::format("cannot write {}: {}", to.string(), ec.message()));
    }
  }
  info.json_path = "steps/" + files.json.filename().string();
  info.log_path = "steps/" + files.log.filename().string();
  state.steps[info_step.id] = info;
  GPUSCOPE_RETURN_IF_ERROR(save_state(request.dir, state));
  return state;
}

}  // namespace gpuscope::study
