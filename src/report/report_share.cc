// The sharing section (`bench --share`): total throughput against the number of copies, per
// mode (time slicing, MPS, MIG), and the table of totals, gains, fairness and energy per sample.
#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <map>
#include <tuple>

#include "report/report_model.h"

namespace gpuscope::report::detail {
namespace {

struct ShareRow {
  Entry entry;
  std::string workload, mode;
  double copies = 0;
  std::optional<double> total, gain, fairness, energy_per_sample_j;
};

std::vector<ShareRow> collect(const ReportBuilder& b) {
  namespace names = store::names;
  std::vector<ShareRow> rows;
  for (const store::RunData& run : b.runs()) {
    if (!holds(run, DataKind::bench)) continue;
    std::map<std::tuple<int, std::string, std::string, double>, std::size_t> index;
    for (const store::Measurement& m : run.measurements) {
      const std::string mode = tag_text(m, "share_mode");
      const auto copies = tag_number(m, "share_copies");
      if (mode.empty() || !copies || !m.value) continue;
      const bool total = tag_text(m, "copy") == "total";
      const bool trial_wide = m.name == "share_gain" || m.name == "share_fairness";
      if (!total && !trial_wide) continue;
      const int gpu = m.gpu.value_or(0);
      const std::string workload = tag_text(m, "workload");
      auto [it, added] = index.try_emplace({gpu, workload, mode, *copies}, rows.size());
      if (added) {
        rows.push_back({Entry{&run, ReportBuilder::find_gpu(run, gpu), gpu},
                        workload,
                        mode,
                        *copies,
                        {},
                        {},
                        {},
                        {}});
      }
      ShareRow& row = rows[it->second];
      if (m.name == names::kSamplesPerS) row.total = m.value;
      if (m.name == names::kEnergyPerSample) row.energy_per_sample_j = m.value;
      if (m.name == "share_gain") row.gain = m.value;
      if (m.name == "share_fairness") row.fairness = m.value;
    }
  }
  return rows;
}

}  // namespace

void add_share_section(ReportBuilder& b) {
  const std::vector<ShareRow> rows = collect(b);
  if (rows.empty()) return;
  Section s;
  s.key = "share";
  s.title = "Sharing one GPU (bench --share)";
  s.intro =
      "Several copies of one workload at once on one GPU: time-sliced, under MPS, or one per MIG "
      "instance. A mode pays off while its total keeps rising with the copies.";
  Chart c;
  c.key = "share_total";
  c.title = "Total throughput against copies";
  c.kind = ChartKind::lines;
  c.x_title = "copies";
  c.x_unit = Unit::count;
  c.y_title = "total throughput";
  c.y_unit = Unit::samples_per_second;
  std::map<std::string, std::size_t> series;
  for (const ShareRow& row : rows) {
    if (!row.total) continue;
    const std::string name = row.workload + " " + row.mode;
    auto [it, added] = series.try_emplace(name, c.series.size());
    if (added) {
      Series line;
      line.name = name;
      line.markers = true;
      c.series.push_back(line);
    }
    c.series[it->second].x.push_back(row.copies);
    c.series[it->second].y.push_back(*row.total);
  }
  s.blocks.push_back(std::move(c));
  Table t;
  t.key = "share_trials";
  t.title = "Copies together";
  t.caption =
      "Total: the copies' rates summed over the time all of them ran; gain against one process "
      "alone; fairness: slowest copy / fastest; energy per sample of the whole GPU.";
  t.columns = {{"workload", "workload", Unit::none},
               {"mode", "mode", Unit::none},
               {"copies", "copies", Unit::count},
               {"total", "total", Unit::samples_per_second},
               {"gain", "gain", Unit::factor},
               {"fairness", "fairness", Unit::ratio},
               {"energy_per_sample_j", "energy/sample", Unit::joules}};
  for (const ShareRow& row : rows) {
    t.rows.push_back({row.workload, row.mode, row.copies, optional_value(row.total),
                      optional_value(row.gain), optional_value(row.fairness),
                      optional_value(row.energy_per_sample_j)});
  }
  s.blocks.push_back(std::move(t));
  b.add_section(std::move(s));
}

}  // namespace gpuscope::report::detail
