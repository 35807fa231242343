// plotly.js, embedded into the library at build time (cmake/plotly.cmake says from where), so
// that every HTML report carries its plotting library and opens offline.
#pragma once

#include <string_view>

namespace gpuscope::report::detail {

// The minified bundle; empty when gpuscope was built without it.
std::string_view plotly_js();
// "plotly.js v3.3.1", or "" when not embedded.
std::string_view plotly_js_version();

}  // namespace gpuscope::report::detail
