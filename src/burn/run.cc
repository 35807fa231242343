// Runs the workers (observed processes, each read on its own thread), the telemetry sampler, and
// the progress callback; then aggregates.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <mutex>
#include <thread>

#include "burn/aggregate.h"
#include "burn/interconnect.h"
#include "gpuscope/burn.h"
#include "gpuscope/exit_codes.h"
#include "gpuscope/host.h"
#include "gpuscope/observe.h"
#include "gpuscope/telemetry.h"
#include "gpuscope/version.h"

namespace gpuscope::burn {
namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kStderrLinesKept = 20;
constexpr auto kProgressPeriod = std::chrono::milliseconds(250);

// One worker while it runs; its reader thread writes, the calling thread reads.
struct Live {
  std::mutex mutex;
  detail::WorkerRun run;
  bool finished = false;
};

std::vector<Precision> planned_precisions(const Options& options) {
  if (!options.precisions.empty()) return options.precisions;
  return {kAllPrecisions.begin(), kAllPrecisions.end()};
}

std::vector<std::string> planned_phases(const Options& options) {
  std::vector<std::string> phases;
  for (Precision p : planned_precisions(options)) phases.emplace_back(precision_name(p));
  if (options.memory) phases.emplace_back("memory");
  if (options.host_link) phases.emplace_back("host link");
  return phases;
}

// A limit no healthy worker reaches: setup and algorithm timing take seconds per precision, the
// host-link sweep about a minute on a PCIe Gen4 GPU.
double default_timeout(const Options& options) {
  const auto precisions = static_cast<double>(planned_precisions(options).size());
  return 300 + precisions * (2 * options.duration_seconds + 120) + (options.memory ? 120 : 0) +
         (options.host_link ? 300 : 0);
}

// Where a worker is, from what it has said so far.
TargetProgress progress_of(const std::string& label, const detail::WorkerRun& run, bool finished,
                           const std::vector<std::string>& phases) {
  const detail::WorkerStream& s = run.stream;
  TargetProgress p;
  p.label = label;
  p.steps = static_cast<int>(phases.size());
  p.finished = finished;
  auto at = [&](const std::string& phase) {
    p.phase = phase;
    const auto it = std::find(phases.begin(), phases.end(), phase);
    p.step = it == phases.end() ? p.steps : static_cast<int>(it - phases.begin()) + 1;
  };
  auto after = [&](const std::string& phase) {
    const auto it = std::find(phases.begin(), phases.end(), phase);
    if (it == phases.end() || it + 1 == phases.end()) {
      at("finishing");
    } else {
      at(*(it + 1));
    }
  };
  if (finished) {
    at("done");
    p.failed = !run.start_status.ok() || !run.exit ||
               (run.exit->exit_code != kExitOk && run.exit->exit_code != kExitInterrupted);
    return p;
  }
  if (s.last_type.empty()) {
    p.phase = "starting";
    return p;
  }
  if (s.done) {  // reported everything; the process is exiting
    at("finishing");
    return p;
  }
  if (s.last_type == "memory_bw") {
    at("memory");
    return p;
  }
  if (s.last_type == "host_link" || s.last_type == "overlap") {
    at("host link");
    return p;
  }
  if (s.last_type == "skipped" && !s.skipped.empty()) {
    const std::string& what = s.skipped.back().what;
    after(what == "host_link" || what == "overlap" ? "host link" : what);
    return p;
  }
  if (!s.last_precision) {
    at(phases.empty() ? "starting" : phases.front());
    return p;
  }
  const std::string current(precision_name(*s.last_precision));
  if (s.last_type == "gemm_result" || s.last_type == "error") {
    after(current);
    return p;
  }
  at(current);
  if (s.last_progress && s.last_progress->precision == *s.last_precision) {
    p.elapsed_seconds = s.last_progress->elapsed_seconds;
    p.fraction = s.last_progress->fraction;
  }
  return p;
}

// The target's samples out of every GPU's (a MIG instance sees its own GPM), and the readings
// that failed on its GPU.
detail::TargetTelemetry telemetry_of(const Target& target,
                                     const std::vector<telemetry::GpuSample>& all) {
  detail::TargetTelemetry telemetry;
  for (const telemetry::GpuSample& s : all) {
    if (s.gpu != target.gpu_index) continue;
    for (const std::string& problem : s.problems) telemetry.problems.push_back(problem);
    if (!s.lost) telemetry.samples.push_back(s);
  }
  if (target.mig) {
    telemetry.samples = telemetry::instance_view(telemetry.samples, target.mig->gpu_instance_id);
  }
  return telemetry;
}

}  // namespace

