#include "report/html_figure.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace gpuscope::report::detail {
namespace {

using nlohmann::json;

// Colour-blind-safe qualitative palette (Tableau 10); references are grey.
constexpr const char* kPalette[] = {"#4e79a7", "#f28e2b", "#59a14f", "#e15759", "#76b7b2",
                                    "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"};
constexpr const char* kReference = "#8d98a5";
constexpr const char* kSpanFill = "rgba(214, 69, 69, 0.13)";
constexpr const char* kFont = "system-ui, -apple-system, Segoe UI, Roboto, DejaVu Sans, sans-serif";

double max_abs(const std::vector<double>& values) {
  double m = 0;
  for (double v : values) {
    if (std::isfinite(v)) m = std::max(m, std::fabs(v));
  }
  return m;
}

json scaled(const std::vector<double>& values, double factor) {
  json out = json::array();
  for (double v : values) out.push_back(std::isfinite(v) ? json(v * factor) : json(nullptr));
  return out;
}

std::string axis_title(const std::string& title, const std::string& symbol) {
  if (symbol.empty()) return title;
  return fmt::format("{} ({})", title, symbol);
}

// What every figure's layout starts from: the page's font, margins and white ground, the legend
// above the plot.
json base_layout() {
  return {{"font", {{"family", kFont}, {"size", 12}, {"color", "#1f2933"}}},
          {"margin", {{"l", 64}, {"r", 20}, {"t", 36}, {"b", 52}}},
          {"paper_bgcolor", "#ffffff"},
          {"plot_bgcolor", "#ffffff"},
          {"showlegend", true},
          {"legend", {{"orientation", "h"}, {"x", 0}, {"y", 1.02}, {"yanchor", "bottom"}}}};
}

// A numeric axis: its title with the unit's symbol, light grid lines, no zero line.
json value_axis(const std::string& title, const std::string& symbol) {
  return {{"title", {{"text", axis_title(title, symbol)}}},
          {"gridcolor", "#edf0f3"},
          {"zeroline", false},
          {"automargin", true}};
}

// Series of the same name share a colour across charts of one figure; references are grey.
class Colours {
 public:
  std::string for_series(const Series& s) {
    if (s.reference) return kReference;
    auto [it, added] = colours_.try_emplace(s.name, kPalette[next_ % std::size(kPalette)]);
    if (added) ++next_;
    return it->second;
  }

 private:
  std::map<std::string, std::string> colours_;
  std::size_t next_ = 0;
};

// Intervals on rows: horizontal bars from x to y on each series' rows (ChartKind::timeline).
json timeline_figure(const Chart& chart) {
  double x_max = 0;
  for (const Series& s : chart.series) x_max = std::max(x_max, max_abs(s.y));
  const DisplayScale xs = display_scale(chart.x_unit, x_max);
  const std::string x_suffix = xs.symbol.empty() ? "" : " " + xs.symbol;
  json data = json::array();
  Colours colours;

  for (const Series& s : chart.series) {
    json base = json::array(), length = json::array();
    for (std::size_t i = 0; i < s.x.size() && i < s.y.size(); ++i) {
      base.push_back(s.x[i] * xs.factor);
      length.push_back(std::max(0.0, s.y[i] - s.x[i]) * xs.factor);
    }
    json trace = {{"type", "bar"},
                  {"orientation", "h"},
                  {"name", s.name},
                  {"y", s.categories},
                  {"base", base},
                  {"x", length},
                  {"marker", {{"color", colours.for_series(s)}, {"line", {{"width", 0}}}}},
                  {"hovertemplate", fmt::format("%{{y}}<br>%{{text}}<br>%{{base:.4~r}}{} + "
                                                "%{{x:.3~r}}{}<extra>{}</extra>",
                                                x_suffix, x_suffix, s.name)}};
    trace["text"] = s.labels;
    trace["textposition"] = "none";
    data.push_back(std::move(trace));
  }
  json layout = base_layout();
  layout["hovermode"] = "closest";
  layout["barmode"] = "overlay";
  layout["bargap"] = 0.25;
  layout["xaxis"] = value_axis(chart.x_title, xs.symbol);
  layout["yaxis"] = {{"type", "category"}, {"autorange", "reversed"}, {"automargin", true}};
  return {{"data", data}, {"layout", layout}};
}

}  // namespace

