// Steps of a program that marks none: the period of its kernel sequence.
//
// A training or inference loop launches the same kernels in the same order every step, so the
// sequence of kernel names is periodic with the step's kernel count P (and with 2P, 3P, ...).
// Candidates for P are the spacings of names that recur at a regular spacing (a kernel launched
// once a step); each is scored by the share of positions i with name[i] == name[i + P]; the
// smallest candidate scoring within kScoreSlack of the best wins (a multiple of P scores as well
// as P; a sub-period, such as one layer of many, scores worse). The step's first kernel is the
// position in the period that most often follows the longest GPU idle gap: steps start after the
// host waited for data, synchronized or stepped the optimizer.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>

namespace gpuscope::trace::detail {

struct StepPeriod {
  std::size_t period = 0;  // kernels per step
  std::size_t phase = 0;   // index of the first kernel of the first whole step (< period)
  double score = 0;        // share of positions i with name[i] == name[i + period], 0..1
  std::size_t steps = 0;   // whole steps in the sequence from `phase` on
};

inline constexpr double kMinPeriodScore = 0.9;
inline constexpr double kScoreSlack = 0.02;
inline constexpr std::size_t kMinSteps = 3;

// `names`: kernel name ids in launch order. `gap_before_ns`: the GPU idle time before each
// kernel (same length as `names`; empty: the phase is 0). nullopt when no period scores at least
// kMinPeriodScore or fewer than kMinSteps whole steps fit.
std::optional<StepPeriod> find_step_period(std::span<const std::uint32_t> names,
                                           std::span<const std::int64_t> gap_before_ns);

}  // namespace gpuscope::trace::detail
