// gpuscope-torch's JSON lines (protocol version 1, workloads/torch/README.md) read into what a
// bench row needs. Each line is stamped with when it arrived, on the sampler's clock, so that a
// `window` line (which carries its length, not its time) becomes an interval of samples:
// [arrival - seconds, arrival].
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/bench.h"
#include "gpuscope/observe.h"

namespace gpuscope::bench::detail {

inline constexpr int kTorchProtocolVersion = 1;

struct TimedWindow {
  double t0 = 0, t1 = 0;  // sampler clock, seconds
  double samples = 0;
};

struct TorchOutput {
  std::vector<TimedWindow> windows;
  std::optional<nlohmann::json> start, result;
  std::optional<std::string> skipped_code, skipped_reason;
  std::optional<std::string> error_code, error_message;
  bool done = false;
  // The first line that was not protocol-1 JSON, with its line number; the rest is ignored.
  std::optional<std::string> malformed;
  int lines = 0;
};

class TorchLineReader {
 public:
  // `arrival_s`: when the line was read, on the sampler's clock.
  void add(std::string_view line, double arrival_s);
  // The same, for a line the observe reader has parsed (received_s on the sampler's clock).
  void add(const observe::JsonLine& line);
  const TorchOutput& output() const { return out_; }

 private:
  TorchOutput out_;
};

// A row from what the child printed and how it ended. `exit_code`/`signal` as ProcessExit.
// The decision table:
//   killed by a signal                       skipped "crashed" (or "timeout", "interrupted")
//   a malformed line                         skipped "malformed"
//   a `skipped` line (exit 3)                skipped with its code and reason
//   an `error` line, or exit != 0 w/o result skipped "failed"
//   a `result` with partial = true           skipped "interrupted"
//   a `result`                               measured
//   exit 0 without a result                  skipped "malformed" (no result line)
void fill_row(const TorchOutput& output, std::optional<int> exit_code, std::optional<int> signal,
              bool timed_out, bool interrupted, Row& row);

// The loss curve of a `--task guard` run; nullopt without a result (or its loss values).
// A null value in loss.values is a step whose loss was not finite (JSON has no NaN).
std::optional<LossCurve> guard_curve(const TorchOutput& output);

}  // namespace gpuscope::bench::detail
