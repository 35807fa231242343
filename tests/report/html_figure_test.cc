// The plotly.js layout of each kind of chart, pinned whole: the look every figure shares (font,
// margins, white ground, legend above) and each kind's axes.
#include "report/html_figure.h"

#include <gtest/gtest.h>

namespace gpuscope::report::detail {
namespace {

using nlohmann::json;

Chart chart_of(ChartKind kind) {
  Chart c;
  c.key = "k";
  c.title = "T";
  c.kind = kind;
  c.x_title = "when";
  c.x_unit = Unit::seconds;
  c.y_title = "power";
  c.y_unit = Unit::watts;
  Series s;
  s.name = "gpu0";
  s.categories = {"a", "b"};
  s.x = {1, 2};
  s.y = {300, 350};
  s.labels = {"one", "two"};
  c.series = {s};
  return c;
}

TEST(HtmlFigure, BarsLayout) {
  EXPECT_EQ(
      plotly_figure(chart_of(ChartKind::bars))["layout"],
      json::parse(
          R"json({"annotations":[],"bargap":0.22,"bargroupgap":0.06,"barmode":"group","font":{"color":"#1f2933","family":"system-ui, -apple-system, Segoe UI, Roboto, DejaVu Sans, sans-serif","size":12},"hovermode":"closest","legend":{"orientation":"h","x":0,"y":1.02,"yanchor":"bottom"},"margin":{"b":52,"l":64,"r":20,"t":36},"paper_bgcolor":"#ffffff","plot_bgcolor":"#ffffff","shapes":[],"showlegend":true,"xaxis":{"automargin":true,"gridcolor":"#edf0f3","title":{"text":"when"},"zeroline":false},"yaxis":{"automargin":true,"gridcolor":"#edf0f3","rangemode":"tozero","title":{"text":"power (W)"},"zeroline":false}})json"));
}

TEST(HtmlFigure, LogLinesLayout) {
  Chart c = chart_of(ChartKind::lines);
  c.x_log = true;
  c.y_from_zero = false;
  EXPECT_EQ(
      plotly_figure(c)["layout"],
      json::parse(
          R"json({"annotations":[],"font":{"color":"#1f2933","family":"system-ui, -apple-system, Segoe UI, Roboto, DejaVu Sans, sans-serif","size":12},"hovermode":"x unified","legend":{"orientation":"h","x":0,"y":1.02,"yanchor":"bottom"},"margin":{"b":52,"l":64,"r":20,"t":36},"paper_bgcolor":"#ffffff","plot_bgcolor":"#ffffff","shapes":[],"showlegend":true,"xaxis":{"automargin":true,"exponentformat":"SI","gridcolor":"#edf0f3","title":{"text":"when (s)"},"type":"log","zeroline":false},"yaxis":{"automargin":true,"gridcolor":"#edf0f3","rangemode":"normal","title":{"text":"power (W)"},"zeroline":false}})json"));
}

TEST(HtmlFigure, TimelineLayout) {
  EXPECT_EQ(
      plotly_figure(chart_of(ChartKind::timeline))["layout"],
      json::parse(
          R"json({"bargap":0.25,"barmode":"overlay","font":{"color":"#1f2933","family":"system-ui, -apple-system, Segoe UI, Roboto, DejaVu Sans, sans-serif","size":12},"hovermode":"closest","legend":{"orientation":"h","x":0,"y":1.02,"yanchor":"bottom"},"margin":{"b":52,"l":64,"r":20,"t":36},"paper_bgcolor":"#ffffff","plot_bgcolor":"#ffffff","showlegend":true,"xaxis":{"automargin":true,"gridcolor":"#edf0f3","title":{"text":"when (s)"},"zeroline":false},"yaxis":{"automargin":true,"autorange":"reversed","type":"category"}})json"));
}

}  // namespace
}  // namespace gpuscope::report::detail
