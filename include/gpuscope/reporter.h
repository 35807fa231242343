// Reporters: one interface, five formats (console, JSON, CSV, Markdown, HTML).
//
// A reporter knows formats, not metrics. A command (or `gpuscope report`) turns its records into
// a Document: a summary that gives the answer first, findings, and sections of plain tables
// (columns with unit hints), charts and text. Any reporter writes any Document, so every
// command gets `--json/--csv/--md/--html FILE` by building one Document. (The interface follows
// google/benchmark's reporters; unit-hinted columns follow nvbench's summaries.)
//
// Numbers in a Document are SI base units (FLOP/s, bytes, watts, seconds; ratios as fractions).
// Reporters for people scale them ("781 TFLOP/s", "79.6 GiB", "78.9 %"); reporters for
// programs (JSON, CSV) keep them as they are.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "gpuscope/analysis.h"
#include "gpuscope/status.h"

namespace gpuscope::report {

// Bumped when a field of the JSON document is renamed, removed or changes meaning.
inline constexpr int kDocumentSchemaVersion = 1;

enum class Unit {
  none,              // a plain number
  count,             // whole things: "1,234"
  ratio,             // a fraction shown as a percentage: 0.789 -> "78.9 %"
  factor,            // a multiplier: 2.31 -> "x2.31"
  seconds,           // "12.3 s", "45.0 ms"
  bytes,             // binary prefixes: "79.6 GiB"
  bytes_per_second,  // decimal prefixes: "3.00 TB/s"
  flop_per_second,   // "781 TFLOP/s"
  op_per_second,     // integer operations (int8 GEMMs): "1.35 POP/s"
  flop_per_joule,    // "1.17 TFLOP/J"
  op_per_joule,      // integer operations per joule (int8 GEMMs): "2.10 TOP/J"
  watts,
  joules,
  hertz,
  celsius,
  per_second,          // events per second ("2,310 /s"); the column title says what is counted
  samples_per_second,  // training or inference samples per second ("2,310 samples/s")
};

// The unit's symbol as the results store writes it: "FLOP/s", "B", "degC", "1" (ratio), ...
std::string_view unit_symbol(Unit unit);
// The inverse of unit_symbol (also "count", "mask" -> count); nullopt for an unknown symbol.
std::optional<Unit> unit_from_symbol(std::string_view symbol);
// For people, three significant digits with an SI (or binary, for bytes) prefix: "781 TFLOP/s".
// "n/a" for a value that is not finite.
std::string format_value(double value, Unit unit);

// How a chart axis of `unit` shows values up to `max_abs`: multiply by `factor`, label with
// `symbol` (flop_per_second, 7.8e14 -> {1e-12, "TFLOP/s"}; ratio -> {100, "%"}).
struct DisplayScale {
  double factor = 1;
  std::string symbol;
};
DisplayScale display_scale(Unit unit, double max_abs);

using Value = std::variant<std::monostate, double, std::string>;  // monostate: missing ("n/a")

struct Column {
  std::string key;    // stable, for programs: "median_flop_per_s"
  std::string title;  // for people: "median"
  Unit unit = Unit::none;
};

struct Table {
  std::string key;  // stable id within the document: "burn_gemm"
  std::string title;
  std::string caption;  // how to read it, in one or two sentences
  std::vector<Column> columns;
  std::vector<std::vector<Value>> rows;  // REQUIRES: each row as long as columns
  // Cells shown in another unit than their column's, by {row, column}: an int8 GEMM row's
  // rates count integer operations (OP/s, OP/J) in FLOP/s and FLOP/J columns.
  std::map<std::pair<std::size_t, std::size_t>, Unit> cell_units;
};

// The unit of one cell: its entry in cell_units, else its column's.
Unit cell_unit(const Table& table, std::size_t row, std::size_t column);

enum class ChartKind {
  bars,   // categorical x (Series::categories), grouped bars
  lines,  // numeric x (Series::x)
  // intervals on rows (a Gantt chart): interval i of a series is on the row categories[i], from
  // x[i] to y[i] (both in x_unit), labels[i] names it; a series is a class of interval
  timeline,
};

struct Series {
  std::string name;
  std::vector<std::string> categories;  // bars
  std::vector<double> x;                // lines
  std::vector<double> y;                // NaN: no value (a gap)
  std::vector<std::string> labels;      // optional text on each bar/point ("79 %")
  bool reference = false;  // a comparison value (datasheet peak, a limit): drawn faint/dashed
  bool markers = false;    // lines: mark each point (few, measured points)
};

// A shaded x interval (e.g. a span of time when the GPU was throttled).
struct Span {
  double x0 = 0, x1 = 0;
  std::string label;
};

// An annotated point (e.g. the power limit that keeps 90% of the speed).
struct Marker {
  double x = 0, y = 0;
  std::string label;       // shown on hover
  std::string annotation;  // drawn next to the point; empty: none (keeps busy charts readable)
};

// A horizontal reference line (a power limit, a slowdown temperature).
struct Rule {
  double y = 0;
  std::string label;
};

struct Chart {
  std::string key;  // stable id within the document
  std::string title;
  std::string caption;
  ChartKind kind = ChartKind::bars;
  std::string x_title;
  Unit x_unit = Unit::none;
  bool x_log = false;  // lines: a logarithmic x axis (sizes over many orders of magnitude)
  std::string y_title;
  Unit y_unit = Unit::none;
  bool y_from_zero = true;  // false: the y axis fits the data (curves that differ near the top)
  std::vector<Series> series;
  std::vector<Span> spans;
  std::vector<Marker> markers;
  std::vector<Rule> rules;
  // The points before downsampling for drawing (0: not downsampled). Tables hold the numbers.
  std::size_t points_measured = 0;
};

struct Paragraph {
  std::string text;
};

using Block = std::variant<Paragraph, Table, Chart>;

struct Section {
  std::string key;  // stable id: "burn", "telemetry", ...
  std::string title;
  std::string intro;  // what the section answers, one or two sentences
  std::vector<Block> blocks;
};

enum class Tone { neutral, good, warning, bad };

// One answer in the summary at the top: "Fastest precision: fp8, 1.44 PFLOP/s".
struct Headline {
  std::string label;
  Value value;
  Unit unit = Unit::none;
  std::string detail;
  Tone tone = Tone::neutral;
};

// A document's findings are gpuscope's one findings model (gpuscope/analysis.h). Reporters
// show each as its subjects (what it is about: "H100 80GB HBM3 · GPU 0, run 3", the precisions
// it holds for), then analysis::text() (what was seen: what to do); the JSON reporter adds the
// finding's own fields (id, evidence, fix, expected gain, confidence) where present.
using analysis::Finding;
using analysis::Severity;
using analysis::severity_name;

struct ReportContext {
  std::string title;
  std::string generated_utc;  // ISO 8601, "2026-11-22T10:15:00Z"
  std::string gpuscope_version;
  std::string command_line;
  std::vector<std::string> sources;  // the stores and files reported on
};

struct Document {
  ReportContext context;
  std::vector<Headline> summary;
  std::vector<Finding> findings;
  std::vector<Section> sections;
};

// The reporter interface. Calls come in this order: report_context once, report_section for
// each section, finalize once. A reporter may buffer until finalize (HTML does, for its table of
// contents). Errors writing the stream come back as io_error.
class Reporter {
 public:
  virtual ~Reporter() = default;
  virtual std::string_view format() const = 0;
  // The answer first: what is reported, the summary and the findings.
  virtual Status report_context(const ReportContext& context, const std::vector<Headline>& summary,
                                const std::vector<Finding>& findings) = 0;
  virtual Status report_section(const Section& section) = 0;
  virtual Status finalize() = 0;
};

// "console", "json", "csv", "md" (or "markdown"), "html". The reporter writes to `out`, which
// must outlive it. invalid_argument for an unknown name; not_supported for "html" in a gpuscope
// built without plotly.js.
Result<std::unique_ptr<Reporter>> make_reporter(std::string_view format, std::ostream& out);
std::vector<std::string_view> reporter_formats();

// Feeds the whole document to the reporter, in order.
Status write_document(Reporter& reporter, const Document& document);

// Writes the document in `format` to the file at `path` ("-": standard output). The file is
// written whole or not at all: into a temporary file beside it, renamed when complete. io_error
// when it cannot be written (no such directory, permissions, disk full).
Status write_document_file(const Document& document, std::string_view format,
                           const std::string& path);

// The `--json/--csv/--md/--html FILE` options every command offers; empty = not wanted.
struct OutputFiles {
  std::string json, csv, markdown, html;
  bool any() const { return !json.empty() || !csv.empty() || !markdown.empty() || !html.empty(); }
};
// Writes each wanted file; stops at the first failure.
Status write_outputs(const Document& document, const OutputFiles& files);

}  // namespace gpuscope::report
