// The pieces of the HTML report page that are not charts: escaping, the style sheet, and the
// script that hands each chart to plotly.js.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace gpuscope::report::detail {

// Text for HTML element content and attribute values.
std::string html_escape(std::string_view text);

// JSON that is safe inside a <script> element: "</" cannot end the element early, and the two
// line separators JavaScript treats as line breaks are escaped.
std::string script_safe_json(const nlohmann::json& value);

// JavaScript inside a <script> element: "</script" cannot end it early.
std::string script_safe_js(std::string_view js);

std::string_view page_css();
// Draws every figure in the JSON element #gpuscope-figures ({"div id": {data, layout}}) and
// sets body[data-charts-drawn] to their count once plotly has drawn them all. Failures go to
// console.error (the browser test fails on any).
std::string_view page_script();

}  // namespace gpuscope::report::detail
