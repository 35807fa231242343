// One self-contained HTML page: summary cards, findings, and sections of plotly.js charts and
// tables. plotly.js is inlined, so the file opens offline and makes no network request.
#include <fmt/format.h>

#include <cmath>
#include <filesystem>
#include <sstream>

#include "report/html_figure.h"
#include "report/html_page.h"
#include "report/html_plotly_js.h"
#include "report/reporter_common.h"

namespace gpuscope::report::detail {
namespace {

using nlohmann::json;

// Element ids from document keys: letters, digits and '-' only.
std::string element_id(std::string_view prefix, std::string_view key) {
  std::string id(prefix);
  for (char c : key) {
    bool plain = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    id += plain ? c : '-';
  }
  return id;
}

// "1.35 PFLOP/s" as a big number and a smaller unit, so that long units do not wrap.
std::string card_value(const Headline& h) {
  std::string text = cell_text(h.value, h.unit);
  std::size_t space = text.find(' ');
  if (!std::holds_alternative<double>(h.value) || space == std::string::npos) {
    return html_escape(text);
  }
  return fmt::format("{}<span class=\"unit\">{}</span>", html_escape(text.substr(0, space)),
                     html_escape(text.substr(space)));
}

class HtmlReporter final : public StreamReporter {
 public:
  explicit HtmlReporter(std::ostream& out) : StreamReporter(out, "html", "the HTML report") {}

  Status report_context(const ReportContext& context, const std::vector<Headline>& summary,
                        const std::vector<Finding>& findings) override {
    context_ = context;
    std::ostringstream body;
    if (!summary.empty()) {
      body << "<section id=\"summary\"><h2>Summary</h2><div class=\"cards\">\n";
      for (const Headline& h : summary) {
        body << fmt::format(
            "<div class=\"card {}\"><div class=\"label\">{}</div><div class=\"value\">{}</div>"
            "<div class=\"detail\">{}</div></div>\n",
            tone_name(h.tone), html_escape(h.label), card_value(h), html_escape(h.detail));
      }
      body << "</div></section>\n";
      toc_.emplace_back("summary", "Summary");
    }
    if (!findings.empty()) {
      body << "<section id=\"findings\"><h2>Findings</h2><ul class=\"findings\">\n";
      for (const Finding& f : findings) {
        std::string_view sev = severity_name(f.severity);
        const std::string subject = analysis::subjects_text(f);
        body << fmt::format("<li><span class=\"sev {}\">{}</span>{}{}</li>\n", sev, sev,
                            subject.empty() ? std::string()
                                            : fmt::format("<span class=\"subject\">{}</span>: ",
                                                          html_escape(subject)),
                            html_escape(analysis::text(f)));
      }
      body << "</ul></section>\n";
      toc_.emplace_back("findings", fmt::format("Findings ({})", findings.size()));
    }
    body_ += body.str();
    return Status{};
  }

  Status report_section(const Section& section) override {
    std::string id = element_id("s-", section.key);
    toc_.emplace_back(id, section.title);
    std::ostringstream html;
    html << fmt::format("<section id=\"{}\"><h2>{}</h2>\n", id, html_escape(section.title));
    if (!section.intro.empty()) {
      html << fmt::format("<p class=\"intro\">{}</p>\n", html_escape(section.intro));
    }
    // Consecutive charts share a grid row on a wide screen; tables take the full width.
    bool in_grid = false;
    for (const Block& block : section.blocks) {
      const auto* chart = std::get_if<Chart>(&block);
      if (chart && !in_grid) html << "<div class=\"grid\">\n";
      if (!chart && in_grid) html << "</div>\n";
      in_grid = chart != nullptr;
      if (chart) {
        write_chart(html, section.key, *chart);
      } else if (const auto* t = std::get_if<Table>(&block)) {
        write_table(html, *t);
      } else if (const auto* p = std::get_if<Paragraph>(&block)) {
        html << fmt::format("<p>{}</p>\n", html_escape(p->text));
      }
    }
    if (in_grid) html << "</div>\n";
    html << "</section>\n";
    body_ += html.str();
    return Status{};
  }

