#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <tuple>

#include "report/report_burn_rows.h"

namespace gpuscope::report::detail {
namespace {

namespace names = store::names;

using GemmKey = std::tuple<std::size_t, int, int, std::string>;  // run, gpu, rank, precision

GemmRow& gemm_row(std::map<GemmKey, GemmRow>& rows, std::size_t run_index,
                  const store::RunData& run, int gpu, const std::string& precision) {
  GemmKey key{run_index, gpu, precision_rank(precision), precision};
  auto [it, added] = rows.try_emplace(key);
  if (added) {
    GemmRow& row = it->second;
    row.entry = {&run, ReportBuilder::find_gpu(run, gpu), gpu};
    row.precision = precision;
    if (row.entry.gpu && row.entry.gpu->peak) {
      const auto& rates = row.entry.gpu->peak->flops_per_s;
      if (auto r = rates.find(precision); r != rates.end()) row.peak = r->second;
    }
  }
  return it->second;
}

}  // namespace

BurnRows collect_burn_rows(const ReportBuilder& builder) {
  std::map<GemmKey, GemmRow> gemm;
  using BandwidthKey = std::tuple<std::size_t, int, std::string>;
  std::map<BandwidthKey, BandwidthRow> memory, host_link, overlap;
  std::set<std::size_t> runs_seen;

  const auto& runs = builder.runs();
  for (std::size_t r = 0; r < runs.size(); ++r) {
    const store::RunData& run = runs[r];
    if (!holds(run, DataKind::burn)) continue;
    for (const store::Measurement& m : run.measurements) {
      int gpu = m.gpu.value_or(0);
      std::string precision = tag_text(m, "precision");
      std::string skipped = tag_text(m, "skipped");
      if (m.name == names::kGemmFlopPerS && !precision.empty()) {
        GemmRow& row = gemm_row(gemm, r, run, gpu, precision);
        std::string stat = tag_text(m, "stat");
        if (!m.value) {
          row.skipped = skipped.empty() ? "not measured" : skipped;
        } else if (stat.empty() || stat == "median") {
          row.median = m.value;
          row.windows = tag_number(m, "windows");
          row.span_s = tag_number(m, "span_s");
        } else if (stat == "min") {
          row.min = m.value;
        } else if (stat == "max") {
          row.max = m.value;
        }
        runs_seen.insert(r);
        continue;
      }
      if (!precision.empty() && m.value) {
        auto set = [&](std::optional<double> GemmRow::*field) {
          gemm_row(gemm, r, run, gpu, precision).*field = m.value;
        };
        if (m.name == names::kGemmErrors) set(&GemmRow::errors);
        if (m.name == names::kTemperatureMax) set(&GemmRow::temperature_max_c);
        if (m.name == names::kTemperatureStart) set(&GemmRow::temperature_start_c);
        if (m.name == names::kPowerAvg) set(&GemmRow::power_avg_w);
        if (m.name == names::kEnergy) set(&GemmRow::energy_j);
        if (m.name == names::kFlopPerJoule) set(&GemmRow::flop_per_j);
        if (m.name == names::kThrottleSeconds) {
          GemmRow& row = gemm_row(gemm, r, run, gpu, precision);
          row.throttle_measured = true;
          if (*m.value > 0) row.throttle.emplace_back(tag_text(m, "reason"), *m.value);
        }
        continue;
      }
      auto bandwidth = [&](std::map<BandwidthKey, BandwidthRow>& rows, const std::string& what,
                           std::optional<double> size) {
        BandwidthKey key{r, gpu, what};
        auto it = rows.find(key);
        // Host-link rows come per transfer size: the largest shows the link's sustained rate.
        if (it != rows.end() && size && it->second.size_bytes && *size <= *it->second.size_bytes) {
          return;
        }
        BandwidthRow row;
        row.entry = {&run, ReportBuilder::find_gpu(run, gpu), gpu};
        row.what = what;
        row.bytes_per_s = m.value;
        row.size_bytes = size;
        row.skipped = m.value ? "" : (skipped.empty() ? "not measured" : skipped);
        rows[key] = row;
        runs_seen.insert(r);
      };
      if (m.name == names::kMemoryBytesPerS) {
        std::string kernel = tag_text(m, "kernel");
        bandwidth(memory, kernel.empty() ? "memory" : kernel, tag_number(m, "buffer_bytes"));
      } else if (m.name == names::kHostLinkBytesPerS) {
        std::string what = fmt::format("{} {}", tag_text(m, "direction"), tag_text(m, "memory"));
        bandwidth(host_link, m.value ? what : "host link", tag_number(m, "size_bytes"));
      } else if (m.name == names::kOverlapEfficiency) {
        std::string what = tag_text(m, "memory");
        bandwidth(overlap, what.empty() ? "overlap" : what, std::nullopt);
      }
    }
  }

  BurnRows out;
  for (auto& [key, row] : gemm) out.gemm.push_back(std::move(row));
  for (auto& [key, row] : memory) {
    if (row.entry.gpu && row.entry.gpu->peak) row.peak = row.entry.gpu->peak->memory_bytes_per_s;
    out.memory.push_back(std::move(row));
  }
  for (auto& [key, row] : host_link) out.host_link.push_back(std::move(row));
  for (auto& [key, row] : overlap) out.overlap.push_back(std::move(row));
  out.runs = static_cast<int>(runs_seen.size());
  return out;
}

}  // namespace gpuscope::report::detail
