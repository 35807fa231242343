#include <algorithm>
#include <map>
#include <numeric>
#include <set>
#include <tuple>

#include "report/report_bench_rows.h"

namespace gpuscope::report::detail {

BenchRows collect_bench_rows(const ReportBuilder& builder) {
  namespace names = store::names;
  BenchRows out;
  std::set<std::size_t> runs_seen;
  const auto& runs = builder.runs();
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const store::RunData& run = runs[r];
    if (!holds(run, DataKind::bench)) continue;
    std::vector<BenchRow> rows;  // this run's, in the order met
    std::map<std::tuple<int, std::string, std::string, std::string>, LossCurve> curves;
    for (const store::Measurement& m : run.measurements) {
      if (m.tags.is_object() && m.tags.contains("power_limit_w")) continue;  // a sweep point
      if (m.tags.is_object() && m.tags.contains("share_mode")) continue;     // bench --share's
      bool known = m.name == names::kSamplesPerS || m.name == names::kPeakMemory ||
                   m.name == names::kEnergyPerSample || m.name == names::kLoss;
      if (!known) continue;
      int gpu = m.gpu.value_or(0);
      Entry entry{&run, ReportBuilder::find_gpu(run, gpu), gpu};
      std::string model = tag_text(m, "model"), task = tag_text(m, "task"),
                  mode = tag_text(m, "mode");
      if (m.name == names::kLoss) {
        auto step = tag_number(m, "step");
        if (!step || !m.value) continue;
        LossCurve& curve = curves[{gpu, model, task, mode}];
        curve.entry = entry;
        curve.model = model;
        curve.task = task;
        curve.mode = mode;
        curve.steps.push_back(*step);
        curve.losses.push_back(*m.value);
        continue;
      }
      auto batch = tag_number(m, "batch_size");
      const std::string variant = tag_text(m, "variant");
      auto it = std::find_if(rows.begin(), rows.end(), [&](const BenchRow& row) {
        return row.entry.gpu_number == gpu && row.model == model && row.task == task &&
               row.mode == mode && row.batch_size == batch && row.variant == variant;
      });
      if (it == rows.end()) {
        rows.push_back({entry, model, task, mode, batch, {}, {}, {}, {}, variant, {}});
        it = rows.end() - 1;
      }
      if (std::string guard = tag_text(m, "guard"); !guard.empty()) it->guard = guard;
      if (!m.value) {
        std::string why = tag_text(m, "skipped");
        it->skipped = why.empty() ? "not measured" : why;
      } else if (m.name == names::kSamplesPerS) {
        it->samples_per_s = m.value;
      } else if (m.name == names::kPeakMemory) {
        it->peak_memory_bytes = m.value;
      } else if (m.name == names::kEnergyPerSample) {
        it->energy_per_sample_j = m.value;
      }
    }
    // Training before inference, as people read them; modes in the order they were measured.
    auto task_rank = [](const std::string& task) {
      return task == "train" ? 0 : task == "infer" ? 1 : 2;
    };
    std::stable_sort(rows.begin(), rows.end(), [&](const BenchRow& a, const BenchRow& x) {
      return std::make_tuple(a.entry.gpu_number, a.model, task_rank(a.task), a.task) <
             std::make_tuple(x.entry.gpu_number, x.model, task_rank(x.task), x.task);
    });
    if (!rows.empty() || !curves.empty()) runs_seen.insert(r);
    out.rows.insert(out.rows.end(), rows.begin(), rows.end());
    for (auto& [key, curve] : curves) {
      std::vector<std::size_t> order(curve.steps.size());
      std::iota(order.begin(), order.end(), std::size_t{0});
      const auto& steps = curve.steps;  // a structured binding: clang 14 cannot capture it
      std::sort(order.begin(), order.end(),
                [&](std::size_t a, std::size_t x) { return steps[a] < steps[x]; });
      LossCurve sorted = curve;
      for (std::size_t i = 0; i < order.size(); ++i) {
        sorted.steps[i] = curve.steps[order[i]];
        sorted.losses[i] = curve.losses[order[i]];
      }
      out.curves.push_back(std::move(sorted));
    }
  }
  out.runs = static_cast<int>(runs_seen.size());
  return out;
}

}  // namespace gpuscope::report::detail
