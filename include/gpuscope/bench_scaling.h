// `gpuscope bench --gpus LIST`: the data-parallel scaling of each configuration — the same row
// (model, task, mode, variant) run on 1, 2, ... N GPUs (gpuscope-torch --world-size N, one rank
// per GPU, gradients all-reduced during the backward) and compared with its 1-GPU row.
//
// With --no-sync-ceiling each data-parallel row has a twin whose ranks average no gradient
// (gpuscope-torch --grad-sync off): every GPU trains alone, all at once. A synchronous step goes
// at its slowest GPU's pace, so N x the slowest rank's rate is the most the synchronized row
// could reach. It splits the efficiency into two factors:
//   efficiency = samples/s / (N x 1 GPU) = gpus_together x communication
//   gpus_together = ceiling / (N x 1 GPU)   what the GPUs lose by running at once: clocks and
//                                           power when all are busy, a slower card
//   communication = samples/s / ceiling     what the all-reduces cost beside the compute
#pragma once

#include <iosfwd>
#include <optional>
#include <string>
#include <vector>

#include "gpuscope/bench.h"

namespace gpuscope::bench {

struct ScalingRow {
  std::string configuration;  // the row's label without the GPU count
  int gpus = 1;
  bool skipped = false;
  std::string skip_reason;
  std::optional<double> samples_per_second;  // the whole job's (every rank's, summed)
  // samples/s / (gpus x the 1-GPU row's samples/s); absent without a measured 1-GPU row.
  std::optional<double> efficiency;
  // Per step: the all-reduces' device time, the part the backward did not hide, and the share
  // hidden (1 - exposed / collective). Absent on 1 GPU.
  std::optional<double> collective_seconds, exposed_seconds, overlap_fraction;
  std::optional<double> memory_per_gpu_bytes;      // the largest rank's peak reserved
  std::optional<std::string> all_reduce;           // what averaged the gradients (Row's)
  std::optional<std::string> all_reduce_fallback;  // why not the copy engines, under auto
  std::optional<bool> optimizer_sharded;           // AdamW's state 1/N a rank (Row's)
  // From the twin without gradient sync (--no-sync-ceiling); absent without it or when it was
  // skipped (no_sync_skip_reason says why).
  std::optional<double> ceiling_samples_per_second;      // gpus x its slowest rank's samples/s
  std::optional<double> slowest_gpu_samples_per_second;  // that rank's own
  std::optional<double> gpus_together;  // ceiling / (gpus x the 1-GPU row's samples/s)
  std::optional<double> communication;  // samples/s / ceiling
  std::string no_sync_skip_reason;
};

// One entry per row of each configuration that has a row on more than one GPU (configurations
// run on one GPU only are left out), grouped by configuration in the order of first
// appearance, GPU counts ascending.
std::vector<ScalingRow> scaling_table(const std::vector<Row>& rows);

// The table for people; nothing when `table` is empty.
void print_scaling_table(const std::vector<ScalingRow>& table, std::ostream& out);

// The table in the bench JSON document ("scaling"): one object per entry, absent figures null.
nlohmann::json scaling_to_json(const std::vector<ScalingRow>& table);

// "1,2,4" -> {1, 2, 4}: positive, distinct, ascending after sorting. invalid_argument otherwise.
Result<std::vector<int>> parse_gpu_counts(const std::string& text);

}  // namespace gpuscope::bench
