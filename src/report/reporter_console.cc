// Plain text for a terminal: the summary, findings, then each section's tables. Charts are
// named, not drawn: the HTML report draws them.
#include <fmt/format.h>

#include "report/reporter_common.h"
#include "report/table.h"

namespace gpuscope::report::detail {
namespace {

class ConsoleReporter final : public StreamReporter {
 public:
  explicit ConsoleReporter(std::ostream& out)
      : StreamReporter(out, "console", "the console report") {}

  Status report_context(const ReportContext& context, const std::vector<Headline>& summary,
                        const std::vector<Finding>& findings) override {
    out_ << context.title << '\n';
    out_ << fmt::format("generated {} by gpuscope {}\n", context.generated_utc,
                        context.gpuscope_version);
    for (const std::string& source : context.sources) out_ << "  from " << source << '\n';
    if (!summary.empty()) {
      out_ << "\nSummary\n";
      TextTable table;
      for (const Headline& h : summary) {
        table.add_row({h.label, cell_text(h.value, h.unit), h.detail});
      }
      table.print(out_, 2);
    }
    if (!findings.empty()) {
      out_ << "\nFindings\n";
      for (const Finding& f : findings) {
        const std::string subject = analysis::subjects_text(f);
        out_ << fmt::format("  {:<8} {}{}\n", severity_name(f.severity),
                            subject.empty() ? "" : subject + ": ", analysis::text(f));
      }
    }
    return written();
  }

  Status report_section(const Section& section) override {
    out_ << "\n== " << section.title << " ==\n";
    if (!section.intro.empty()) out_ << section.intro << '\n';
    for (const Block& block : section.blocks) {
      if (const auto* p = std::get_if<Paragraph>(&block)) {
        out_ << '\n' << p->text << '\n';
      } else if (const auto* t = std::get_if<Table>(&block)) {
        print_table(*t);
      } else if (const auto* c = std::get_if<Chart>(&block)) {
        out_ << fmt::format("\n  [chart: {} — drawn in the HTML report]\n", c->title);
      }
    }
    return written();
  }

 private:
  void print_table(const Table& t) {
    out_ << '\n' << "  " << t.title << '\n';
    std::vector<std::string> header;
    for (const Column& c : t.columns) header.push_back(c.title);
    TextTable table(header);
    for (std::size_t r = 0; r < t.rows.size(); ++r) {
      const auto& row = t.rows[r];
      std::vector<std::string> cells;
      for (std::size_t i = 0; i < t.columns.size(); ++i) {
        cells.push_back(i < row.size() ? cell_text(row[i], cell_unit(t, r, i)) : "");
      }
      table.add_row(std::move(cells));
    }
    table.print(out_, 2);
    if (!t.caption.empty()) out_ << "  " << t.caption << '\n';
  }
};

}  // namespace

std::unique_ptr<Reporter> make_console_reporter(std::ostream& out) {
  return std::make_unique<ConsoleReporter>(out);
}

}  // namespace gpuscope::report::detail
