// The swept workload: one process for the whole sweep, whose speed comes from the JSON lines it
// prints on stdout, {"samples_per_second": X} (other lines pass through to the progress stream,
// except a protocol's lines with a "type": gpuscope-torch's and the burn worker's).
#pragma once

#include <chrono>
#include <iosfwd>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "gpuscope/observe.h"
#include "gpuscope/status.h"
#include "gpuscope/sweep.h"

namespace gpuscope::sweep::detail {

// The speed in one stdout line, or nullopt when it is not such a line. A line with a "type"
// (gpuscope-torch's protocol) counts only as a "window": its result and batch-probe lines carry
// a samples_per_second too, but not of a window.
std::optional<double> parse_samples_per_second(std::string_view line);
// The rate in a parsed line as `spec` says where it is (WorkloadSpec::rate_line_type, rate_key).
std::optional<double> rate_of(const nlohmann::json& line, const WorkloadSpec& spec);

class Workload {
 public:
  // Starts spec.command with spec.env (its own process group, stdin /dev/null); times are
  // seconds since `origin`. Fails as observe::Process::start does.
  static Result<std::unique_ptr<Workload>> start(const WorkloadSpec& spec,
                                                 std::chrono::steady_clock::time_point origin,
                                                 std::ostream& passthrough);
  ~Workload();  // stop()
  Workload(const Workload&) = delete;
  Workload& operator=(const Workload&) = delete;

  // The speeds reported in (t0, t1].
  std::vector<double> rates_between(double t0, double t1) const;
  // Seconds since origin now.
  double now_s() const;
  // How it ended, once it has (nullopt while it runs).
  std::optional<ProcessExit> ended() const;
  // The reason in its last {"type": "skipped", "reason": ...} line (gpuscope-torch: it cannot
  // run here, e.g. a precision mode this GPU lacks), or its last "error" line's message.
  std::optional<std::string> skipped_reason() const;
  std::optional<std::string> error_message() const;
  // SIGTERM, then SIGKILL after 10 s; waits for it. Idempotent.
  void stop() noexcept;

 private:
  struct State;
  explicit Workload(std::unique_ptr<State> state);
  std::unique_ptr<State> state_;
};

}  // namespace gpuscope::sweep::detail
