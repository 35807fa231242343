// Helpers shared by burn's tests: the fixture folder, and a worker stream read from a script
// file with synthetic arrival times.
#pragma once

#include <fstream>
#include <string>

#include "burn/worker_stream.h"

namespace gpuscope::burn::testing {

inline std::string burn_fixture(const std::string& name) {
  return std::string(GPUSCOPE_TEST_FIXTURES) + "/burn/" + name;
}

// Reads a fake-worker script (tests/burn/fake_worker.cc): JSON lines are added to a stream as if
// they arrived at a clock that starts at `start` and advances by every '#sleep'; other
// directives and comments are skipped.
inline detail::WorkerStream read_script(const std::string& path, double start = 0) {
  detail::WorkerStream stream;
  std::ifstream in(path);
  double t = start;
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("#sleep ", 0) == 0) {
      t += std::stod(line.substr(7));
    } else if (!line.empty() && line[0] != '#' && line.rfind("//", 0) != 0) {
      (void)detail::add_line(stream, line, t);
    }
  }
  return stream;
}

}  // namespace gpuscope::burn::testing
