// The real step runner: the gpuscope executable itself, one child process per step, its stdout
// (the JSON document) and stderr kept in the step's files.
#include <fmt/format.h>

#include <cstdlib>
#include <fstream>
#include <sstream>

#include "gpuscope/exit_codes.h"
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

class ChildRunner final : public StepRunner {
 public:
  explicit ChildRunner(std::string program) : program_(std::move(program)) {}

  ChildEnd run(const Step& step, const StepFiles& files) override {
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
