// The convergence guard's task (--task guard): a small, fixed, learnable dataset, the same for a
// given seed in every precision mode and on every device (made on the CPU from its own
// generator, then moved), so that loss curves of different modes can be laid side by side.
//
// Images: kGuardClasses classes, each a smooth random pattern (8x8 noise upsampled to the
// image size); a sample is its class's pattern plus N(0, 0.5) noise, the label its class. Tokens
// (GPT-2): sequences over the first 256 token ids where each token determines the next
// (t' = (5t + 3) mod 256, a full cycle), from a random start; the target is the next token.
#pragma once

#include <cstdint>
#include <vector>

#include "synthetic_data.h"

namespace gpuscope::workloads {

inline constexpr int64_t kGuardClasses = 10;
inline constexpr int64_t kGuardBatches = 4;  // the dataset: this many batches, used in turn

// kGuardBatches batches of `spec` (dtype and memory format as the spec says) on `device`.
std::vector<Batch> make_guard_batches(const BatchSpec& spec, uint64_t seed, at::Device device);

// The guard's default batch: small enough for a quick run of every mode.
int64_t guard_default_batch(ModelKind model);

}  // namespace gpuscope::workloads
