#include "burn/interconnect.h"

#include <fmt/format.h>

#include <cstdlib>
#include <nlohmann/json.hpp>

#include "common/json_fields.h"
#include "gpuscope/observe.h"

namespace gpuscope::burn {

std::string InterconnectReport::gpu_name(int ordinal) const {
  return ordinal >= 0 && static_cast<std::size_t>(ordinal) < gpus.size()
             ? gpus[static_cast<std::size_t>(ordinal)]
             : fmt::format("CUDA device {}", ordinal);
}

namespace detail {
namespace {

using gpuscope::detail::JsonFields;
using json = nlohmann::json;

// The all-reduce sizes go up to 1 GiB; on PCIe a GiB all-reduce takes about 0.1 s, 200 times.
constexpr double kInterconnectTimeoutSeconds = 600;

}  // namespace

std::vector<const Target*> interconnect_gpus(const Plan& plan) {
  std::vector<const Target*> gpus;
  for (const Target& t : plan.targets) {
    if (!t.is_mig() && !t.mig_mode && t.unavailable.ok()) gpus.push_back(&t);
  }
  if (gpus.size() < 2) gpus.clear();
  return gpus;
}

void add_interconnect_line(std::string_view line, InterconnectReport& report) {
  const json j = json::parse(line, nullptr, /*allow_exceptions=*/false);
  const std::optional<std::string> type =
      j.is_object() ? JsonFields(j, "line").opt_text("type") : std::nullopt;
  if (!type) {
    report.problems.push_back(fmt::format("a line the worker should not print: {}",
                                          line.substr(0, std::min<std::size_t>(line.size(), 200))));
    return;
  }
  // A row with a field missing or of the wrong type is left out and said, rather than kept
  // as zeros; the interconnect is not fatal to burn.
  JsonFields row(j, *type);
  if (*type == "all_reduce") {
    capability::AllReduceResult r;
    r.gpus = row.integer("gpus");
    r.bytes = row.count<std::uint64_t>("bytes");
    r.iterations = row.integer("iterations");
    r.seconds = row.number("seconds");
    r.algorithm_bandwidth = row.number("algorithm_bandwidth");
    r.bus_bandwidth = row.number("bus_bandwidth");
    if (row.status().ok()) report.all_reduce.push_back(r);
  } else if (*type == "peer_copy") {
    capability::PeerCopyResult r;
    r.source = row.integer("source");
    r.destination = row.integer("destination");
    r.peer_access = row.boolean("peer_access");
    r.bytes = row.count<std::uint64_t>("bytes");
    r.seconds = row.number("seconds");
    r.bandwidth = row.number("bytes_per_second");
    if (row.status().ok()) report.peer_copies.push_back(r);
  } else if (*type == "error" || *type == "skipped") {
    report.problems.push_back(row.opt_text("message").value_or(*type));
  } else if (*type == "done") {
    report.ok = row.opt_bool("ok").value_or(false);
  }
  if (!row.status().ok()) {
    report.problems.push_back(fmt::format("the interconnect worker printed a malformed line ({})",
                                          row.status().message()));
  }
}

InterconnectReport measure_interconnect(const std::vector<const Target*>& gpus,
                                        const std::string& worker, const Options& options) {
  InterconnectReport report;
  std::string visible;
  for (const Target* t : gpus) {
    report.gpus.push_back(t->label());
    visible += (visible.empty() ? "" : ",") + t->uuid();
  }
  observe::Options o;
  o.argv = {worker, "--interconnect"};
  o.visible_devices = visible;
  // NVLink multicast stays off unless the user chose otherwise (shared machines).
  if (std::getenv("NCCL_NVLS_ENABLE") == nullptr) o.env.emplace_back("NCCL_NVLS_ENABLE", "0");
  o.interrupts =
      options.forward_interrupts ? observe::Interrupts::forward : observe::Interrupts::isolate;
  o.timeout_seconds = kInterconnectTimeoutSeconds;
  o.stderr_mode = StderrMode::lines;
  o.stderr_tail_lines = 3;
  o.on_json_line = [&report](const observe::JsonLine& line) {
    add_interconnect_line(line.text, report);
  };
  const observe::Outcome end = observe::run(std::move(o));
  if (!end.started()) {
    report.problems.push_back(end.start_status.message());
  } else if (!end.exit.success()) {
    std::string why = fmt::format("the interconnect worker ended: {}", end.exit.describe());
    if (!end.stderr_tail.empty()) why += ": " + end.stderr_tail.back();
    report.problems.push_back(why);
    report.ok = false;
  }
  return report;
}

std::vector<InterconnectReport::Link> links_between(const nvml::Session& session,
                                                    const std::vector<const Target*>& gpus) {
  std::vector<InterconnectReport::Link> links;
  for (std::size_t i = 0; i < gpus.size(); ++i) {
    auto first = session.device_by_index(gpus[i]->gpu_index);
    for (std::size_t j = i + 1; first.ok() && j < gpus.size(); ++j) {
      auto second = session.device_by_index(gpus[j]->gpu_index);
      if (!second.ok()) continue;
      if (auto link = first->link_to(*second); link.ok()) links.push_back({i, j, *link});
    }
  }
  return links;
}

}  // namespace detail
}  // namespace gpuscope::burn