json plotly_figure(const Chart& chart) {
  if (chart.kind == ChartKind::timeline) return timeline_figure(chart);
  bool bars = chart.kind == ChartKind::bars;
  double y_max = 0, x_max = 0;
  for (const Series& s : chart.series) {
    y_max = std::max(y_max, max_abs(s.y));
    x_max = std::max(x_max, max_abs(s.x));
  }
  for (const Rule& r : chart.rules) y_max = std::max(y_max, std::fabs(r.y));
  DisplayScale ys = display_scale(chart.y_unit, y_max);
  // A log axis spans many prefixes: plot raw values and let the ticks carry SI prefixes.
  DisplayScale xs = bars          ? DisplayScale{}
                    : chart.x_log ? display_scale(chart.x_unit, 1.0)
                                  : display_scale(chart.x_unit, x_max);
  std::string y_suffix = ys.symbol.empty() ? "" : " " + ys.symbol;
  std::string x_suffix = xs.symbol.empty() ? "" : " " + xs.symbol;

  json data = json::array();
  Colours colours;
  for (const Series& s : chart.series) {
    std::string colour = colours.for_series(s);
    json trace = {{"name", s.name}, {"y", scaled(s.y, ys.factor)}};
    if (bars) {
      trace["type"] = "bar";
      trace["x"] = s.categories;
      trace["hovertemplate"] =
          fmt::format("%{{x}}: %{{y:.4~r}}{}<extra>{}</extra>", y_suffix, s.name);
      if (s.reference) {
        trace["marker"] = {{"color", "rgba(141, 152, 165, 0.22)"},
                           {"line", {{"color", colour}, {"width", 1.2}}},
                           {"pattern", {{"shape", "/"}, {"fgcolor", colour}, {"size", 6}}}};
      } else {
        trace["marker"] = {{"color", colour}};
      }
      if (!s.labels.empty()) {
        trace["text"] = s.labels;
        trace["textposition"] = "outside";
        trace["cliponaxis"] = false;
        trace["textfont"] = {{"size", 11}};
      }
    } else {
      trace["type"] = "scatter";
      trace["x"] = scaled(s.x, xs.factor);
      trace["mode"] = s.markers ? "lines+markers" : "lines";
      trace["line"] = {{"color", colour}, {"width", 1.6}, {"dash", s.reference ? "dash" : "solid"}};
      trace["connectgaps"] = false;
      trace["hovertemplate"] =
          fmt::format("%{{x:.4~r}}{}: %{{y:.4~r}}{}<extra>{}</extra>", x_suffix, y_suffix, s.name);
      if (!s.labels.empty()) trace["text"] = s.labels;
    }
    data.push_back(std::move(trace));
  }

  json shapes = json::array();
  json annotations = json::array();
  std::map<std::string, bool> span_labels;
  for (const Span& span : chart.spans) {
    shapes.push_back({{"type", "rect"},
                      {"xref", "x"},
                      {"yref", "paper"},
                      {"x0", span.x0 * xs.factor},
                      {"x1", span.x1 * xs.factor},
                      {"y0", 0},
                      {"y1", 1},
                      {"fillcolor", kSpanFill},
                      {"line", {{"width", 0}}},
                      {"layer", "below"}});
    span_labels[span.label] = true;
  }
  // Shapes have no legend entry: one empty trace per kind of span gives them one.
  for (const auto& [label, unused] : span_labels) {
    data.push_back({{"type", "scatter"},
                    {"x", json::array({nullptr})},
                    {"y", json::array({nullptr})},
                    {"mode", "markers"},
                    {"name", label},
                    {"hoverinfo", "skip"},
                    {"marker", {{"symbol", "square"}, {"size", 12}, {"color", kSpanFill}}}});
  }
  for (const Rule& rule : chart.rules) {
    double y = rule.y * ys.factor;
    shapes.push_back({{"type", "line"},
                      {"xref", "paper"},
                      {"yref", "y"},
                      {"x0", 0},
                      {"x1", 1},
                      {"y0", y},
                      {"y1", y},
                      {"line", {{"color", kReference}, {"width", 1}, {"dash", "dot"}}}});
    annotations.push_back({{"xref", "paper"},
                           {"yref", "y"},
                           {"x", 1},
                           {"y", y},
                           {"xanchor", "right"},
                           {"yanchor", "bottom"},
                           {"text", rule.label},
                           {"showarrow", false},
                           {"font", {{"size", 10.5}, {"color", "#5f6b7a"}}}});
  }
  if (!chart.markers.empty()) {
    json mx = json::array(), my = json::array(), text = json::array();
    int annotated = 0;
    for (const Marker& m : chart.markers) {
      mx.push_back(m.x * xs.factor);
      my.push_back(m.y * ys.factor);
      text.push_back(m.label);
      if (m.annotation.empty()) continue;
      // Alternate below and above the point, so that neighbours do not overlap.
      int ay = annotated++ % 2 ? -26 : 26;
      annotations.push_back({{"x", m.x * xs.factor},
                             {"y", m.y * ys.factor},
                             {"text", m.annotation},
                             {"showarrow", true},
                             {"arrowhead", 0},
                             {"arrowwidth", 1},
                             {"arrowcolor", "#5f6b7a"},
                             {"ax", 0},
                             {"ay", ay},
                             {"font", {{"size", 10.5}, {"color", "#1f2933"}}},
                             {"bgcolor", "rgba(255,255,255,0.85)"}});
    }
    data.push_back({{"type", "scatter"},
                    {"x", mx},
                    {"y", my},
                    {"text", text},
                    {"mode", "markers"},
                    {"name", "knees"},
                    {"hovertemplate", "%{text}<extra></extra>"},
                    {"marker", {{"symbol", "diamond"}, {"size", 9}, {"color", "#1f2933"}}}});
  }

  json layout = base_layout();
  layout["hovermode"] = bars ? "closest" : "x unified";
  layout["xaxis"] = value_axis(chart.x_title, xs.symbol);
  layout["yaxis"] = value_axis(chart.y_title, ys.symbol);
  layout["yaxis"]["rangemode"] = chart.y_from_zero ? "tozero" : "normal";
  layout["shapes"] = shapes;
  layout["annotations"] = annotations;
  if (chart.x_log && !bars) {
    layout["xaxis"]["type"] = "log";
    layout["xaxis"]["exponentformat"] = "SI";
  }
  if (bars) {
    layout["barmode"] = "group";
    layout["bargap"] = 0.22;
    layout["bargroupgap"] = 0.06;
  }
  return {{"data", data}, {"layout", layout}};
}

}  // namespace gpuscope::report::detail
