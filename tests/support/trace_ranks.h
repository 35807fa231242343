// Traces of several ranks: made from one recorded on the H100 (tests/fixtures/trace), or by hand
// in the record format (a data-parallel rank with collectives).
#pragma once

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

namespace gpuscope::testing {

// Writes into `dir` (which exists) the smoke loop's trace of process 773 on GPU 0
// (tests/fixtures/trace/h100_smoke_window) and, as a second rank, the same trace as process 774
// on GPU 1.
inline void write_two_ranks(const std::filesystem::path& dir) {
  const std::filesystem::path trace = std::filesystem::path(GPUSCOPE_TEST_FIXTURES) / "trace" /
                                      "h100_smoke_window" / "gpuscope-trace-773.jsonl";
  std::filesystem::copy_file(trace, dir / "gpuscope-trace-773.jsonl");
  std::ifstream in(trace);
  std::stringstream read;
  read << in.rdbuf();
  std::string other = read.str();
  for (const auto& [from, to] : {std::pair<std::string, std::string>{"\"pid\":773", "\"pid\":774"},
                                 {"\"dev\":0", "\"dev\":1"}}) {
    for (std::size_t at = other.find(from); at != std::string::npos;
         at = other.find(from, at + to.size())) {
      other.replace(at, from.size(), to);
    }
  }
  std::ofstream(dir / "gpuscope-trace-774.jsonl") << other;
}

// A data-parallel rank's record file, made by hand in the record format: 12 steps of 10 ms,
// each a GEMM of `compute_ms` on stream 7, a bucket all-reduce beside it (3-5 ms) and the last
// all-reduce from the end of the computing to `all_in_ms` + 1 ms (it waits for the slower rank
// until `all_in_ms`), inside a window from step 2 to 11.
inline void write_data_parallel_rank(const std::filesystem::path& dir, int pid, int dev,
                                     double compute_ms, double all_in_ms) {
  constexpr std::int64_t kMsNs = 1'000'000, kOrigin = 1'000'000'000;
  std::ostringstream out;
  out << R"({"t":"header","format":"gpuscope-trace-records","version":1,"pid":)" << pid
      << R"(,"ppid":1,"host":"test","exe":"/usr/bin/python3","cmdline":["python3","train.py"],)"
      << R"("started_by":"cuda","clock":"CLOCK_MONOTONIC","origin_ns":)" << kOrigin
      << R"(,"origin_realtime_ns":1795617606000000000,"window":{"skip_steps":2,"steps":9},)"
      << R"("step_mark":"gpuscope.step","max_bytes":0,"flush_ms":500,)"
      << R"("kinds":"kernel,memcpy,memset,runtime,driver,sync,overhead","config_errors":[]})"
      << "\n"
      << R"({"t":"name","id":1,"s":"nvjet_sm90_tst_128x64_64x8_1x2_h_bz_bias_TNT"})"
      << "\n"
      << R"x({"t":"name","id":2,"s":"ncclDevKernel_AllReduce_Sum_f32_RING_LL(ncclDevKernelArgsStorage<4096ul>)"})x"
      << "\n";
  const auto at = [&](int step, double ms) {
    return kOrigin + 100 * kMsNs + step * 10 * kMsNs + static_cast<std::int64_t>(ms * kMsNs);
  };
  const auto kernel = [&](int step, double from_ms, double to_ms, int name, int stream) {
    out << R"({"t":"kernel","start":)" << at(step, from_ms) << R"(,"end":)" << at(step, to_ms)
        << R"(,"dev":)" << dev << R"(,"ctx":1,"stream":)" << stream << R"(,"corr":0,"name":)"
        << name
        << R"(,"grid":[132,1,1],"block":[128,1,1],"regs":64,"smem_static":0,"smem_dynamic":0})"
        << "\n";
  };
  for (int step = 0; step < 12; ++step) {
    if (step == 2)
      out << R"({"t":"window_begin","ts":)" << at(2, 0) << R"(,"step":2,"reason":"steps"})"
          << "\n";
    if (step >= 2) {
      kernel(step, 0.1, compute_ms, 1, 7);
      kernel(step, 3, 5, 2, 13);
      kernel(step, compute_ms, all_in_ms + 1, 2, 13);
    }
    out << R"({"t":"step","n":)" << step << R"(,"ts":)" << at(step, 9.99) << R"(,"tid":)" << pid
        << "}\n";
  }
  out << R"({"t":"window_end","ts":)" << at(11, 9.995) << R"(,"step":11,"reason":"steps"})"
      << "\n"
      << R"({"t":"end","ts":)" << at(12, 0)
      << R"(,"reason":"exit","steps":12,"records":0,"dropped":0})"
      << "\n";
  std::ofstream(dir / ("gpuscope-trace-" + std::to_string(pid) + ".jsonl")) << out.str();
}

}  // namespace gpuscope::testing
