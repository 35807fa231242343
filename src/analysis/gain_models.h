// The gain models behind every diagnose finding's expected_speedup: each turns numbers of this
// run into a range of new/old speed. docs/diagnose.md states them in words, with their caveats.
#pragma once

#include "gpuscope/analysis.h"

namespace gpuscope::analysis::detail {

// A step of `step_s` that loses between `saved_low_s` and `saved_high_s` of its time:
// step / (step - saved). Savings are clamped to [0, 95 % of the step].
GainRange time_saved(double step_s, double saved_low_s, double saved_high_s);

// Matrix work of `matmul_s` per step moved to a path `ratio` times faster (Amdahl):
// step / (step - matmul (1 - 1/ratio)). The low end takes `ratio_low`, the high end `ratio_high`.
GainRange faster_part(double step_s, double part_s, double ratio_low, double ratio_high);

// fp32 CUDA-core matrix time moved to tensor cores: the low end is TF32 at half its peak ratio
// over fp32 (set_float32_matmul_precision("high") alone; kernels rarely reach peak), the high
// end bf16 at its full ratio (AMP), with AMP's bf16 activations also halving the time of the
// memory-bound kernels (`memory_bound_s`: elementwise, reductions, copies). Ratios below 1
// count as 1.
GainRange tensor_core_gain(double step_s, double fp32_matmul_s, double memory_bound_s,
                           double fp32_rate, double tf32_rate, double bf16_rate);

// Clocks held below their maximum: compute runs at clock speed, so the busy share of the step
// gains max/mean (high), and at the low end only that share does: 1 + (max/mean - 1) x busy.
GainRange clock_gain(double mean_clock_hz, double max_clock_hz, double busy_share);

// A batch `headroom` times larger fits (memory); kernels that keep only `sm_activity` of the SMs
// busy could do up to 1/sm_activity the work in the same time: high = min(headroom,
// 1/sm_activity), low = 1 + (high - 1) / 4 (larger kernels rarely scale linearly).
GainRange batch_gain(double headroom, double sm_activity);

// The optimizer's chain of `kernels` elementwise kernels spanning `span_s` on the GPU replaced
// by a fused one (one pass over the parameters instead of one per operation, about
// kernel_s / 4 at the high end, kernel_s / 2 at the low).
GainRange fused_optimizer_gain(double step_s, double span_s, double kernel_s);

}  // namespace gpuscope::analysis::detail
