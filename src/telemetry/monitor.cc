// run_monitor: opens everything that can fail before anything runs (sinks, the endpoint, the
// command's program), then samples for the command's whole life (or until Ctrl-C, --duration,
// 'q'), and ends every sink with the summary.
//
// Threads: the sampler's (NVML only), the writer's (sinks, summary, live state), a waiter for
// the command (reads its output, reaps it), the HTTP server's, and this one (the live view, or a
// wait loop).
#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <ostream>
#include <thread>

#include "gpuscope/host.h"
#include "gpuscope/monitor.h"
#include "gpuscope/observe.h"
#include "gpuscope/option_checks.h"
#include "gpuscope/version.h"
#include "telemetry/lines_sink.h"
#include "telemetry/live_state.h"
#include "telemetry/live_view.h"
#include "telemetry/recorder.h"

namespace gpuscope::telemetry {
namespace {

using Clock = std::chrono::steady_clock;

std::string default_command_line(const std::vector<std::string>& command) {
  std::string line = "gpuscope monitor";
  if (!command.empty()) line += " --";
  for (const std::string& word : command) line += " " + word;
  return line;
}

Status validate(const MonitorOptions& o) {
  if (!o.command.empty() && o.duration_s) {
    return Status(Code::invalid_argument,
                  "--duration applies only without a command (the command's life is the span)");
  }
  if (o.duration_s) GPUSCOPE_RETURN_IF_ERROR(check_duration("--duration", *o.duration_s));
  return Status{};
}

// The sinks the options ask for, each opened (files created and locked, port bound).
struct OpenedSinks {
  std::vector<std::unique_ptr<Sink>> sinks;
  PrometheusExporter* exporter = nullptr;
  std::unique_ptr<MetricsServer> server;
};

Result<OpenedSinks> open_sinks(const MonitorOptions& o, std::ostream& out) {
  OpenedSinks opened;
  if (o.csv_path) {
    GPUSCOPE_ASSIGN_OR_RETURN(auto sink, open_csv_sink(*o.csv_path));
    opened.sinks.push_back(std::move(sink));
  }
  if (o.jsonl_path) {
    GPUSCOPE_ASSIGN_OR_RETURN(auto sink, open_jsonl_sink(*o.jsonl_path));
    opened.sinks.push_back(std::move(sink));
  }
  if (o.store_path) {
    GPUSCOPE_ASSIGN_OR_RETURN(auto sink, open_store_sink(*o.store_path));
    opened.sinks.push_back(std::move(sink));
  }
  if (o.listen) {
    auto exporter = std::make_unique<PrometheusExporter>();
    GPUSCOPE_ASSIGN_OR_RETURN(opened.server, MetricsServer::start(*o.listen, *exporter));
    opened.exporter = exporter.get();
    opened.sinks.push_back(std::move(exporter));
  }
  if (o.view == View::lines) opened.sinks.push_back(detail::make_lines_sink(out));
  return opened;
}

// Warnings from the writer thread: printed at once, or held while the live view owns the screen.
class Warnings {
 public:
  explicit Warnings(std::ostream& err) : err_(err) {}
  void warn(const std::string& text) {
    std::lock_guard lock(mutex_);
    if (live_ != nullptr) {
      live_->add_message(text);
      held_.push_back(text);
    } else {
      err_ << "gpuscope: warning: " << text << '\n' << std::flush;
    }
  }
  void hold_for(detail::LiveState* live) {
    std::lock_guard lock(mutex_);
    live_ = live;
  }
  void release() {
    std::lock_guard lock(mutex_);
    live_ = nullptr;
    for (const std::string& text : held_) err_ << "gpuscope: warning: " << text << '\n';
    held_.clear();
    err_.flush();
  }

