// `bench --share`: per mode and N, N copies started together (each an observe::Process) behind a
// start barrier, each read as a bench row, the GPU sampled over the interval where all of them were
// timing.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <ostream>

#include "bench/row_telemetry.h"
#include "bench/share_mps.h"
#include "bench/torch_protocol.h"
#include "gpuscope/bench_share.h"
#include "gpuscope/observe.h"
#include "gpuscope/process.h"
#include "sweep/workload.h"

namespace gpuscope::bench {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

double unix_now() {
  return std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
}

// Where one copy runs: its label and, on a MIG instance, CUDA_VISIBLE_DEVICES.
struct Placement {
  std::string label;
  std::string visible_devices;
};

// One running copy: what it printed (on its reader thread) and how it ended.
struct Copy {
  detail::TorchLineReader reader;          // a gpuscope-torch row
  std::vector<detail::TimedWindow> rates;  // a command: one window per rate line
  double last_rate_at = -1;
  std::unique_ptr<observe::Process> process;
  observe::Outcome outcome;  // start_status set when it never started
};

// Readiness of the copies, for the barrier.
struct Barrier {
  std::mutex mutex;
  std::condition_variable changed;
  int ready = 0;
  void mark() {
    {
      std::lock_guard lock(mutex);
      ++ready;
    }
    changed.notify_all();
  }
};

// A row copy that ends before its start line (it could not start, no device, ...) is as ready
// as it will ever be.
class EndWatcher : public observe::Watcher {
 public:
  EndWatcher(const Copy& copy, Barrier& barrier) : copy_(copy), barrier_(barrier) {}
  void started(pid_t) override {}
  void ended(const ProcessExit&) override {
    if (!copy_.reader.output().start) barrier_.mark();
  }

