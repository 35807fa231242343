// Running the plan: step files, what a step's end means, progress and time estimates, and the
// loop that runs the steps not yet done and saves the state after each.
#include <fmt/format.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <optional>
#include <thread>

#include "gpuscope/bench.h"
#include "gpuscope/exit_codes.h"
#include "gpuscope/process.h"
#include "gpuscope/study.h"

namespace gpuscope::study {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

double now_seconds() {
  using clock = std::chrono::steady_clock;
  return std::chrono::duration<double>(clock::now().time_since_epoch()).count();
}

std::string relative_to(const fs::path& dir, const fs::path& file) {
  std::error_code ec;
  if (!fs::exists(file, ec)) return "";
  return fs::relative(file, dir, ec).string();
}

// What the child said went wrong: its JSON error message, else its last stderr line.
std::string child_reason(const ChildEnd& end) {
  if (end.output && end.output->is_object() && end.output->contains("error")) {
    const json& e = (*end.output)["error"];
    if (e.is_object() && e.contains("message")) return e["message"].get<std::string>();
    if (e.is_string()) return e.get<std::string>();
  }
  return end.stderr_tail;
}

std::string describe_exit(const ChildEnd& end) {
  ProcessExit exit;
  exit.exit_code = end.exit_code;
  exit.term_signal = end.term_signal;
  exit.timed_out = end.timed_out;
  exit.wall_seconds = end.seconds;
  return exit.describe();
}

bool has_rows(const json& doc) {
  return doc.is_object() && doc.contains("rows") && doc["rows"].is_array() && !doc["rows"].empty();
}

// An unfinished bench attempt's JSON (rewritten after every row) that `bench --resume` can go
// on from: a bench document with rows that was not written at its end. Its share of the
// matrix already done (the rows bench will keep), or nullopt when there is none to go on from.
std::optional<double> resumable_bench(const Step& step, const StepFiles& files) {
  if (step.kind != StepKind::bench) return std::nullopt;
  std::error_code ec;
  if (!fs::exists(files.json, ec)) return std::nullopt;
  auto earlier = bench::load_bench_json(files.json.string());
  if (!earlier.ok() || earlier->rows.empty()) return std::nullopt;
  const auto kept = std::count_if(earlier->rows.begin(), earlier->rows.end(), bench::row_is_final);
  return earlier->planned > 0 ? static_cast<double>(kept) / static_cast<double>(earlier->planned)
                              : 0.0;
}

constexpr double kMinEstimateToLearnFrom = 20;

double clamp_ratio(double measured, double estimated) {
  if (estimated <= 0 || measured <= 0) return 1.0;
  return std::clamp(measured / estimated, 0.5, 3.0);
}

}  // namespace

StepFiles step_files(const fs::path& dir, const Step& step) {
  const fs::path steps = fs::absolute(dir) / "steps";
  StepFiles files;
  files.json = steps / (step.id + ".json");
  files.log = steps / (step.id + ".log");
  if (step.kind == StepKind::bench || step.kind == StepKind::sweep) {
    files.store = steps / (step.id + ".db");
  }
  return files;
}

StepRecord classify_step_end(const Step& step, const ChildEnd& end) {
  StepRecord r;
  r.exit_code = end.exit_code;
  r.term_signal = end.term_signal;
  r.duration_seconds = end.seconds;
  const bool parsed = end.output.has_value() && !end.output->contains("error");
  const std::string reason = child_reason(end);

  if (end.timed_out) {
    r.status = StepStatus::failed;
    r.message = fmt::format("stopped: {}", describe_exit(end));
    if (parsed && has_rows(*end.output)) {
      r.message += "; the rows measured are kept";
      if (step.kind == StepKind::bench) {
        r.resumable = true;
        r.message += " and --resume goes on from them";
      }
    }
    return r;
  }
  if (end.interrupted || end.exit_code == 130) {
    r.status = StepStatus::interrupted;
    r.message = step.kind == StepKind::bench && parsed && has_rows(*end.output)
                    ? "interrupted; goes on from its finished rows on --resume"
                    : "interrupted; redone on --resume";
    return r;
  }
  if (end.term_signal) {
    r.status = StepStatus::failed;
    r.message = fmt::format("crashed: {}", describe_exit(end));
    if (!end.stderr_tail.empty()) r.message += fmt::format(" (last words: {})", end.stderr_tail);
    return r;
  }
  if (end.exit_code == kExitNoGpu) {
    r.status = StepStatus::skipped;
    r.message = reason.empty() ? "no GPU to measure (exit code 3)" : reason;
    return r;
  }
  if (end.exit_code == 0) {
    if (end.output) {
      r.status = StepStatus::ok;
    } else {
      r.status = StepStatus::failed;
      r.message = "ended without its JSON output";
    }
    return r;
  }
  switch (step.kind) {
    case StepKind::burn:
      if (parsed && end.exit_code == 1) {
        r.status = StepStatus::ok;
        r.message = "burn found problems (exit code 1): see the problems found";
        return r;
      }
      break;
    case StepKind::bench:
      if (parsed && has_rows(*end.output)) {
        r.status = StepStatus::failed;
        r.message = fmt::format("{}; the rows measured are kept{}", describe_exit(end),
                                reason.empty() ? "" : ": " + reason);
        return r;
      }
      r.status = StepStatus::skipped;
      r.message =
          reason.empty() ? fmt::format("bench could not run ({})", describe_exit(end)) : reason;
      return r;
    default:
      break;
  }
  r.status = StepStatus::failed;
  r.message =
      reason.empty() ? describe_exit(end) : fmt::format("{}: {}", describe_exit(end), reason);
  return r;
}

