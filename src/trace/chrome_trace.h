// The Chrome Trace Event format, written as a stream: the JSON object form
// ({"traceEvents": [...], "displayTimeUnit": "ms", "metadata": {...}}) that ui.perfetto.dev and
// chrome://tracing open. Timestamps are given in nanoseconds on any one clock and written in
// microseconds (the format's unit) relative to the first `origin_ns`.
//
// Bounded: at most Limits::max_events events are written; events past the cap are counted per
// category and the counts land in the metadata ("dropped_events"), so a reader sees what is
// missing.
//
// Rules the writer keeps (the viewers rely on them): every event has name, ph, ts, pid and tid;
// complete events ("X") have dur >= 0; strings are valid JSON whatever bytes they were given
// (invalid UTF-8 is replaced). Slices of one track must nest or be disjoint — that is the
// caller's to keep: put overlapping-but-not-nested intervals on tracks of their own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <string_view>

namespace gpuscope::trace::detail {

class ChromeTraceWriter {
 public:
  struct Limits {
    std::size_t max_events = 1'000'000;
  };

  // Writes the opening of the document to `out`. `origin_ns` becomes ts 0.
  // REQUIRES: `out` outlives the writer.
  ChromeTraceWriter(std::ostream& out, std::int64_t origin_ns, Limits limits);
  ChromeTraceWriter(std::ostream& out, std::int64_t origin_ns)
      : ChromeTraceWriter(out, origin_ns, Limits{}) {}
  ChromeTraceWriter(const ChromeTraceWriter&) = delete;
  ChromeTraceWriter& operator=(const ChromeTraceWriter&) = delete;

  // Names and orders tracks (metadata events; never dropped, never counted against the cap).
  void process_name(std::int64_t pid, std::string_view name, int sort_index);
  void thread_name(std::int64_t pid, std::int64_t tid, std::string_view name, int sort_index);

  // A slice [start, start + duration) on track (pid, tid). `args` may be null. False when the
  // event was dropped (cap reached).
  bool complete(std::int64_t pid, std::int64_t tid, std::string_view name,
                std::string_view category, std::int64_t start_ns, std::int64_t duration_ns,
                const nlohmann::json* args = nullptr);
  // A point in time on a thread's track.
  bool instant(std::int64_t pid, std::int64_t tid, std::string_view name, std::string_view category,
               std::int64_t at_ns, const nlohmann::json* args = nullptr);
  // A counter track of `pid` named `name`, one series per key of `values` (numbers).
  bool counter(std::int64_t pid, std::string_view name, std::int64_t at_ns,
               const nlohmann::json& values);

  // Closes the document; `metadata` (an object) is written with "dropped_events" added.
  // Call once; nothing may be written after it.
  void finish(nlohmann::json metadata);

  std::size_t events_written() const { return written_; }
  std::size_t events_dropped() const { return dropped_total_; }

 private:
  bool admit(std::string_view category);
  void write_event(const nlohmann::json& event);
  double to_us(std::int64_t ns) const;

  std::ostream& out_;
  std::int64_t origin_ns_;
  Limits limits_;
  std::size_t written_ = 0;
  std::size_t dropped_total_ = 0;
  std::map<std::string, std::size_t, std::less<>> dropped_;
  bool first_ = true;
  bool finished_ = false;
};

}  // namespace gpuscope::trace::detail
