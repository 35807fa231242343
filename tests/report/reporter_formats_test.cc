// Every reporter on the same document: console, Markdown, CSV and JSON against golden files
// (JSON's pins the document schema), HTML by its structure (its 4.8 MB of plotly.js is no
// golden-file material; tests/browser loads it in Chromium).
// GPUSCOPE_UPDATE_GOLDEN=1 rewrites the golden files from the current output.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <sstream>

#include "gpuscope/reporter.h"
#include "support/matchers.h"

namespace gpuscope::report {
namespace {

using gpuscope::testing::HasAllSubstrs;
using ::testing::HasSubstr;
using ::testing::Not;

std::string golden_path(const std::string& name) {
  return std::string(GPUSCOPE_TEST_FIXTURES) + "/report/golden/" + name;
}

// A hand-made document with every kind of block, unit and awkward character.
Document sample_document() {
  Document doc;
  doc.context = {"gpuscope report",
                 "2026-11-22T10:15:00Z",
                 "0.1.0",
                 "gpuscope report results.db",
                 {"results.db", "burn.jsonl"}};
  doc.summary = {
      {"Fastest matrix rate", 1.2567e15, Unit::flop_per_second, "fp8, 63.5 % of the datasheet",
       Tone::neutral},
      {"Best % of datasheet peak", 0.809, Unit::ratio, "fp64", Tone::good},
      {"Problems found", std::string("none"), Unit::none, "", Tone::good},
      {"Host → device (pinned)", std::monostate{}, Unit::bytes_per_second, "not measured",
       Tone::warning},
  };
  doc.findings = {
      {.severity = Severity::error,
       .title = "bf16 results were wrong: 2 elements",
       .subjects = {"H100 80GB HBM3 · GPU 0"}},
      {.severity = Severity::warning,
       .title = "throttled for 3.0 s (sw_power_cap)",
       .subjects = {"H100 80GB HBM3 · GPU 0"}},
      {.severity = Severity::info, .title = "fp8 was not measured: needs \"cc 8.9\", or newer"},
  };
  Section burn;
  burn.key = "burn";
  burn.title = "Compute (burn)";
  burn.intro = "Does the GPU deliver its datasheet compute?";
  burn.blocks.push_back(Paragraph{"Numbers are medians over 1 s windows."});
  Table t;
  t.key = "burn_gemm";
  t.title = "Matrix throughput";
  t.caption = "Medians; % against the datasheet.";
  t.columns = {{"precision", "precision", Unit::none},
               {"median_flop_per_s", "median", Unit::flop_per_second},
               {"fraction_of_peak", "% of peak", Unit::ratio},
               {"errors", "errors", Unit::count},
               {"temperature_max_c", "max temp", Unit::celsius},
               {"sm_clock_hz", "SM clock", Unit::hertz},
               {"device_bytes", "memory", Unit::bytes},
               {"note", "note", Unit::none}};
  t.rows = {
      {std::string("bf16"), 711.5e12, 0.7191, 0.0, 63.0, 1.395e9, 3792699392.0, std::string("")},
      {std::string("fp8"), std::monostate{}, std::monostate{}, std::monostate{}, std::monostate{},
       std::monostate{}, std::monostate{}, std::string("skipped: needs cc 8.9, \"Ada\" | newer")},
      {std::string("fp64"), 54.1e12, 0.809, 1234567.0, std::numeric_limits<double>::quiet_NaN(),
       1.98e9, 512.0, std::string("")},
  };
  Chart bars;
  bars.key = "gemm";
  bars.title = "Measured vs datasheet";
  bars.kind = ChartKind::bars;
  bars.x_title = "precision";
  bars.y_title = "throughput";
  bars.y_unit = Unit::flop_per_second;
  Series measured;
  measured.name = "measured";
  measured.categories = {"bf16", "fp64"};
  measured.y = {711.5e12, 54.1e12};
  measured.labels = {"72%", "81%"};
  Series datasheet;
  datasheet.name = "datasheet";
  datasheet.categories = {"bf16", "fp64"};
  datasheet.y = {989.4e12, 66.9e12};
  datasheet.reference = true;
  bars.series = {measured, datasheet};
  Chart lines;
  lines.key = "power";
  lines.title = "Power";
  lines.kind = ChartKind::lines;
  lines.x_title = "time";
  lines.x_unit = Unit::seconds;
  lines.y_title = "power";
  lines.y_unit = Unit::watts;
  Series power;
  power.name = "GPU 0";
  power.x = {0, 1, 2, 3};
  power.y = {75, 699, 700, std::nan("")};
  lines.series = {power};
  lines.spans = {{1, 2.5, "throttled: sw_power_cap"}};
  lines.markers = {{2, 700, "90 % at 700 W", "700 W"}};
  lines.rules = {{700, "power limit 700 W"}};
  lines.points_measured = 3000;
  burn.blocks.push_back(bars);
  burn.blocks.push_back(lines);
  burn.blocks.push_back(t);
  doc.sections.push_back(burn);
  Section empty;
  empty.key = "runs";
  empty.title = "Runs";
  doc.sections.push_back(empty);
  return doc;
}

std::string render(std::string_view format) {
  std::ostringstream out;
  auto reporter = make_reporter(format, out);
  EXPECT_TRUE(reporter.ok()) << reporter.status().to_string();
  if (!reporter.ok()) return {};
  EXPECT_EQ((*reporter)->format(), format == "markdown" ? "md" : format);
  Status written = write_document(**reporter, sample_document());
  EXPECT_TRUE(written.ok()) << written.to_string();
  return out.str();
}

void expect_golden(const std::string& output, const std::string& name) {
  std::string path = golden_path(name);
  if (std::getenv("GPUSCOPE_UPDATE_GOLDEN")) {
    std::filesystem::create_directories(std::filesystem::path(path).parent_path());
    std::ofstream(path, std::ios::binary) << output;
  }
  std::ifstream in(path, std::ios::binary);
  ASSERT_TRUE(in) << "missing golden file " << path << " (GPUSCOPE_UPDATE_GOLDEN=1 writes it)";
  std::stringstream want;
  want << in.rdbuf();
  EXPECT_EQ(output, want.str()) << "output differs from " << path;
}

class ReporterFormatTest : public ::testing::TestWithParam<std::string> {};

TEST_P(ReporterFormatTest, MatchesGoldenFile) {
  static const std::map<std::string, std::string> kGolden = {{"console", "report.txt"},
                                                             {"md", "report.md"},
                                                             {"csv", "report.csv"},
                                                             {"json", "report.json"}};
  expect_golden(render(GetParam()), kGolden.at(GetParam()));
}

INSTANTIATE_TEST_SUITE_P(Formats, ReporterFormatTest,
                         ::testing::Values("console", "md", "csv", "json"));

TEST(ReporterTest, JsonCarriesItsSchemaVersionAndRawSiNumbers) {
  nlohmann::json doc = nlohmann::json::parse(render("json"));
  EXPECT_EQ(doc["schema_version"], kDocumentSchemaVersion);
  EXPECT_EQ(doc["kind"], "gpuscope.report");
  const auto& table = doc["sections"][0]["blocks"][3];
  EXPECT_EQ(table["type"], "table");
  EXPECT_EQ(table["columns"][1]["unit"], "FLOP/s");
  EXPECT_DOUBLE_EQ(table["rows"][0][1].get<double>(), 711.5e12);
  EXPECT_TRUE(table["rows"][1][1].is_null()) << "missing is null, never 0";
  EXPECT_TRUE(table["rows"][2][4].is_null()) << "NaN is null";
}

// A cell may have another unit than its column: int8's integer operations in a FLOP/s column.
TEST(ReporterTest, ACellShowsItsOwnUnitInEveryFormatForPeople) {
  Document doc;
  Section s;
  s.key = "burn";
  s.title = "Compute";
  Table t;
  t.key = "burn_gemm";
  t.columns = {{"precision", "precision", Unit::none},
               {"median_flop_per_s", "median", Unit::flop_per_second},
               {"flop_per_j", "efficiency", Unit::flop_per_joule}};
  t.rows = {{std::string("bf16"), 711.5e12, 1.1e12}, {std::string("int8"), 1.3465e15, 2.1e12}};
  t.cell_units = {{{1, 1}, Unit::op_per_second}, {{1, 2}, Unit::op_per_joule}};
  s.blocks.push_back(t);
  doc.sections.push_back(s);
  EXPECT_EQ(cell_unit(t, 0, 1), Unit::flop_per_second);
  EXPECT_EQ(cell_unit(t, 1, 1), Unit::op_per_second);
  for (std::string_view format : {"console", "md", "html"}) {
    std::ostringstream out;
    auto reporter = make_reporter(format, out);
    ASSERT_TRUE(reporter.ok());
    ASSERT_TRUE(write_document(**reporter, doc).ok());
    EXPECT_THAT(out.str(), HasSubstr("712 TFLOP/s")) << format;
    EXPECT_THAT(out.str(), HasSubstr("1.35 POP/s")) << format;
    EXPECT_THAT(out.str(), HasSubstr("2.10 TOP/J")) << format;
    EXPECT_THAT(out.str(), Not(HasSubstr("1.35 PFLOP/s"))) << format;
  }
  std::ostringstream json_out;
  auto json_reporter = make_reporter("json", json_out);
  ASSERT_TRUE(write_document(**json_reporter, doc).ok());
  const auto table = nlohmann::json::parse(json_out.str())["sections"][0]["blocks"][0];
  EXPECT_EQ(table["cell_units"][0]["unit"], "OP/s");
  EXPECT_EQ(table["cell_units"][0]["row"], 1);
}

TEST(ReporterTest, CsvKeepsFullPrecisionAndQuotes) {
  std::string csv = render("csv");
  EXPECT_THAT(csv,
              HasAllSubstrs({"burn_gemm,bf16,711500000000000,0.7191,0,63,1395000000,3792699392,",
                             "\"skipped: needs cc 8.9, \"\"Ada\"\" | newer\"",
                             "table,precision,median_flop_per_s [FLOP/s],fraction_of_peak [1]"}));
}

TEST(ReporterTest, HtmlIsOneSelfContainedPageWithAFigurePerChart) {
  std::string html = render("html");
  ASSERT_THAT(html, HasSubstr("<!DOCTYPE html>"));
  EXPECT_GT(html.size(), 1000000u) << "plotly.js is inlined";
  EXPECT_THAT(html, HasAllSubstrs({
                        "id=\"c-burn-gemm\"", "id=\"c-burn-power\"", "Content-Security-Policy",
                        "Drawn from 4 of 3000 points",
                        "&quot;Ada&quot; | newer"  // escaped
                    }));
  EXPECT_THAT(html, Not(HasSubstr("<script src")));
  EXPECT_THAT(html, Not(HasSubstr("<link")));
  // The page apart from the plotly.js bundle names no URL at all.
  std::size_t bundle = html.find("<script>", html.find("gpuscope-figures"));
  std::size_t bundle_end = html.find("</script>", bundle);
  ASSERT_NE(bundle, std::string::npos);
  std::string own = html.substr(0, bundle) + html.substr(bundle_end);
  EXPECT_THAT(own, Not(HasSubstr("http:")));
  EXPECT_THAT(own, Not(HasSubstr("https:")));

  std::size_t start = html.find("<script type=\"application/json\" id=\"gpuscope-figures\">");
  ASSERT_NE(start, std::string::npos);
  start = html.find('>', start) + 1;
  nlohmann::json figures =
      nlohmann::json::parse(html.substr(start, html.find("</script>", start) - start));
  ASSERT_EQ(figures.size(), 2u);
  const auto& bars = figures["c-burn-gemm"];
  ASSERT_EQ(bars["data"].size(), 2u);
  EXPECT_EQ(bars["data"][0]["type"], "bar");
  EXPECT_DOUBLE_EQ(bars["data"][0]["y"][0].get<double>(), 711.5) << "scaled to TFLOP/s";
  EXPECT_EQ(bars["layout"]["yaxis"]["title"]["text"], "throughput (TFLOP/s)");
  const auto& power = figures["c-burn-power"];
  EXPECT_TRUE(power["data"][0]["y"][3].is_null()) << "a gap stays a gap";
  EXPECT_EQ(power["layout"]["shapes"].size(), 2u);  // the span and the rule
}

TEST(ReporterTest, UnknownFormatIsRefused) {
  std::ostringstream out;
  EXPECT_EQ(make_reporter("pdf", out).code(), Code::invalid_argument);
  EXPECT_THAT(reporter_formats(), ::testing::ElementsAre("console", "json", "csv", "md", "html"));
}

TEST(ReporterTest, EachFormatSaysWhichReportAFailedStreamLost) {
  const std::pair<std::string_view, std::string_view> reports[] = {
      {"console", "the console report"},
      {"json", "the JSON report"},
      {"csv", "the CSV report"},
      {"md", "the Markdown report"},
      {"html", "the HTML report"}};
  for (const auto& [format, what] : reports) {
    std::ostringstream out;
    auto reporter = make_reporter(format, out);
    ASSERT_TRUE(reporter.ok()) << reporter.status().to_string();
    out.setstate(std::ios::badbit);  // as a full disk or a closed pipe leaves it
    Status written = write_document(**reporter, sample_document());
    EXPECT_EQ(written.code(), Code::io_error) << format;
    EXPECT_THAT(written.message(), HasSubstr("writing " + std::string(what) + " failed"));
  }
}

TEST(ReporterTest, FilesAreWrittenWholeOrNotAtAll) {
  std::string dir = (std::filesystem::temp_directory_path() / "gpuscope-reporter-test").string();
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  OutputFiles files;
  files.json = dir + "/r.json";
  files.markdown = dir + "/r.md";
  ASSERT_TRUE(write_outputs(sample_document(), files).ok());
  EXPECT_TRUE(std::filesystem::exists(files.json));
  EXPECT_TRUE(std::filesystem::exists(files.markdown));
  Status failed = write_document_file(sample_document(), "csv", dir + "/missing/r.csv");
  EXPECT_EQ(failed.code(), Code::io_error) << failed.to_string();
  int leftovers = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    leftovers += entry.path().string().find(".tmp-") != std::string::npos;
  }
  EXPECT_EQ(leftovers, 0);
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace gpuscope::report