double estimate_remaining(const State& state, const std::string& current_step_id,
                          double current_elapsed_seconds, double current_done_fraction) {
  double measured = 0, estimated = 0;
  for (const Step& step : state.plan) {
    auto it = state.steps.find(step.id);
    if (it == state.steps.end() || step.skip_reason || !step_done(state, step.id)) continue;
    if (it->second.status == StepStatus::skipped) continue;
    // A step of a few seconds (info) says nothing about how long the long ones will take.
    if (step.estimate_seconds < kMinEstimateToLearnFrom) continue;
    measured += it->second.duration_seconds;
    estimated += step.estimate_seconds;
  }
  const double ratio = estimated > 0 ? clamp_ratio(measured, estimated) : 1.0;
  double remaining = 0;
  for (const Step& step : state.plan) {
    if (step.skip_reason || step_done(state, step.id)) continue;
    double left = step.estimate_seconds * ratio;
    if (step.id == current_step_id) {
      left *= 1 - std::clamp(current_done_fraction, 0.0, 1.0);
      // A step that overruns its estimate is assumed to need a little longer, not none.
      left = std::max(left - current_elapsed_seconds, std::min(left, 10.0) * 0.1);
    }
    remaining += left;
  }
  return remaining;
}

std::string progress_line(const Progress& p) {
  const std::string title = p.step ? p.step->title : "";
  if (p.step_finished && p.record) {
    std::string line = fmt::format("[{}/{}] {}: {} in {}", p.index, p.total, title,
                                   step_status_name(p.record->status),
                                   format_duration(p.record->duration_seconds));
    if (!p.record->message.empty()) line += " — " + p.record->message;
    return line;
  }
  return fmt::format("[{}/{}] {} · step {} · study {} elapsed · ~{} left", p.index, p.total, title,
                     format_duration(p.step_elapsed_seconds),
                     format_duration(p.study_elapsed_seconds),
                     format_duration(p.remaining_seconds));
}

Result<RunOutcome> run_steps(State& state, const fs::path& dir, StepRunner& runner,
                             const RunOptions& options) {
  RunOutcome outcome;
  std::error_code ec;
  fs::create_directories(dir / "steps", ec);
  if (ec) {
    return Status(Code::io_error,
                  fmt::format("cannot create {}: {}", (dir / "steps").string(), ec.message()));
  }
  double earlier = 0;  // time spent in steps of this study before this call
  for (const auto& [id, record] : state.steps) earlier += record.duration_seconds;
  const double start = now_seconds();

  for (std::size_t i = 0; i < state.plan.size(); ++i) {
    const Step& step = state.plan[i];
    if (step_done(state, step.id)) continue;
    if (options.stop_requested && options.stop_requested()) {
      outcome.interrupted = true;
      return outcome;
    }
    Progress progress;
    progress.index = i + 1;
    progress.total = state.plan.size();
    progress.step = &step;

    StepRecord record;
    if (step.skip_reason) {
      record.status = StepStatus::skipped;
      record.message = *step.skip_reason;
    } else {
      const StepFiles files = step_files(dir, step);
      // An unfinished attempt's leftovers go, except the rows an unfinished bench measured:
      // the bench goes on from them (its store is written afresh at its end).
      Step attempt = step;
      attempt.args = resolve_step_args(state, dir, step);
      const std::optional<double> done_before = resumable_bench(step, files);
      const bool resume = done_before.has_value();
      if (resume) attempt.args.insert(attempt.args.end(), {"--resume", "{json}"});
      for (const fs::path& p : {files.json, files.log, files.store}) {
        if (!p.empty() && !(resume && p == files.json)) fs::remove(p, ec);
      }
      const double step_start = now_seconds();
      auto report = [&](double step_elapsed) {
        if (!options.on_progress) return;
        progress.step_elapsed_seconds = step_elapsed;
        progress.study_elapsed_seconds = earlier + (now_seconds() - start);
        progress.remaining_seconds =
            estimate_remaining(state, step.id, step_elapsed, done_before.value_or(0));
        options.on_progress(progress);
      };
      report(0);
      // A ticker reports progress while the child runs.
      std::mutex mutex;
      std::condition_variable wake;
      bool done = false;
      std::thread ticker([&] {
        std::unique_lock<std::mutex> lock(mutex);
        while (!wake.wait_for(lock, std::chrono::duration<double>(options.tick_seconds),
                              [&] { return done; })) {
          report(now_seconds() - step_start);
        }
      });
      ChildEnd end = runner.run(attempt, files);
      {
        std::lock_guard<std::mutex> lock(mutex);
        done = true;
      }
      wake.notify_all();
      ticker.join();
      record = classify_step_end(step, end);
      // A bench that went on from its rows took its earlier attempt's time too.
      if (auto it = state.steps.find(step.id); resume && it != state.steps.end()) {
        record.duration_seconds += it->second.duration_seconds;
      }
      record.json_path = relative_to(dir, files.json);
      record.log_path = relative_to(dir, files.log);
      if (!files.store.empty()) record.store_path = relative_to(dir, files.store);
      ++outcome.steps_run;
      if (end.exit_code == kExitNoGpu) outcome.no_gpu = record.message;
    }
    state.steps[step.id] = record;
    GPUSCOPE_RETURN_IF_ERROR(save_state(dir, state));
    if (options.on_progress) {
      progress.step_finished = true;
      progress.record = &state.steps[step.id];
      progress.study_elapsed_seconds = earlier + (now_seconds() - start);
      options.on_progress(progress);
    }
    if (record.status == StepStatus::interrupted) {
      outcome.interrupted = true;
      return outcome;
    }
    // Every later step would measure nothing too.
    if (outcome.no_gpu) return outcome;
  }
  return outcome;
}

}  // namespace gpuscope::study
