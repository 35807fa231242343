// Traces of several ranks made from one recorded on the H100 (tests/fixtures/trace).
#pragma once

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

}  // namespace gpuscope::testing