 private:
  const Copy& copy_;
  Barrier& barrier_;
};

std::optional<double> median(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  std::sort(v.begin(), v.end());
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// A command copy's row: its rate lines, its exit.
void fill_command_row(const Copy& c, bool interrupted, Row& row) {
  std::vector<double> rates;
  double samples = 0, seconds = 0;
  for (const auto& w : c.rates) {
    if (w.t1 > w.t0) rates.push_back(w.samples / (w.t1 - w.t0));
    samples += w.samples;
    seconds += w.t1 - w.t0;
  }
  row.samples_per_second = median(rates);
  if (seconds > 0) {
    row.timed_seconds = seconds;
    row.timed_samples = samples;
  }
  const ProcessExit& e = c.outcome.exit;
  if (interrupted) {
    row.skipped = true;
    row.skip_code = "interrupted";
    row.skip_reason = "interrupted";
  } else if (e.timed_out) {
    row.skipped = true;
    row.skip_code = "timeout";
    row.skip_reason = e.describe();
  } else if (!e.success()) {
    row.skipped = true;
    row.skip_code = e.term_signal ? "crashed" : "failed";
    row.skip_reason = "the command ended with " + e.describe();
  } else if (!row.samples_per_second) {
    row.skipped = true;
    row.skip_code = "malformed";
    row.skip_reason =
        "the command printed no {\"samples_per_second\": X} line with a time before it";
  }
  if (row.skipped && !c.outcome.stderr_tail.empty() && row.skip_code != "interrupted") {
    row.skip_reason += " (stderr: " + c.outcome.stderr_tail.back() + ")";
  }
}

const std::vector<detail::TimedWindow>& windows_of(const Copy& c, bool is_row) {
  return is_row ? c.reader.output().windows : c.rates;
}

// The copy's rate over [t0, t1]: its windows' samples inside, pro rata, over their time inside.
std::optional<double> rate_within(const std::vector<detail::TimedWindow>& windows, double t0,
                                  double t1) {
  double samples = 0, seconds = 0;
  for (const auto& w : windows) {
    const double a = std::max(w.t0, t0), b = std::min(w.t1, t1);
    if (b <= a || w.t1 <= w.t0) continue;
    samples += w.samples * (b - a) / (w.t1 - w.t0);
    seconds += b - a;
  }
  if (seconds <= 0) return std::nullopt;
  return samples / seconds;
}

class ShareRunner {
 public:
  ShareRunner(const ShareWorkload& w, const ShareOptions& o, detail::RowSampler* sampler,
              std::ostream& err)
      : w_(w), o_(o), sampler_(sampler), err_(err) {}

  bool mps_pinned = false;  // the private MPS daemon serves only o_.gpu (MpsOptions)

  double now() const {
    return sampler_ ? sampler_->now_s()
                    : std::chrono::duration<double>(Clock::now() - origin_).count();
  }

  ShareTrial run(ShareMode mode, const std::vector<Placement>& where,
                 const std::vector<std::pair<std::string, std::string>>& env) {
    ShareTrial trial;
    trial.mode = mode;
    trial.copies = static_cast<int>(where.size());
    const int n = trial.copies;
    const bool is_row = w_.row.has_value();
    const std::string go_file =
        (fs::path(o_.run_dir) / fmt::format("go-{}-{}", share_mode_name(mode), n)).string();
    // The go file, and the marks the copies leave beside it when they meet again before and
    // after their windows (workloads/torch/share_barrier.h).
    const auto remove_meeting_files = [&go_file, n] {
      std::error_code ignored;
      fs::remove(go_file, ignored);
      for (int i = 0; i < n; ++i) {
        for (const char* phase : {".warm.", ".done."}) {
          fs::remove(go_file + phase + std::to_string(i), ignored);
        }
      }
    };
    remove_meeting_files();

    const double t_start = now();
    const auto wall0 = Clock::now();
    const int interrupts_before = InterruptForwarding::signals_received();
    Barrier barrier;
    std::vector<std::unique_ptr<Copy>> copies;
    std::vector<std::unique_ptr<EndWatcher>> watchers;
    for (int i = 0; i < n; ++i) {
      auto copy = std::make_unique<Copy>();
      Copy* c = copy.get();
      observe::Options po;
      if (is_row) {
        po.argv = {o_.torch_bin};
        const auto args = w_.row->torch_args();
        po.argv.insert(po.argv.end(), args.begin(), args.end());
        // Under a daemon that serves only this GPU, a copy sees it as its one device.
        const bool pinned_mps = mode == ShareMode::mps && mps_pinned;
        if (o_.gpu != 0 && where[i].visible_devices.empty() && !pinned_mps) {
          po.argv.insert(po.argv.end(), {"--device", "cuda:" + std::to_string(o_.gpu)});
        }
        watchers.push_back(std::make_unique<EndWatcher>(*c, barrier));
        po.watchers = {watchers.back().get()};
      } else {
        po.argv = w_.command;
      }
      po.env = {{"CUDA_DEVICE_ORDER", "PCI_BUS_ID"},
                {"GPUSCOPE_SHARE_COPY", std::to_string(i)},
                {"GPUSCOPE_SHARE_COPIES", std::to_string(n)},
                {"GPUSCOPE_SHARE_GO_FILE", go_file}};
      if (!where[i].visible_devices.empty()) po.visible_devices = where[i].visible_devices;
      po.env.insert(po.env.end(), env.begin(), env.end());
      po.clock = [this] { return now(); };
      po.on_json_line = [c, is_row, &barrier](const observe::JsonLine& line) {
        if (is_row) {
          const bool was_ready = c->reader.output().start.has_value();
          c->reader.add(line.text, line.received_s);
          if (!was_ready && c->reader.output().start) barrier.mark();
          return;
        }
        if (auto rate = sweep::detail::parse_samples_per_second(line.text)) {
          const double at = line.received_s;
          if (c->last_rate_at >= 0 && at > c->last_rate_at) {
            c->rates.push_back({c->last_rate_at, at, *rate * (at - c->last_rate_at)});
          }
          c->last_rate_at = at;
        }
      };
      po.stderr_mode = StderrMode::lines;
      po.stderr_tail_lines = 5;
      po.timeout_seconds = o_.trial_timeout_s;
      auto started = observe::Process::start(std::move(po));
      if (!started.ok()) {
        c->outcome.start_status = started.status();
        barrier.mark();
      } else {
        c->process = std::move(started).value();
        if (!is_row) barrier.mark();  // a command may wait for the go file itself
      }
      copies.push_back(std::move(copy));
    }
    {
      std::unique_lock lock(barrier.mutex);
      const auto deadline = Clock::now() + std::chrono::duration<double>(o_.barrier_timeout_s);
      while (barrier.ready < n && Clock::now() < deadline &&
             InterruptForwarding::signals_received() == interrupts_before) {
        barrier.changed.wait_for(lock, std::chrono::milliseconds(50));
      }
    }
    std::ofstream(go_file).put('\n');
    for (auto& copy : copies) {
      if (copy->process) copy->outcome = copy->process->wait();
    }
    remove_meeting_files();
    const bool interrupted = InterruptForwarding::signals_received() > interrupts_before;
    trial.wall_seconds = std::chrono::duration<double>(Clock::now() - wall0).count();

    for (int i = 0; i < n; ++i) {
      Copy& c = *copies[i];
      ShareCopy out;
      out.target = where[i].label;
      if (is_row) out.row.spec = *w_.row;
      if (!c.outcome.started()) {
        out.row.skipped = true;
        out.row.skip_code = "failed";
        out.row.skip_reason = c.outcome.start_status.message();
      } else if (is_row) {
        const ProcessExit& e = c.outcome.exit;
        out.row.wall_seconds = e.wall_seconds;
        detail::fill_row(c.reader.output(), e.exit_code, e.term_signal, e.timed_out, interrupted,
                         out.row);
        if (out.row.skipped && out.row.skip_code == "failed" && !c.outcome.stderr_tail.empty()) {
          out.row.skip_reason += " (stderr: " + c.outcome.stderr_tail.back() + ")";
        }
      } else {
        out.row.wall_seconds = c.outcome.exit.wall_seconds;
        fill_command_row(c, interrupted, out.row);
      }
      trial.runs.push_back(std::move(out));
    }
    aggregate(trial, copies, is_row, t_start);
    return trial;
  }

  // Totals, fairness, memory, fit, and the GPU's energy over the interval all copies timed.
  void aggregate(ShareTrial& trial, const std::vector<std::unique_ptr<Copy>>& copies, bool is_row,
                 double t_start) {
    double t0 = -1e300, t1 = 1e300;
    int measured = 0;
    for (std::size_t i = 0; i < copies.size(); ++i) {
      const ShareCopy& run = trial.runs[i];
      if (run.row.skip_code == "out_of_memory") ++trial.out_of_memory;
      const auto& windows = windows_of(*copies[i], is_row);
      if (run.row.skipped || windows.empty()) continue;
      ++measured;
      t0 = std::max(t0, windows.front().t0);
      t1 = std::min(t1, windows.back().t1);
      if (run.row.peak_reserved_bytes) {
        trial.memory_per_copy_bytes =
            std::max(trial.memory_per_copy_bytes.value_or(0), *run.row.peak_reserved_bytes);
      }
    }
    trial.fits = measured == trial.copies;
    if (measured == 0) return;
    trial.overlapped = t1 > t0;
    if (trial.overlapped) trial.together_seconds = t1 - t0;
    double total = 0, slowest = 1e300, fastest = 0;
    for (std::size_t i = 0; i < copies.size(); ++i) {
      ShareCopy& run = trial.runs[i];
      if (run.row.skipped) continue;
      std::optional<double> rate;
      if (trial.overlapped) rate = rate_within(windows_of(*copies[i], is_row), t0, t1);
      run.together_samples_per_second = rate;
      const double r = rate.value_or(run.row.samples_per_second.value_or(0));
      total += r;
      slowest = std::min(slowest, r);
      fastest = std::max(fastest, r);
    }
    trial.total_samples_per_second = total;
    trial.per_copy_samples_per_second = total / measured;
    if (measured > 1 && fastest > 0) trial.fairness = slowest / fastest;
    if (sampler_ && trial.overlapped) {
      const double t_end = now();
      sampler_->wait_past(t_end);
      Row whole;
      detail::fill_row_telemetry(sampler_->log().snapshot(), {{t0, t1, total * (t1 - t0)}}, t_start,
                                 t_end, whole);
      trial.energy_j = whole.energy_j;
      trial.power_avg_w = whole.power_avg_w;
      trial.energy_per_sample_j = whole.energy_per_sample_j;
      trial.gpu_memory_peak_bytes = whole.gpu_memory_peak_bytes;
      sampler_->log().drop_before(t_end);
    }
  }

 private:
  const ShareWorkload& w_;
  const ShareOptions& o_;
  detail::RowSampler* sampler_;
  std::ostream& err_;
  Clock::time_point origin_ = Clock::now();
};

std::string describe(const ShareTrial& t) {
  if (!t.skip_reason.empty()) return "skipped: " + t.skip_reason;
  std::string text = t.total_samples_per_second
                         ? fmt::format("{:.1f} samples/s in total", *t.total_samples_per_second)
                         : std::string("nothing measured");
  if (t.out_of_memory > 0) text += fmt::format(", {} out of memory", t.out_of_memory);
  return text;
}

}  // namespace

std::string ShareWorkload::label() const {
  if (row) return row->label();
  std::string text;
  for (const auto& arg : command) text += (text.empty() ? "" : " ") + arg;
  return text;
}

Result<ShareResult> run_share(const nvml::Session* session, const ShareWorkload& w,
                              const ShareOptions& o, std::ostream& err) {
  if (o.counts.empty() || o.modes.empty()) {
    return Status(Code::invalid_argument, "--share needs at least one count and one mode");
  }
  if (w.row && o.torch_bin.empty()) {
    return Status(Code::invalid_argument, "no gpuscope-torch to run the row with");
  }
  if (!w.row && w.command.empty()) {
    return Status(Code::invalid_argument, "--share: nothing to run (a row or -- CMD)");
  }
  if (!w.row) GPUSCOPE_RETURN_IF_ERROR(check_program(w.command.front()));
  ShareResult result;
  result.workload = w.label();
  result.gpu_index = o.gpu;
  result.compute_mode = o.compute_mode;
  result.started_unix_s = unix_now();
  const auto wall0 = Clock::now();

  std::unique_ptr<detail::RowSampler> sampler;
  if (session) {
    auto started = detail::RowSampler::start(*session, o.gpu, std::nullopt, o.interval_ms);
    if (!started.ok()) {
      if (started.code() == Code::invalid_argument) return started.status();
      result.warnings.push_back("no telemetry (power, energy): " + started.status().message());
    } else {
      sampler = std::move(started).value();
      result.gpu_name = sampler->gpu().target.name;
      result.gpu_uuid = sampler->gpu().target.gpu_uuid;
    }
    if (auto driver = session->driver_version(); driver.ok()) result.driver_version = *driver;
  } else {
    result.warnings.push_back("no telemetry (power, energy): NVML is not available");
  }
  const bool exclusive = o.compute_mode == "exclusive_process";
  if (exclusive) {
    result.warnings.push_back(
        "the GPU is in exclusive-process compute mode (left as it is): one process at a time, "
        "so time-sliced copies beyond the first cannot start; MPS copies can (its server is "
        "the one process)");
  }
  for (const auto& warning : result.warnings) err << "gpuscope: warning: " << warning << '\n';

  // A private MPS daemon is started here, before any trial, so that a refusal costs nothing.
  std::unique_ptr<detail::MpsDaemon> mps;
  if (std::find(o.modes.begin(), o.modes.end(), ShareMode::mps) != o.modes.end() &&
      o.slices.empty()) {
    MpsOptions pinned = o.mps;
    if (pinned.visible_devices.empty() && result.gpu_uuid)
      pinned.visible_devices = *result.gpu_uuid;
    auto started = detail::MpsDaemon::start(pinned, o.run_dir);
    if (!started.ok()) return started.status();
    mps = std::move(started).value();
    result.mps_daemon = mps->description();
    result.mps_active_thread_percentage = o.mps.active_thread_percentage;
    if (o.progress) err << "share: MPS daemon " << result.mps_daemon << '\n' << std::flush;
  }

  auto forwarding = InterruptForwarding::install();
  const int interrupts_before = InterruptForwarding::signals_received();
  ShareRunner runner(w, o, sampler.get(), err);
  runner.mps_pinned = mps && mps->is_private() && result.gpu_uuid.has_value();
  const std::string whole = fmt::format("GPU {}", o.gpu);
  for (ShareMode mode : o.modes) {
    std::vector<std::vector<Placement>> plans;
    std::string skip;
    if (mode == ShareMode::mig) {
      if (o.slices.empty()) {
        skip = fmt::format("GPU {} is not in MIG mode (no MIG instance)", o.gpu);
        plans.push_back({});
      } else {
        std::vector<Placement> all;
        for (const auto& s : o.slices) all.push_back({s.label, s.uuid});
        plans.push_back(all);
      }
    } else {
      for (int n : o.counts) plans.push_back(std::vector<Placement>(n, Placement{whole, ""}));
    }
    for (const auto& where : plans) {
      if (InterruptForwarding::signals_received() > interrupts_before) break;
      ShareTrial trial;
      trial.mode = mode;
      trial.copies = static_cast<int>(where.size());
      std::string why = skip;
      if (why.empty() && mode != ShareMode::mig && !o.slices.empty()) {
        why = fmt::format(
            "GPU {} is in MIG mode: a process runs on one MIG instance (use --share-mode mig)",
            o.gpu);
      }
      if (why.empty() && mode == ShareMode::timeslice && exclusive && trial.copies > 1) {
        why = "exclusive-process compute mode: one process at a time";
      }
      if (o.progress) {
        err << fmt::format("share {} x{}: {}\n", share_mode_name(mode), trial.copies,
                           result.workload)
            << std::flush;
      }
      if (why.empty()) {
        std::vector<std::pair<std::string, std::string>> env;
        if (mode == ShareMode::mps && mps) env = mps->client_env();
        trial = runner.run(mode, where, env);
      } else {
        trial.skip_reason = why;
      }
      if (o.progress) err << "share   " << describe(trial) << '\n' << std::flush;
      result.trials.push_back(std::move(trial));
    }
  }
  result.interrupted = InterruptForwarding::signals_received() > interrupts_before;
  sampler.reset();
  if (mps) {
    if (Status stopped = mps->stop(); !stopped.ok()) result.warnings.push_back(stopped.message());
  }
  result.wall_seconds = std::chrono::duration<double>(Clock::now() - wall0).count();
  summarize_share(result);
  return result;
}

}  // namespace gpuscope::bench
