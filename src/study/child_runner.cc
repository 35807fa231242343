// The real step runner: the gpuscope executable itself, one child process per step, its stdout
// (the JSON document) and stderr kept in the step's files. The `info` step needs no isolation
// (it reads NVML and CUDA's device list, creating no CUDA context): it runs in this process.
#include <fmt/format.h>

#include <chrono>
#include <cstdlib>
#include <fstream>
#include <sstream>

#include "gpuscope/cuda_probe.h"
#include "gpuscope/exit_codes.h"
#include "gpuscope/info.h"
#include "gpuscope/info_report.h"
#include "gpuscope/nvml.h"
#include "gpuscope/observe.h"
#include "gpuscope/study.h"
#include "study/json_file.h"

namespace gpuscope::study {
namespace {

namespace fs = std::filesystem;

// How long a step past its timeout has, after SIGTERM, before SIGKILL.
constexpr double kStepKillGraceSeconds = 30;

using nlohmann::json;

std::string replace_all(std::string text, const std::string& from, const std::string& to) {
  for (std::size_t pos = 0; (pos = text.find(from, pos)) != std::string::npos; pos += to.size()) {
    text.replace(pos, from.size(), to);
  }
  return text;
}

using detail::read_json;

// What `gpuscope info --json` would print and exit with, from collect_info in this process.
ChildEnd run_info_here(const Step& step, const StepFiles& files) {
  const auto started = std::chrono::steady_clock::now();
  ChildEnd end;
  std::ofstream log(files.log, std::ios::trunc);
  log << "# gpuscope study step " << step.id << ": collect_info in the study's own process\n";
  Result<SystemInfo> info = [] {
    auto session = nvml::Session::open();
    if (!session.ok()) return Result<SystemInfo>(session.status());
    return collect_info(**session, probe_cuda(), InfoOptions{});
  }();
  Status failed = info.ok() ? Status() : info.status();
  if (info.ok() && !info->failures.empty()) failed = info->failures.front().status;
  const json document = info.ok() ? info_to_json(*info) : info_error_json(info.status());
  std::ofstream(files.json, std::ios::trunc) << document.dump(2) << '\n';
  if (!failed.ok()) {
    end.stderr_tail = "gpuscope: error: " + failed.message();
    log << end.stderr_tail << '\n';
  }
  end.exit_code = failed.ok() ? int{kExitOk} : exit_code_for(failed.code());
  end.output = document;
  end.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  log << "# ended: exit " << *end.exit_code << '\n';
  return end;
}

class ChildRunner final : public StepRunner {
 public:
  explicit ChildRunner(std::string program) : program_(std::move(program)) {}

  ChildEnd run(const Step& step, const StepFiles& files) override {
    if (step.kind == StepKind::info) return run_info_here(step, files);
    ChildEnd end;
    observe::Options options;
    options.argv.push_back(program_);
    for (const std::string& arg : step.args) {
      options.argv.push_back(replace_all(replace_all(arg, "{json}", files.json.string()), "{store}",
                                         files.store.string()));
    }
    std::ofstream log(files.log, std::ios::trunc);
    log << "# gpuscope study step " << step.id << ":";
    for (const std::string& a : options.argv) log << ' ' << a;
    log << '\n';
    std::ofstream out;
    if (step.json_on_stdout) {
      out.open(files.json, std::ios::trunc);
      options.on_stdout_line = [&out](std::string_view line) { out << line << '\n'; };
    } else {
      options.on_stdout_line = [&log](std::string_view line) { log << line << '\n'; };
    }
    options.stderr_mode = StderrMode::lines;
    options.on_stderr_line = [&log, &end](std::string_view line) {
      log << line << '\n';
      // Progress lines end in '\r' redraws; keep the last real line as the step's last words.
      std::string text(
          line.substr(line.rfind('\r') == std::string_view::npos ? 0 : line.rfind('\r') + 1));
      if (text.find_first_not_of(" \t") != std::string::npos) end.stderr_tail = text;
    };
    if (step.timeout_seconds > 0) options.timeout_seconds = step.timeout_seconds;
    // A step past its time gets SIGTERM and this long to stop cleanly before SIGKILL: bench
    // stops its current row (the child ends its window) and still writes the rows it finished.
    options.kill_grace_seconds = kStepKillGraceSeconds;
    options.interrupts = observe::Interrupts::forward;

    const observe::Outcome outcome = observe::run(std::move(options));
    out.close();
    end.interrupted = outcome.interrupted;
    if (!outcome.started()) {
      end.exit_code = outcome.command_exit_code().value_or(kExitError);
      end.stderr_tail = outcome.start_status.message();
      log << "gpuscope study: cannot start the step: " << outcome.start_status.message() << '\n';
      return end;
    }
    const ProcessExit* exit = &outcome.exit;
    end.exit_code = exit->exit_code;
    end.term_signal = exit->term_signal;
    end.timed_out = exit->timed_out;
    end.seconds = exit->wall_seconds;
    end.output = read_json(files.json);
    if (!end.output && step.json_on_stdout) {
      std::error_code ec;
      fs::remove(files.json, ec);
    }
    log << "# ended: " << exit->describe() << '\n';
    return end;
  }

 private:
  std::string program_;
};

}  // namespace

std::unique_ptr<StepRunner> make_child_runner(std::string program) {
  if (program.empty()) {
    const char* env = std::getenv("GPUSCOPE_STUDY_SELF");
    program = env != nullptr && *env != '\0' ? env : "";
  }
  if (program.empty()) {
    std::error_code ec;
    fs::path self = fs::read_symlink("/proc/self/exe", ec);
    program = ec ? "/proc/self/exe" : self.string();
  }
  return std::make_unique<ChildRunner>(std::move(program));
}

}  // namespace gpuscope::study
