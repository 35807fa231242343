// A Chart as a plotly.js figure ({"data": [...], "layout": {...}}): values scaled to readable
// units (TFLOP/s, MHz, %), reference series faint, spans shaded, knees annotated.
#pragma once

#include <nlohmann/json.hpp>

#include "gpuscope/reporter.h"

namespace gpuscope::report::detail {

nlohmann::json plotly_figure(const Chart& chart);

}  // namespace gpuscope::report::detail
