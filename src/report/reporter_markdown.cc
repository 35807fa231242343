// GitHub-flavoured Markdown: for pasting into an issue, a pull request or bench/RESULTS.md.
// Tables as pipe tables with values in readable units; charts named, with a pointer to the
// HTML report.
#include <fmt/format.h>

#include "report/reporter_common.h"

namespace gpuscope::report::detail {
namespace {

// A table cell may not hold a pipe or a line break.
std::string md_cell(std::string_view text) {
  std::string out;
  for (char c : text) {
    if (c == '|') {
      out += "\\|";
    } else if (c == '\n' || c == '\r') {
      out += ' ';
    } else {
      out += c;
    }
  }
  return out;
}

bool right_aligned(Unit unit) {
  return unit != Unit::none;
}

class MarkdownReporter final : public StreamReporter {
 public:
  explicit MarkdownReporter(std::ostream& out) : StreamReporter(out, "md", "the Markdown report") {}

  Status report_context(const ReportContext& context, const std::vector<Headline>& summary,
                        const std::vector<Finding>& findings) override {
    out_ << "# " << context.title << "\n\n";
    out_ << fmt::format("Generated {} by gpuscope {}", context.generated_utc,
                        context.gpuscope_version);
    if (!context.sources.empty()) {
      out_ << " from ";
      for (std::size_t i = 0; i < context.sources.size(); ++i) {
        out_ << (i ? ", " : "") << '`' << context.sources[i] << '`';
      }
    }
    out_ << ".\n";
    if (!summary.empty()) {
      out_ << "\n## Summary\n\n";
      for (const Headline& h : summary) {
        out_ << fmt::format("- **{}**: {}{}\n", h.label, cell_text(h.value, h.unit),
                            h.detail.empty() ? "" : " — " + h.detail);
      }
    }
    if (!findings.empty()) {
      out_ << "\n## Findings\n\n";
      for (const Finding& f : findings) {
        const std::string subject = analysis::subjects_text(f);
        out_ << fmt::format("- **{}** {}{}\n", severity_name(f.severity),
                            subject.empty() ? "" : subject + ": ", analysis::text(f));
      }
    }
    return written();
  }

  Status report_section(const Section& section) override {
    out_ << "\n## " << section.title << "\n";
    if (!section.intro.empty()) out_ << '\n' << section.intro << '\n';
    for (const Block& block : section.blocks) {
      if (const auto* p = std::get_if<Paragraph>(&block)) {
        out_ << '\n' << p->text << '\n';
      } else if (const auto* t = std::get_if<Table>(&block)) {
        write_table(*t);
      } else if (const auto* c = std::get_if<Chart>(&block)) {
        out_ << fmt::format("\n*Chart: {}* (drawn in the HTML report)\n", c->title);
      }
    }
    return written();
  }

 private:
  void write_table(const Table& t) {
    out_ << "\n### " << t.title << "\n\n";
    out_ << '|';
    for (const Column& c : t.columns) out_ << ' ' << md_cell(c.title) << " |";
    out_ << "\n|";
    for (const Column& c : t.columns) out_ << (right_aligned(c.unit) ? " ---: |" : " --- |");
    out_ << '\n';
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      const auto& row = t.rows[r];
      out_ << '|';
      for (std::size_t i = 0; i < t.columns.size(); ++i) {
        std::string cell = i < row.size() ? cell_text(row[i], cell_unit(t, r, i)) : "";
        out_ << ' ' << md_cell(cell) << " |";
      }
      out_ << '\n';
    }
    if (!t.caption.empty()) out_ << '\n' << t.caption << '\n';
  }
};

}  // namespace

std::unique_ptr<Reporter> make_markdown_reporter(std::ostream& out) {
  return std::make_unique<MarkdownReporter>(out);
}

}  // namespace gpuscope::report::detail