  Status finalize() override {
    std::string_view plotly = plotly_js();
    out_ << "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
         << "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
         // How a later run knows this file is its own to replace (gpuscope/files.h).
         << "<meta name=\"generator\" content=\"gpuscope\">\n"
         // Nothing may be fetched: the page must look the same offline, years from now.
         << "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; "
            "script-src 'unsafe-inline'; style-src 'unsafe-inline'; img-src data: "
            "blob:; font-src data:\">\n"
         << fmt::format("<title>{}</title>\n", html_escape(context_.title)) << "<style>"
         << page_css() << "</style>\n</head>\n<body>\n";
    out_ << fmt::format("<header><h1>{}</h1><p class=\"meta\">Generated {} by gpuscope {}",
                        html_escape(context_.title), html_escape(context_.generated_utc),
                        html_escape(context_.gpuscope_version));
    if (!context_.sources.empty()) {
      out_ << " from ";
      for (std::size_t i = 0; i < context_.sources.size(); ++i) {
        const std::string& source = context_.sources[i];
        out_ << (i ? ", " : "")
             << fmt::format("<code title=\"{}\">{}</code>", html_escape(source),
                            html_escape(std::filesystem::path(source).filename().string()));
      }
    }
    out_ << "</p></header>\n<nav class=\"toc\">";
    for (const auto& [id, title] : toc_) {
      out_ << fmt::format("<a href=\"#{}\">{}</a>", id, html_escape(title));
    }
    out_ << "</nav>\n<main>\n" << body_ << "</main>\n";
    out_ << fmt::format(
        "<footer>Charts drawn by {} (MIT licence), inlined: this file needs no network.</footer>\n",
        html_escape(plotly_js_version()));
    out_ << "<script type=\"application/json\" id=\"gpuscope-figures\">"
         << script_safe_json(figures_) << "</script>\n";
    out_ << "<script>" << script_safe_js(plotly) << "</script>\n";
    out_ << "<script>" << page_script() << "</script>\n</body>\n</html>\n";
    return StreamReporter::finalize();
  }

 private:
  void write_chart(std::ostringstream& html, std::string_view section_key, const Chart& c) {
    std::string id = element_id("c-", fmt::format("{}-{}", section_key, c.key));
    if (figures_.contains(id)) id += fmt::format("-{}", figures_.size());
    figures_[id] = plotly_figure(c);
    std::string caption = c.caption;
    if (c.points_measured > 0) {
      std::size_t drawn = 0;
      for (const Series& s : c.series) drawn += s.y.size();
      caption += fmt::format(
          "{}Drawn from {} of {} points (min/max kept in every interval); the "
          "tables use every point.",
          caption.empty() ? "" : " ", drawn, c.points_measured);
    }
    html << fmt::format("<figure class=\"chart\"><h3>{}</h3><div class=\"plot\" id=\"{}\"></div>",
                        html_escape(c.title), id);
    if (!caption.empty()) html << fmt::format("<figcaption>{}</figcaption>", html_escape(caption));
    html << "</figure>\n";
  }

  void write_table(std::ostringstream& html, const Table& t) {
    if (!t.title.empty()) html << fmt::format("<h3>{}</h3>\n", html_escape(t.title));
    html << "<div class=\"table-wrap\"><table class=\"data\"><thead><tr>";
    for (const Column& c : t.columns) {
      bool numeric = c.unit != Unit::none;
      html << fmt::format("<th{}>{}</th>", numeric ? " class=\"num\"" : "", html_escape(c.title));
    }
    html << "</tr></thead><tbody>\n";
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      const auto& row = t.rows[r];
      html << "<tr>";
      for (std::size_t i = 0; i < t.columns.size(); ++i) {
        const Unit unit = cell_unit(t, r, i);
        const Value empty;
        const Value& v = i < row.size() ? row[i] : empty;
        std::string classes;
        if (std::holds_alternative<double>(v)) classes = "num";
        if (std::holds_alternative<std::monostate>(v)) classes = "na";
        std::string exact;
        if (const double* number = std::get_if<double>(&v); number && std::isfinite(*number)) {
          std::string_view symbol = unit_symbol(unit);
          exact = fmt::format(" title=\"{}{}{}\"", *number, symbol.empty() ? "" : " ",
                              html_escape(symbol));
        }
        html << fmt::format("<td{}{}>{}</td>", classes.empty() ? "" : " class=\"" + classes + "\"",
                            exact, html_escape(cell_text(v, unit)));
      }
      html << "</tr>\n";
    }
    html << "</tbody></table></div>\n";
    if (!t.caption.empty())
      html << fmt::format("<p class=\"caption\">{}</p>\n", html_escape(t.caption));
  }

  ReportContext context_;
  std::vector<std::pair<std::string, std::string>> toc_;
  std::string body_;
  json figures_ = json::object();
};

}  // namespace

Result<std::unique_ptr<Reporter>> make_html_reporter(std::ostream& out) {
  if (plotly_js().empty()) {
    return Status(Code::not_supported,
                  "this gpuscope was built without plotly.js, so it cannot write HTML reports: "
                  "run scripts/setup-deps.sh, then configure and build again");
  }
  return std::unique_ptr<Reporter>(std::make_unique<HtmlReporter>(out));
}

}  // namespace gpuscope::report::detail
