#include "report/html_page.h"

namespace gpuscope::report::detail {

std::string html_escape(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  for (char c : text) {
    switch (c) {
      case '&':
        out += "&amp;";
        break;
      case '<':
        out += "&lt;";
        break;
      case '>':
        out += "&gt;";
        break;
      case '"':
        out += "&quot;";
        break;
      case '\'':
        out += "&#39;";
        break;
      default:
        out += c;
    }
  }
  return out;
}

std::string script_safe_json(const nlohmann::json& value) {
  std::string text = value.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
  std::string out;
  out.reserve(text.size());
  for (std::size_t i = 0; i < text.size(); ++i) {
    // "</" only occurs inside JSON strings, where "<\/" means the same.
    if (text[i] == '<' && i + 1 < text.size() && text[i + 1] == '/') {
      out += "<\\/";
      ++i;
    } else if (text.compare(i, 3, "\xE2\x80\xA8") == 0) {  // U+2028
      out += "\\u2028";
      i += 2;
    } else if (text.compare(i, 3, "\xE2\x80\xA9") == 0) {  // U+2029
      out += "\\u2029";
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

std::string script_safe_js(std::string_view js) {
  std::string out;
  out.reserve(js.size());
  std::size_t start = 0;
  for (;;) {
    std::size_t at = js.find("</script", start);
    if (at == std::string_view::npos) break;
    out.append(js.substr(start, at - start));
    out += "<\\/script";  // inside a JS string or regex literal, "\/" is "/"
    start = at + 8;
  }
  out.append(js.substr(start));
  return out;
}

std::string_view page_css() {
  return R"css(
:root {
  --ink: #1f2933; --muted: #5f6b7a; --line: #e3e7ec; --bg: #f6f7f9; --card: #ffffff;
  --good: #2f9e44; --warning: #e8a200; --bad: #d64545; --accent: #3b6fb6;
}
* { box-sizing: border-box; }
body {
  margin: 0; background: var(--bg); color: var(--ink);
  font: 14px/1.5 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
}
header { background: #18212b; color: #fff; padding: 20px 32px 16px; }
header h1 { margin: 0; font-size: 22px; font-weight: 600; }
header .meta { margin: 4px 0 0; color: #b8c2cc; font-size: 12.5px; }
header .meta code { color: #dfe6ee; }
nav.toc { background: #fff; border-bottom: 1px solid var(--line); padding: 8px 32px;
  position: sticky; top: 0; z-index: 10; }
nav.toc a { color: var(--accent); text-decoration: none; margin-right: 18px; font-size: 13px; }
nav.toc a:hover { text-decoration: underline; }
main { max-width: 1280px; margin: 0 auto; padding: 20px 32px 48px; }
section { margin: 0 0 28px; }
h2 { font-size: 18px; margin: 28px 0 4px; padding-bottom: 4px; border-bottom: 2px solid var(--line); }
h3 { font-size: 14.5px; margin: 18px 0 6px; }
p.intro { color: var(--muted); margin: 4px 0 12px; max-width: 90ch; }
.cards { display: grid; grid-template-columns: repeat(auto-fill, minmax(230px, 1fr)); gap: 12px; }
.card { background: var(--card); border: 1px solid var(--line); border-left: 5px solid #c3ccd6;
  border-radius: 6px; padding: 10px 14px; }
.card.good { border-left-color: var(--good); }
.card.warning { border-left-color: var(--warning); }
.card.bad { border-left-color: var(--bad); }
.card .label { font-size: 11.5px; text-transform: uppercase; letter-spacing: .04em; color: var(--muted); }
.card .value { font-size: 22px; font-weight: 650; margin: 2px 0; font-variant-numeric: tabular-nums; }
.card .value .unit { font-size: 14px; font-weight: 600; color: #3e4a57; }
.card .detail { font-size: 12.5px; color: var(--muted); }
ul.findings { list-style: none; padding: 0; margin: 8px 0 0; }
ul.findings li { background: var(--card); border: 1px solid var(--line); border-radius: 6px;
  padding: 6px 12px; margin: 6px 0; }
.sev { display: inline-block; min-width: 80px; font-size: 11px; font-weight: 700;
  text-transform: uppercase; letter-spacing: .04em; }
.sev.error { color: var(--bad); } .sev.warning { color: var(--warning); } .sev.info { color: var(--accent); }
.subject { font-weight: 600; }
.grid { display: grid; grid-template-columns: repeat(auto-fit, minmax(520px, 1fr)); gap: 14px; }
figure.chart { background: var(--card); border: 1px solid var(--line); border-radius: 6px;
  margin: 0; padding: 8px 10px 6px; min-width: 0; }
figure.chart h3 { margin: 2px 4px 0; }
figure.chart .plot { width: 100%; height: 340px; }
figure.chart figcaption { color: var(--muted); font-size: 12px; margin: 0 4px 4px; }
.table-wrap { overflow-x: auto; background: var(--card); border: 1px solid var(--line);
  border-radius: 6px; margin: 8px 0 4px; }
table.data { border-collapse: collapse; width: 100%; font-size: 13px; }
table.data th, table.data td { padding: 5px 10px; border-bottom: 1px solid var(--line);
  text-align: left; white-space: nowrap; }
table.data th { background: #f0f3f6; font-weight: 600; font-size: 12px; color: #3e4a57; }
table.data td.num, table.data th.num { text-align: right; font-variant-numeric: tabular-nums; }
table.data tr:last-child td { border-bottom: 0; }
table.data td.na { color: #9aa5b1; }
p.caption { color: var(--muted); font-size: 12px; margin: 2px 0 12px; }
footer { color: var(--muted); font-size: 12px; text-align: center; padding: 16px; }
@media print { nav.toc { display: none; } }
)css";
}

std::string_view page_script() {
  return R"js(
(function () {
  "use strict";
  var figures = JSON.parse(document.getElementById("gpuscope-figures").textContent);
  var config = {
    displaylogo: false, displayModeBar: "hover", responsive: true, typesetMath: false,
    modeBarButtonsToRemove: ["select2d", "lasso2d"],
    toImageButtonOptions: { format: "png", scale: 2 }
  };
  var drawn = [];
  Object.keys(figures).forEach(function (id) {
    var div = document.getElementById(id);
    if (!div) { console.error("gpuscope: no element for chart " + id); return; }
    drawn.push(Plotly.newPlot(div, figures[id].data, figures[id].layout, config));
  });
  Promise.all(drawn).then(function () {
    document.body.setAttribute("data-charts-drawn", String(drawn.length));
  }, function (error) {
    console.error("gpuscope: a chart could not be drawn: " + error);
  });
})();
)js";
}

}  // namespace gpuscope::report::detail
