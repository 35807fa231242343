#include "trace/chrome_trace.h"

#include <utility>

namespace gpuscope::trace::detail {
namespace {

// Kernel names and NVTX messages may hold any bytes: invalid UTF-8 is replaced, never thrown.
std::string dump(const nlohmann::json& value) {
  return value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

}  // namespace

ChromeTraceWriter::ChromeTraceWriter(std::ostream& out, std::int64_t origin_ns, Limits limits)
    : out_(out), origin_ns_(origin_ns), limits_(limits) {
  out_ << "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[\n";
}

double ChromeTraceWriter::to_us(std::int64_t ns) const {
  return static_cast<double>(ns - origin_ns_) / 1000.0;
}

void ChromeTraceWriter::write_event(const nlohmann::json& event) {
  if (!first_) out_ << ",\n";
  first_ = false;
  out_ << dump(event);
}

bool ChromeTraceWriter::admit(std::string_view category) {
  if (written_ < limits_.max_events) {
    ++written_;
    return true;
  }
  auto it = dropped_.find(category);
  if (it == dropped_.end()) it = dropped_.emplace(std::string(category), 0).first;
  ++it->second;
  ++dropped_total_;
  return false;
}

void ChromeTraceWriter::process_name(std::int64_t pid, std::string_view name, int sort_index) {
  write_event({{"name", "process_name"},
               {"ph", "M"},
               {"pid", pid},
               {"tid", 0},
               {"args", {{"name", name}}}});
  write_event({{"name", "process_sort_index"},
               {"ph", "M"},
               {"pid", pid},
               {"tid", 0},
               {"args", {{"sort_index", sort_index}}}});
}

void ChromeTraceWriter::thread_name(std::int64_t pid, std::int64_t tid, std::string_view name,
                                    int sort_index) {
  write_event({{"name", "thread_name"},
               {"ph", "M"},
               {"pid", pid},
               {"tid", tid},
               {"args", {{"name", name}}}});
  write_event({{"name", "thread_sort_index"},
               {"ph", "M"},
               {"pid", pid},
               {"tid", tid},
               {"args", {{"sort_index", sort_index}}}});
}

bool ChromeTraceWriter::complete(std::int64_t pid, std::int64_t tid, std::string_view name,
                                 std::string_view category, std::int64_t start_ns,
                                 std::int64_t duration_ns, const nlohmann::json* args) {
  if (!admit(category)) return false;
  nlohmann::json event = {{"name", name},
                          {"cat", category},
                          {"ph", "X"},
                          {"pid", pid},
                          {"tid", tid},
                          {"ts", to_us(start_ns)},
                          {"dur", static_cast<double>(duration_ns < 0 ? 0 : duration_ns) / 1000.0}};
  if (args != nullptr && !args->empty()) event["args"] = *args;
  write_event(event);
  return true;
}

bool ChromeTraceWriter::instant(std::int64_t pid, std::int64_t tid, std::string_view name,
                                std::string_view category, std::int64_t at_ns,
                                const nlohmann::json* args) {
  if (!admit(category)) return false;
  nlohmann::json event = {{"name", name}, {"cat", category}, {"ph", "i"},         {"s", "t"},
                          {"pid", pid},   {"tid", tid},      {"ts", to_us(at_ns)}};
  if (args != nullptr && !args->empty()) event["args"] = *args;
  write_event(event);
  return true;
}

bool ChromeTraceWriter::counter(std::int64_t pid, std::string_view name, std::int64_t at_ns,
                                const nlohmann::json& values) {
  if (!admit("counter")) return false;
  write_event({{"name", name},
               {"ph", "C"},
               {"pid", pid},
               {"tid", 0},
               {"ts", to_us(at_ns)},
               {"args", values}});
  return true;
}

void ChromeTraceWriter::finish(nlohmann::json metadata) {
  if (finished_) return;
  finished_ = true;
  nlohmann::json dropped = nlohmann::json::object();
  for (const auto& [category, count] : dropped_) dropped[category] = count;
  if (!metadata.is_object()) metadata = nlohmann::json::object();
  metadata["dropped_events"] = std::move(dropped);
  metadata["events_written"] = written_;
  out_ << "\n],\"metadata\":" << dump(metadata) << "}\n";
  out_.flush();
}

}  // namespace gpuscope::trace::detail
