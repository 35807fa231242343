// Every table of the document as CSV, for spreadsheets and scripts. One block per table,
// blocks separated by an empty line; each block's first column names its table, so the blocks
// can be told apart (or concatenated by a script that filters on it). Numbers are SI units at
// full precision; the unit is in the header ("median [FLOP/s]"). Charts are not written: their
// numbers are in the tables.
#include <fmt/format.h>

#include <cmath>

#include "report/csv_writer.h"
#include "report/reporter_common.h"

namespace gpuscope::report::detail {
namespace {

std::string csv_value(const Value& value) {
  if (const double* number = std::get_if<double>(&value)) {
    return std::isfinite(*number) ? fmt::format("{}", *number) : "";
  }
  if (const std::string* text = std::get_if<std::string>(&value)) return *text;
  return "";
}

std::string header(const Column& c) {
  std::string_view unit = unit_symbol(c.unit);
  return unit.empty() ? c.key : fmt::format("{} [{}]", c.key, unit);
}

class CsvReporter final : public StreamReporter {
 public:
  explicit CsvReporter(std::ostream& out) : StreamReporter(out, "csv", "the CSV report") {}

  Status report_context(const ReportContext&, const std::vector<Headline>& summary,
                        const std::vector<Finding>& findings) override {
    if (!summary.empty()) {
      begin_block();
      out_ << csv_line({"table", "label", "value", "unit", "detail", "tone"});
      for (const Headline& h : summary) {
        out_ << csv_line({"summary", h.label, csv_value(h.value), std::string(unit_symbol(h.unit)),
                          h.detail, std::string(tone_name(h.tone))});
      }
    }
    if (!findings.empty()) {
      begin_block();
      out_ << csv_line({"table", "severity", "subject", "text"});
      for (const Finding& f : findings) {
        out_ << csv_line({"findings", std::string(severity_name(f.severity)),
                          analysis::subjects_text(f), analysis::text(f)});
      }
    }
    return written();
  }

  Status report_section(const Section& section) override {
    for (const Block& block : section.blocks) {
      const auto* t = std::get_if<Table>(&block);
      if (t == nullptr) continue;
      begin_block();
      std::vector<std::string> head = {"table"};
      for (const Column& c : t->columns) head.push_back(header(c));
      out_ << csv_line(head);
      for (const auto& row : t->rows) {
        std::vector<std::string> cells = {t->key};
        for (const Value& v : row) cells.push_back(csv_value(v));
        out_ << csv_line(cells);
      }
    }
    return written();
  }

 private:
  void begin_block() {
    if (blocks_++ > 0) out_ << '\n';
  }

  int blocks_ = 0;
};

}  // namespace

std::unique_ptr<Reporter> make_csv_reporter(std::ostream& out) {
  return std::make_unique<CsvReporter>(out);
}

}  // namespace gpuscope::report::detail
