// The whole document as one versioned JSON object, numbers in SI units as they are.
#include "report/reporter_common.h"

namespace gpuscope::report::detail {
namespace {

using nlohmann::json;

json table_json(const Table& t) {
  json columns = json::array();
  for (const Column& c : t.columns) {
    columns.push_back({{"key", c.key}, {"title", c.title}, {"unit", unit_symbol(c.unit)}});
  }
  json rows = json::array();
  for (const auto& row : t.rows) {
    json cells = json::array();
    for (const Value& v : row) cells.push_back(cell_json(v));
    rows.push_back(std::move(cells));
  }
  json out = {{"type", "table"},      {"key", t.key},       {"title", t.title},
              {"caption", t.caption}, {"columns", columns}, {"rows", rows}};
  if (!t.cell_units.empty()) {
    json cell_units = json::array();
    for (const auto& [at, unit] : t.cell_units) {
      cell_units.push_back({{"row", at.first}, {"column", at.second}, {"unit", unit_symbol(unit)}});
    }
    out["cell_units"] = std::move(cell_units);
  }
  return out;
}

json numbers(const std::vector<double>& values) {
  json out = json::array();
  for (double v : values) out.push_back(cell_json(v));
  return out;
}

json chart_json(const Chart& c) {
  json series = json::array();
  for (const Series& s : c.series) {
    json one = {{"name", s.name}, {"y", numbers(s.y)}, {"reference", s.reference}};
    if (c.kind == ChartKind::bars) {
      one["categories"] = s.categories;
    } else if (c.kind == ChartKind::timeline) {
      one["categories"] = s.categories;
      one["x"] = numbers(s.x);
    } else {
      one["x"] = numbers(s.x);
    }
    if (!s.labels.empty()) one["labels"] = s.labels;
    series.push_back(std::move(one));
  }
  json spans = json::array();
  for (const Span& s : c.spans) spans.push_back({{"x0", s.x0}, {"x1", s.x1}, {"label", s.label}});
  json markers = json::array();
  for (const Marker& m : c.markers) {
    markers.push_back({{"x", m.x}, {"y", m.y}, {"label", m.label}, {"annotation", m.annotation}});
  }
  json rules = json::array();
  for (const Rule& r : c.rules) rules.push_back({{"y", r.y}, {"label", r.label}});
  return {
      {"type", "chart"},
      {"key", c.key},
      {"title", c.title},
      {"caption", c.caption},
      {"kind", c.kind == ChartKind::bars       ? "bars"
               : c.kind == ChartKind::timeline ? "timeline"
                                               : "lines"},
      {"x", {{"title", c.x_title}, {"unit", unit_symbol(c.x_unit)}, {"log", c.x_log}}},
      {"y", {{"title", c.y_title}, {"unit", unit_symbol(c.y_unit)}, {"from_zero", c.y_from_zero}}},
      {"series", series},
      {"spans", spans},
      {"markers", markers},
      {"rules", rules},
      {"points_measured", c.points_measured}};
}

class JsonReporter final : public StreamReporter {
 public:
  explicit JsonReporter(std::ostream& out) : StreamReporter(out, "json", "the JSON report") {}

  Status report_context(const ReportContext& context, const std::vector<Headline>& summary,
                        const std::vector<Finding>& findings) override {
    doc_ = {{"schema_version", kDocumentSchemaVersion},
            {"kind", "gpuscope.report"},
            {"context",
             {{"title", context.title},
              {"generated_utc", context.generated_utc},
              {"gpuscope_version", context.gpuscope_version},
              {"command_line", context.command_line},
              {"sources", context.sources}}}};
    json headlines = json::array();
    for (const Headline& h : summary) {
      headlines.push_back({{"label", h.label},
                           {"value", cell_json(h.value)},
                           {"unit", unit_symbol(h.unit)},
                           {"detail", h.detail},
                           {"tone", tone_name(h.tone)}});
    }
    doc_["summary"] = headlines;
    json found = json::array();
    for (const Finding& f : findings) {
      // "subject" and "text" as schema 1 had them; the finding's own fields beside them where
      // it has any (a document's findings made before analysis::Finding had none).
      json entry = {{"severity", severity_name(f.severity)},
                    {"subject", analysis::subjects_text(f)},
                    {"text", analysis::text(f)}};
      if (!f.id.empty()) entry["id"] = f.id;
      json own = analysis::to_json(f);
      for (const char* key : {"evidence", "expected_speedup", "confidence", "gpu"}) {
        if (own.contains(key) && !(own[key].is_array() && own[key].empty())) entry[key] = own[key];
      }
      if (!f.fix.empty()) {
        entry["title"] = f.title;
        entry["fix"] = f.fix;
      }
      found.push_back(std::move(entry));
    }
    doc_["findings"] = found;
    doc_["sections"] = json::array();
    return Status{};
  }

  Status report_section(const Section& section) override {
    json blocks = json::array();
    for (const Block& block : section.blocks) {
      if (const auto* p = std::get_if<Paragraph>(&block)) {
        blocks.push_back({{"type", "text"}, {"text", p->text}});
      } else if (const auto* t = std::get_if<Table>(&block)) {
        blocks.push_back(table_json(*t));
      } else if (const auto* c = std::get_if<Chart>(&block)) {
        blocks.push_back(chart_json(*c));
      }
    }
    doc_["sections"].push_back({{"key", section.key},
                                {"title", section.title},
                                {"intro", section.intro},
                                {"blocks", blocks}});
    return Status{};
  }

  Status finalize() override {
    out_ << doc_.dump(2, ' ', false, json::error_handler_t::replace) << '\n';
    return StreamReporter::finalize();
  }

 private:
  json doc_;
};

}  // namespace

std::unique_ptr<Reporter> make_json_reporter(std::ostream& out) {
  return std::make_unique<JsonReporter>(out);
}

}  // namespace gpuscope::report::detail