 private:
  std::ostream& err_;
  std::mutex mutex_;
  detail::LiveState* live_ = nullptr;
  std::vector<std::string> held_;
};

// The observed command; its output is read, and it is waited for, on the reader thread of its
// observe::Process.
class Command {
 public:
  Status start(const std::vector<std::string>& argv,
               const std::vector<std::pair<std::string, std::string>>& env, detail::LiveState* live,
               std::ostream& out, std::ostream* stdout_to) {
    observe::Options po;
    po.argv = argv;
    po.env = env;
    po.interrupts = observe::Interrupts::forward;  // a terminal's Ctrl-C reaches us, and we
                                                   // forward it once
    po.linger_seconds = 0.5;
    if (live != nullptr) {
      // While the live view owns the screen, the command's lines go to its output pane; after
      // the view closes ('q' before the command ended), straight to our stdout.
      live_ = live;
      auto sink = [this, &out](std::string_view line) {
        if (view_open_) {
          live_->add_output(std::string(line));
        } else {
          std::lock_guard lock(out_mutex_);
          out << line << '\n' << std::flush;
        }
      };
      po.on_stdout_line = sink;
      po.stderr_mode = StderrMode::lines;
      po.on_stderr_line = sink;
    } else if (stdout_to != nullptr) {
      po.on_stdout_line = [this, stdout_to](std::string_view line) {
        std::lock_guard lock(out_mutex_);
        *stdout_to << line << '\n' << std::flush;
      };
    }
    auto process = observe::Process::start(std::move(po));
    if (!process.ok()) {
      // The system refused the program that check_program found (an unknown binary format):
      // its outcome is what a shell answers, and the session ends as for a command that exited.
      const std::optional<int> code = command_start_exit_code(process.status());
      if (!code) return process.status();
      ProcessExit refused;
      refused.exit_code = *code;
      refused_ = refused;
      start_error_ = process.status().message();
      return Status{};
    }
    process_ = std::move(process).value();
    return Status{};
  }
  pid_t pid() const { return process_ ? process_->pid() : 0; }
  bool done() const { return !process_ || process_->done(); }
  void view_closed() { view_open_ = false; }
  const std::optional<std::string>& start_error() const { return start_error_; }
  Result<ProcessExit> join() {
    if (!process_) return refused_;
    observe::Outcome end = process_->wait();
    if (!end.started()) return end.start_status;
    return end.exit;
  }

