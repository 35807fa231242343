// How a target's run ended, and the exit code of the whole burn.
#include <fmt/format.h>
#include <signal.h>

#include <algorithm>

#include "burn/aggregate.h"
#include "gpuscope/exit_codes.h"

namespace gpuscope::burn {
namespace detail {
namespace {

bool crash_signal(int signal) {
  return signal == SIGSEGV || signal == SIGABRT || signal == SIGBUS || signal == SIGILL ||
         signal == SIGFPE;
}

std::string wrong_results(const TargetResult& r) {
  for (const PrecisionRow& row : r.gemm) {
    const ErrorCounts& e = row.errors;
    if (e.total() == 0) continue;
    return fmt::format(
        "{} GEMM results were wrong: {} mismatching elements, {} NaN, {} Inf, {} reference tiles "
        "out of tolerance",
        precision_name(row.precision), e.mismatches, e.nan_count, e.inf_count,
        e.reference_tiles_failed);
  }
  return "the worker reported a verification failure (exit code 1)";
}

}  // namespace

void decide_outcome(TargetResult& r, const WorkerRun& run, bool interrupted) {
  const WorkerStream& s = run.stream;
  if (!run.start_status.ok() || !run.exit) {
    r.outcome = Outcome::failed;
    r.failure = "the worker did not start: " + run.start_status.message();
    return;
  }
  const ProcessExit& e = *run.exit;

  const auto verification = std::find_if(s.errors.begin(), s.errors.end(), [](const auto& error) {
    return error.code == "verification_failed";
  });
  const bool any_wrong = std::any_of(
      r.gemm.begin(), r.gemm.end(), [](const PrecisionRow& row) { return row.errors.total() > 0; });
  if (verification != s.errors.end() || any_wrong || e.exit_code == kExitCheckFailed) {
    r.outcome = Outcome::verification_failed;
    r.failure = verification != s.errors.end() ? verification->message : wrong_results(r);
    return;
  }

  if (e.exit_code == kExitOk && s.done && s.done->ok) {
    r.outcome = Outcome::passed;
    return;
  }
  const bool stopped_by_signal =
      e.term_signal &&
      (*e.term_signal == SIGINT || *e.term_signal == SIGTERM || *e.term_signal == SIGKILL);
  if (!e.timed_out && (e.exit_code == kExitInterrupted || (interrupted && stopped_by_signal))) {
    r.outcome = Outcome::interrupted;
    return;
  }

  r.outcome = Outcome::failed;
  const auto error = std::find_if(s.errors.begin(), s.errors.end(),
                                  [](const auto& x) { return x.code != "verification_failed"; });
  if (e.timed_out) {
    r.failure = "the worker " + e.describe();
  } else if (e.term_signal) {
    r.failure = crash_signal(*e.term_signal) ? fmt::format("the worker crashed ({})", e.describe())
                                             : fmt::format("the worker was {}", e.describe());
  } else if (error != s.errors.end()) {
    r.failure = fmt::format("{} ({}, worker {})", error->message, error->code, e.describe());
    return;
  } else if (e.exit_code == kExitOk) {
    r.failure = "the worker exited without its final 'done' line";
  } else {
    r.failure = fmt::format("the worker ended with {}", e.describe());
  }
  if (!run.stderr_tail.empty()) {
    r.failure += fmt::format("; its last message: {}", run.stderr_tail.back());
  }
}

}  // namespace detail

int exit_code(const Report& report) {
  const auto& targets = report.targets;
  auto any = [&](Outcome outcome) {
    return std::any_of(targets.begin(), targets.end(),
                       [outcome](const TargetResult& t) { return t.outcome == outcome; });
  };
  if (any(Outcome::verification_failed)) return kExitCheckFailed;
  if (report.interrupted) return kExitInterrupted;
  for (const TargetResult& t : targets) {
    if (t.outcome != Outcome::failed) continue;
    const int code = t.worker_exit_code.value_or(kExitError);
    return code == kExitNoGpu || code == kExitPermission || code == kExitGpuLost ? code
                                                                                 : kExitError;
  }
  if (any(Outcome::interrupted)) return kExitInterrupted;
  return kExitOk;
}

}  // namespace gpuscope::burn