Result<Report> run(const nvml::Session& session, const SystemInfo& info, const Plan& plan,
                   const Options& options, const ProgressCallback& progress) {
  if (plan.targets.empty()) return Status(Code::no_device, "no GPU to burn");
  // A missing worker is a broken installation, not a wrong argument: io_error.
  std::string worker = options.worker;
  if (worker.empty()) {
    Result<std::string> located = locate_worker();
    if (!located.ok()) return Status(Code::io_error, located.status().message());
    worker = *located;
  } else if (access(worker.c_str(), X_OK) != 0) {
    return Status(Code::io_error,
                  fmt::format("the burn worker {} is not an executable file", worker));
  }

  std::unique_ptr<InterruptForwarding> forwarding;
  if (options.forward_interrupts) {
    GPUSCOPE_ASSIGN_OR_RETURN(forwarding, InterruptForwarding::install());
  }

  // The shared sampler, on every GPU of the plan (a MIG target's selector samples its GPU, with
  // GPM for its instance); the workers' lines are stamped on its clock.
  telemetry::SamplerOptions sampling;
  // The sampler's minimum is 20 ms; a shorter --sample-interval (a test's) samples at that.
  sampling.interval = std::max(telemetry::kMinInterval,
                               std::chrono::duration_cast<std::chrono::milliseconds>(
                                   std::chrono::duration<double>(options.sample_interval_seconds)));
  sampling.slow_interval = sampling.interval;
  sampling.processes = false;
  for (const Target& target : plan.targets) sampling.gpus.push_back(target.uuid());
  Result<std::unique_ptr<telemetry::Sampler>> sampler = telemetry::Sampler::open(session, sampling);
  std::mutex samples_mutex;
  std::vector<telemetry::GpuSample> samples;
  const Clock::time_point origin = sampler.ok() ? (*sampler)->origin() : Clock::now();
  if (sampler.ok()) {
    (*sampler)->start([&](telemetry::Tick&& tick) {
      std::lock_guard lock(samples_mutex);
      for (telemetry::GpuSample& s : tick.gpus) samples.push_back(std::move(s));
    });
  }

  const std::vector<std::string> phases = planned_phases(options);
  std::vector<std::string> argv = {worker};
  for (std::string& arg : worker_arguments(options)) argv.push_back(std::move(arg));
  const double timeout = options.worker_timeout_seconds.value_or(default_timeout(options));

  std::vector<std::unique_ptr<Live>> live;
  std::vector<std::unique_ptr<observe::Process>> workers;
  for (const Target& target : plan.targets) {
    live.push_back(std::make_unique<Live>());
    Live& state = *live.back();
    observe::Options o;
    o.argv = argv;
    o.visible_devices = target.uuid();
    // Ctrl-C reaches the workers once, through the forwarding; without it, only the timeout.
    o.interrupts =
        options.forward_interrupts ? observe::Interrupts::forward : observe::Interrupts::isolate;
    o.timeout_seconds = timeout;
    o.stderr_mode = StderrMode::lines;
    o.clock = [origin] { return std::chrono::duration<double>(Clock::now() - origin).count(); };
    o.on_json_line = [&state](const observe::JsonLine& line) {
      std::lock_guard lock(state.mutex);
      // Bad lines are counted in the stream.
      (void)detail::add_line(state.run.stream, line.text, line.received_s);
    };
    o.on_stderr_line = [&state](std::string_view line) {
      std::lock_guard lock(state.mutex);
      state.run.stderr_tail.emplace_back(line);
      if (state.run.stderr_tail.size() > kStderrLinesKept) state.run.stderr_tail.pop_front();
    };
    auto started = observe::Process::start(std::move(o));
    if (started.ok()) {
      workers.push_back(std::move(started).value());
    } else {
      workers.emplace_back();
      std::lock_guard lock(state.mutex);
      state.run.start_status = started.status();
      state.finished = true;
    }
  }
  // A worker that has ended: how, into its state.
  auto collect = [&](std::size_t i) {
    if (!workers[i] || !workers[i]->done()) return;
    const observe::Outcome end = workers[i]->wait();
    workers[i].reset();
    std::lock_guard lock(live[i]->mutex);
    if (end.started()) {
      live[i]->run.exit = end.exit;
    } else {
      live[i]->run.start_status = end.start_status;
    }
    live[i]->finished = true;
  };

  for (;;) {
    Progress snapshot;
    snapshot.elapsed_seconds = std::chrono::duration<double>(Clock::now() - origin).count();
    snapshot.interrupted = forwarding && InterruptForwarding::signals_received() > 0;
    bool all_finished = true;
    for (std::size_t i = 0; i < live.size(); ++i) {
      collect(i);
      std::lock_guard lock(live[i]->mutex);
      all_finished = all_finished && live[i]->finished;
      snapshot.targets.push_back(
          progress_of(plan.targets[i].label(), live[i]->run, live[i]->finished, phases));
    }
    if (progress) progress(snapshot);
    if (all_finished) break;
    std::this_thread::sleep_for(kProgressPeriod);
  }
  if (sampler.ok()) (*sampler)->stop();

  Report report;
  report.gpuscope_version = std::string(version());
  report.hostname = info.hostname.empty() ? host_name() : info.hostname;
  report.driver_version = info.driver_version;
  report.cuda_driver_version = info.cuda_driver_version;
  report.options = options;
  report.worker = worker;
  report.interrupted = forwarding && InterruptForwarding::signals_received() > 0;
  report.wall_seconds = std::chrono::duration<double>(Clock::now() - origin).count();

  detail::AggregateContext context;
  context.precisions = planned_precisions(options);
  context.interrupted = report.interrupted;
  for (std::size_t i = 0; i < plan.targets.size(); ++i) {
    const Target& target = plan.targets[i];
    detail::TargetTelemetry telemetry = telemetry_of(target, samples);
    if (!sampler.ok()) telemetry.problems.push_back(sampler.status().to_string());
    context.targets_on_gpu = static_cast<int>(
        std::count_if(plan.targets.begin(), plan.targets.end(),
                      [&](const Target& t) { return t.gpu_index == target.gpu_index; }));
    report.targets.push_back(detail::aggregate_target(target, live[i]->run, &telemetry, context));
  }
  if (const auto gpus = detail::interconnect_gpus(plan);
      options.interconnect && !gpus.empty() && !report.interrupted) {
    if (progress) {
      Progress snapshot;
      snapshot.elapsed_seconds = std::chrono::duration<double>(Clock::now() - origin).count();
      for (const Target* gpu : gpus) {
        TargetProgress p;
        p.label = gpu->label();
        p.phase = "interconnect";
        snapshot.targets.push_back(p);
      }
      progress(snapshot);
    }
    report.interconnect = detail::measure_interconnect(gpus, worker, options);
    report.interconnect->links = detail::links_between(session, gpus);
    report.interrupted = forwarding && InterruptForwarding::signals_received() > 0;
    report.wall_seconds = std::chrono::duration<double>(Clock::now() - origin).count();
  }
  return report;
}

}  // namespace gpuscope::burn
