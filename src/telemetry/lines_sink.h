// A line per GPU per second on a stream, like nvidia-smi dmon: what `monitor --no-tui` prints
// when nothing else goes to stdout.
#pragma once

#include <iosfwd>
#include <memory>

#include "gpuscope/monitor.h"

namespace gpuscope::telemetry::detail {

std::unique_ptr<Sink> make_lines_sink(std::ostream& out);

}  // namespace gpuscope::telemetry::detail