 private:
  std::unique_ptr<observe::Process> process_;
  std::atomic<bool> view_open_{true};
  detail::LiveState* live_ = nullptr;
  std::mutex out_mutex_;
  ProcessExit refused_;
  std::optional<std::string> start_error_;
};

}  // namespace

Status check_command(const std::vector<std::string>& argv) {
  if (argv.empty()) return Status(Code::invalid_argument, "no command given");
  return check_program(argv.front());
}

Result<MonitorResult> run_monitor(const nvml::Session& session, const MonitorOptions& o,
                                  std::ostream& out, std::ostream& err) {
  GPUSCOPE_RETURN_IF_ERROR(validate(o));
  const bool with_command = !o.command.empty();
  if (with_command) GPUSCOPE_RETURN_IF_ERROR(check_program(o.command.front()));
  GPUSCOPE_ASSIGN_OR_RETURN(auto sampler, Sampler::open(session, o.sampler));
  GPUSCOPE_ASSIGN_OR_RETURN(OpenedSinks opened, open_sinks(o, out));

  SessionInfo info;
  info.gpus = sampler->gpus();
  info.started_unix_s = sampler->origin_unix_s();
  info.interval_s = std::chrono::duration<double>(o.sampler.interval).count();
  info.host = host_name();
  info.command = o.command;
  info.gpuscope_version = std::string(version());
  info.command_line = o.command_line.empty() ? default_command_line(o.command) : o.command_line;
  if (auto driver = session.driver_version(); driver.ok()) info.driver_version = *driver;
  if (auto cuda = session.cuda_driver_version(); cuda.ok()) {
    info.cuda_driver_version = fmt::format("{}.{}", *cuda / 1000, *cuda % 1000 / 10);
  }
  for (auto& sink : opened.sinks) {
    Status status = sink->begin(info);
    if (!status.ok()) return status.with_context(sink->describe());
  }

  MonitorResult result;
  if (opened.server) {
    result.listening = opened.server->bound_address();
    // Said at once: with PORT 0 this is the only way to learn the port while it serves.
    err << "gpuscope: serving /metrics on http://" << *result.listening << "/metrics\n"
        << std::flush;
  }
  std::unique_ptr<detail::LiveState> live;
  if (o.view == View::live) {
    live = std::make_unique<detail::LiveState>(info.gpus, info.interval_s, o.command,
                                               result.listening.value_or(""));
  }

  // Interrupts: forwarded to the command, or (without one) the way to stop. Another part of this
  // process may hold the forwarding already (tests); then the default handlers stay.
  auto forwarding = InterruptForwarding::install();
  const int signals_before = InterruptForwarding::signals_received();

  std::atomic<pid_t> command_pid{0};
  std::function<bool(unsigned)> is_command_pid;
  if (with_command) {
    is_command_pid = [&command_pid](unsigned pid) {
      const pid_t root = command_pid.load();
      return root > 0 && observe::descends_from(static_cast<pid_t>(pid), root);
    };
  }
  Warnings warnings(err);
  if (live) warnings.hold_for(live.get());
  detail::Recorder recorder(
      std::move(opened.sinks),
      SummaryBuilder(info.gpus, info.started_unix_s, info.interval_s, is_command_pid), live.get(),
      [&warnings](const std::string& t) { warnings.warn(t); });
  recorder.start();
  const Clock::time_point started = Clock::now();
  sampler->start([&recorder](Tick&& tick) { recorder.push(std::move(tick)); });

  Command command;
  if (with_command) {
    Status started_ok = command.start(o.command, o.command_env, live.get(), out,
                                      o.command_stdout_to_err ? &err : nullptr);
    if (!started_ok.ok()) {
      sampler->stop();
      (void)recorder.finish(std::chrono::duration<double>(Clock::now() - started).count());
      warnings.release();
      return started_ok;
    }
    command_pid = command.pid();
  }

  auto should_stop = [&] {
    if (with_command) return command.done();
    if (InterruptForwarding::signals_received() > signals_before) return true;
    if (o.duration_s && Clock::now() - started >= std::chrono::duration<double>(*o.duration_s)) {
      return true;
    }
    return sampler->all_lost();  // a failed sink is reported; the others go on
  };

  bool keep_waiting = true;
  if (live) {
    auto quit = detail::run_live_view(*live, should_stop);
    command.view_closed();
    warnings.release();
    if (!quit.ok()) {
      err << "gpuscope: warning: " << quit.status().message() << '\n';
    } else if (*quit && with_command && !command.done()) {
      err << "gpuscope: live view closed; sampling until the command ends (Ctrl-C interrupts "
             "it)\n";
    } else if (*quit) {
      keep_waiting = false;  // 'q' ends a session without a command
    }
  }
  Clock::time_point last_call = Clock::now();
  while (keep_waiting && !should_stop()) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    if (with_command && o.while_running &&
        Clock::now() - last_call >= std::chrono::duration<double>(o.while_running_interval_s)) {
      last_call = Clock::now();
      o.while_running(command.pid());
    }
  }

  sampler->stop();
  const double wall_s = std::chrono::duration<double>(Clock::now() - started).count();
  result.summary = recorder.finish(wall_s, sampler->reading_costs());
  result.sink_failures = recorder.failures();
  result.interrupted = !with_command && InterruptForwarding::signals_received() > signals_before;
  if (with_command) {
    auto exit = command.join();
    if (!exit.ok()) return exit.status();
    result.command = CommandOutcome{o.command, static_cast<unsigned>(command.pid()), *exit,
                                    command.start_error()};
  }
  return result;
}

}  // namespace gpuscope::telemetry
