#include "bench/torch_protocol.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "gpuscope/process.h"

namespace gpuscope::bench::detail {
namespace {

std::optional<double> number(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_number()) return std::nullopt;
  return j[key].get<double>();
}

std::string text(const nlohmann::json& j, const char* key) {
  if (!j.is_object() || !j.contains(key) || !j[key].is_string()) return "";
  return j[key].get<std::string>();
}

}  // namespace

void TorchLineReader::add(std::string_view line, double arrival_s) {
  const nlohmann::json parsed = nlohmann::json::parse(line, nullptr, false);
  add(observe::JsonLine{line, parsed.is_object() ? &parsed : nullptr, arrival_s});
}

void TorchLineReader::add(const observe::JsonLine& l) {
  const std::string_view line = l.text;
  const double arrival_s = l.received_s;
  ++out_.lines;
  if (out_.malformed) return;
  if (line.find_first_not_of(" \t\r") == std::string_view::npos) return;
  auto bad = [&](const std::string& why) {
    std::string shown(line.substr(0, 80));
    out_.malformed = fmt::format("line {}: {} ({})", out_.lines, why, shown);
  };
  if (l.object == nullptr) return bad("not a JSON object");
  const nlohmann::json& j = *l.object;
  if (!j.contains("v") || !j["v"].is_number_integer()) return bad("no protocol version \"v\"");
  if (j["v"].get<int>() != kTorchProtocolVersion) {
    return bad(
        fmt::format("protocol version {}, expected {}", j["v"].dump(), kTorchProtocolVersion));
  }
  const std::string type = text(j, "type");
  if (type == "start") {
    out_.start = j;
  } else if (type == "window") {
    auto seconds = number(j, "seconds");
    auto samples = number(j, "samples");
    if (!seconds || !samples || *seconds < 0) return bad("a window without seconds or samples");
    out_.windows.push_back({arrival_s - *seconds, arrival_s, *samples});
  } else if (type == "result") {
    out_.result = j;
  } else if (type == "skipped") {
    out_.skipped_code = text(j, "code");
    out_.skipped_reason = text(j, "reason");
  } else if (type == "error") {
    out_.error_code = text(j, "code");
    out_.error_message = text(j, "message");
  } else if (type == "done") {
    out_.done = true;
  } else if (type == "batch_probe") {
    // The batch search's tries: the result says which batch it chose.
  } else {
    // Types added later are allowed by the protocol (a field or line type added does not bump
    // the version), so an unknown type is not malformed.
  }
}

namespace {

// Rank 0's summary of a data-parallel run (gpuscope-torch --world-size N).
void fill_data_parallel(const nlohmann::json& dp, Row& row) {
  if (const auto n = number(dp, "world_size"); n && *n >= 1 && *n <= 1 << 20) {
    row.world_size = static_cast<int>(*n);
  }
  row.collective_seconds_per_step = number(dp, "collective_seconds_per_step");
  row.exposed_seconds_per_step = number(dp, "exposed_seconds_per_step");
  row.overlap_fraction = number(dp, "overlap_fraction");
  if (const std::string by = text(dp, "all_reduce"); !by.empty()) row.all_reduce = by;
  if (const std::string why = text(dp, "all_reduce_fallback"); !why.empty()) {
    row.all_reduce_fallback = why;
  }
  if (dp.contains("optimizer_sharded") && dp["optimizer_sharded"].is_boolean()) {
    row.optimizer_sharded = dp["optimizer_sharded"].get<bool>();
  }
  if (dp.contains("ranks") && dp["ranks"].is_array()) {
    for (const auto& rank : dp["ranks"]) {
      if (!rank.is_object()) continue;
      const auto reserved = number(rank, "peak_reserved_bytes");
      if (reserved &&
          (!row.peak_reserved_per_gpu_bytes || *reserved > *row.peak_reserved_per_gpu_bytes)) {
        row.peak_reserved_per_gpu_bytes = reserved;
      }
      const auto rate = number(rank, "samples_per_second");
      if (rate && *rate > 0 &&
          (!row.slowest_rank_samples_per_second || *rate < *row.slowest_rank_samples_per_second)) {
        row.slowest_rank_samples_per_second = rate;
      }
    }
  }
}

}  // namespace

