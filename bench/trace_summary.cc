// trace_summary DIR: what libgpuscope_inject.so recorded in a run folder, per process, read
// through gpuscope/trace.h: CUPTI's state, the window, counts per record kind, and checks that
// need a real GPU (no kernel outside the window, CUDA-graph kernels, pageable vs pinned copies,
// CUPTI's thread ids next to the NVTX ones). Used by bench/trace_device.sh.
#include <algorithm>
#include <cstdio>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "gpuscope/trace.h"

namespace {

using gpuscope::trace::ProcessTrace;

void print_counts(const char* title, const std::map<std::string, size_t>& counts) {
  std::printf("  %s:", title);
  for (const auto& [key, n] : counts) std::printf(" %s=%zu", key.c_str(), n);
  std::printf("\n");
}

void summarize(const ProcessTrace& t) {
  const auto& h = t.header;
  std::printf("pid %lld (ppid %lld, started by %s) %s\n", static_cast<long long>(h.pid),
              static_cast<long long>(h.ppid), h.started_by.c_str(),
              h.cmdline.empty() ? h.exe.c_str() : h.cmdline.back().c_str());
  std::printf("  file %s: %s%s, %zu malformed lines, %zu unknown records\n", t.path.c_str(),
              t.ended ? "ended" : "TRUNCATED", t.ended ? "" : " (no end line)", t.malformed_lines,
              t.unknown_records);
  std::printf("  cupti: %s%s%s (version %u)\n", t.cupti.status.c_str(),
              t.cupti.reason.empty() ? "" : ": ", t.cupti.reason.c_str(), t.cupti.version);
  for (const auto& e : t.cupti.errors) std::printf("  cupti error: %s\n", e.c_str());
  const auto& w = t.window;
  std::printf("  window: ");
  if (!w.begin_ns) {
    std::printf("never opened (%zu steps seen)\n", t.steps.size());
  } else {
    std::printf(
        "steps [%llu, %s) opened by %s, closed by %s, %.3f s long; enable %.1f us, "
        "disable %.1f us\n",
        static_cast<unsigned long long>(w.first_step.value_or(0)),
        w.end_step ? std::to_string(*w.end_step).c_str() : "end", w.begin_reason.c_str(),
        w.end_reason.empty() ? "-" : w.end_reason.c_str(),
        w.end_ns ? static_cast<double>(*w.end_ns - *w.begin_ns) * 1e-9 : -1.0,
        static_cast<double>(w.enable_ns.value_or(0)) * 1e-3,
        static_cast<double>(w.disable_ns.value_or(0)) * 1e-3);
  }
  size_t runtime = 0, driver = 0;
  for (const auto& a : t.api_calls) (a.runtime ? runtime : driver)++;
  std::printf(
      "  records: kernels %zu, copies %zu, memsets %zu, runtime %zu, driver %zu, syncs %zu, "
      "overheads %zu, marks %zu, ranges %zu, steps %zu, threads %zu, forks %zu, "
      "dropped %llu\n",
      t.kernels.size(), t.copies.size(), t.memsets.size(), runtime, driver, t.syncs.size(),
      t.overheads.size(), t.marks.size(), t.ranges.size(), t.steps.size(), t.threads.size(),
      t.forks_ns.size(), static_cast<unsigned long long>(t.dropped_total()));

  std::map<std::string, size_t> copies, syncs, overheads, ranges;
  for (const auto& c : t.copies) copies[c.kind + ":" + c.src_memory + "->" + c.dst_memory]++;
  for (const auto& s : t.syncs) syncs[s.type]++;
  for (const auto& o : t.overheads) overheads[o.kind]++;
  for (const auto& r : t.ranges) ranges[std::string(t.name(r.name))]++;
  if (!copies.empty()) print_counts("copies", copies);
  if (!syncs.empty()) print_counts("syncs", syncs);
  if (!overheads.empty()) print_counts("overheads", overheads);
  if (!ranges.empty()) print_counts("ranges", ranges);

  if (!t.kernels.empty()) {
    size_t in_graph = 0, before = 0, after = 0;
    std::map<std::string, std::pair<size_t, uint64_t>> by_name;
    for (const auto& k : t.kernels) {
      in_graph += k.graph_id != 0;
      if (w.begin_ns && k.start_ns < *w.begin_ns) ++before;
      // Launched inside the window, a kernel may still run a little after it closed.
      if (w.end_ns && k.start_ns > *w.end_ns + 1'000'000'000) ++after;
      auto& entry = by_name[std::string(t.name(k.name)).substr(0, 60)];
      entry.first++;
      entry.second += k.end_ns - k.start_ns;
    }
    std::printf(
        "  kernels: %zu from CUDA graphs, %zu started before the window, %zu more than "
        "1 s after it\n",
        in_graph, before, after);
    std::vector<std::pair<uint64_t, std::string>> top;
    for (const auto& [name, entry] : by_name) top.emplace_back(entry.second, name);
    std::sort(top.rbegin(), top.rend());
    for (size_t i = 0; i < top.size() && i < 5; ++i) {
      std::printf("    %8.3f ms %6zu x %s\n", static_cast<double>(top[i].first) * 1e-6,
                  by_name[top[i].second].first, top[i].second.c_str());
    }
  }
  std::set<uint32_t> cupti_tids, nvtx_tids;
  for (const auto& a : t.api_calls) cupti_tids.insert(a.tid);
  for (const auto& s : t.steps) nvtx_tids.insert(s.tid);
  for (const auto& r : t.ranges) nvtx_tids.insert(r.tid);
  if (!cupti_tids.empty()) {
    std::printf("  thread ids: CUPTI API records");
    for (const uint32_t tid : cupti_tids) std::printf(" %u", tid);
    std::printf("; NVTX records");
    for (const uint32_t tid : nvtx_tids) std::printf(" %u", tid);
    std::printf("\n");
  }
  if (!t.steps.empty() && w.begin_ns) {
    // Clock check: the window's CUPTI records lie between its step marks.
    uint64_t api_min = UINT64_MAX, api_max = 0;
    for (const auto& a : t.api_calls) {
      api_min = std::min(api_min, a.start_ns);
      api_max = std::max(api_max, a.end_ns);
    }
    if (api_max != 0) {
      std::printf("  clock: API records %.3f s .. %.3f s after the window opened (window %.3f s)\n",
                  (static_cast<double>(api_min) - static_cast<double>(*w.begin_ns)) * 1e-9,
                  (static_cast<double>(api_max) - static_cast<double>(*w.begin_ns)) * 1e-9,
                  w.end_ns ? static_cast<double>(*w.end_ns - *w.begin_ns) * 1e-9 : -1.0);
    }
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: trace_summary RUN_FOLDER\n");
    return 2;
  }
  auto traces = gpuscope::trace::read_trace_dir(argv[1]);
  if (!traces.ok()) {
    std::fprintf(stderr, "trace_summary: %s\n", traces.status().to_string().c_str());
    return 1;
  }
  std::printf("%zu process file(s) in %s\n", traces->size(), argv[1]);
  for (const auto& t : *traces) summarize(t);
  return 0;
}