void fill_row(const TorchOutput& o, std::optional<int> exit_code, std::optional<int> signal,
              bool timed_out, bool interrupted, Row& row) {
  auto skip = [&](std::string code, std::string reason) {
    row.skipped = true;
    row.skip_code = std::move(code);
    row.skip_reason = std::move(reason);
  };
  if (o.start) {
    const auto& s = *o.start;
    if (s.contains("torch_version") && s["torch_version"].is_string()) {
      row.torch_version = s["torch_version"].get<std::string>();
    }
    if (s.contains("device") && s["device"].is_object()) {
      std::string name = text(s["device"], "name");
      if (!name.empty()) row.device_name = name;
    }
  }
  if (o.result) {
    const auto& r = *o.result;
    // A batch beyond int (1e300) is no batch: converting it would be undefined behaviour.
    const auto b = number(r, "batch");
    if (b && *b >= std::numeric_limits<int>::min() && *b <= std::numeric_limits<int>::max()) {
      row.batch = static_cast<int>(*b);
    }
    row.samples_per_second = number(r, "samples_per_second");
    if (r.contains("step_seconds") && r["step_seconds"].is_object()) {
      row.step_seconds_median = number(r["step_seconds"], "median");
      row.step_relative_spread = number(r["step_seconds"], "relative_spread");
    }
    row.peak_allocated_bytes = number(r, "peak_allocated_bytes");
    row.peak_reserved_bytes = number(r, "peak_reserved_bytes");
    if (r.contains("data_parallel") && r["data_parallel"].is_object()) {
      fill_data_parallel(r["data_parallel"], row);
    }
  }
  const bool signalled = signal.has_value();
  if (timed_out) {
    return skip("timeout", "stopped after the row's time limit (" +
                               (signalled ? "killed by " + signal_name(*signal) : "no result") +
                               ")");
  }
  if (interrupted) return skip("interrupted", "interrupted (Ctrl-C) before it finished");
  if (signalled) {
    return skip("crashed", fmt::format("gpuscope-torch was killed by {}{}", signal_name(*signal),
                                       o.windows.empty() ? ""
                                                         : fmt::format(" after {} timed windows",
                                                                       o.windows.size())));
  }
  if (o.malformed) return skip("malformed", "malformed output: " + *o.malformed);
  if (o.skipped_code) {
    std::string code = o.skipped_code->empty() ? "not_supported" : *o.skipped_code;
    return skip(code, o.skipped_reason->empty() ? code : *o.skipped_reason);
  }
  if (o.error_code) {
    return skip("failed", fmt::format("{}: {}", *o.error_code, o.error_message.value_or("")));
  }
  if (exit_code == 3) return skip("not_supported", "gpuscope-torch skipped it (exit code 3)");
  if (exit_code && *exit_code != 0 && !o.result) {
    return skip("failed",
                fmt::format("gpuscope-torch ended with exit code {} and no result", *exit_code));
  }
  if (!o.result) return skip("malformed", "malformed output: no result line");
  if (o.result->value("partial", false)) {
    return skip("interrupted", "gpuscope-torch stopped early (partial result)");
  }
  if (!row.samples_per_second) return skip("malformed", "malformed output: no samples_per_second");
}

std::optional<LossCurve> guard_curve(const TorchOutput& o) {
  if (!o.result) return std::nullopt;
  const auto& r = *o.result;
  if (!r.contains("loss") || !r["loss"].is_object()) return std::nullopt;
  const auto& loss = r["loss"];
  if (!loss.contains("values") || !loss["values"].is_array()) return std::nullopt;
  LossCurve c;
  for (const auto& v : loss["values"]) {
    c.losses.push_back(v.is_number() ? v.get<double>() : std::numeric_limits<double>::quiet_NaN());
  }
  c.loss_scale = number(r, "loss_scale");
  if (auto s = number(r, "skipped_steps")) c.skipped_steps = static_cast<int>(*s);
  return c;
}

}  // namespace gpuscope::bench::detail
