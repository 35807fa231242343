// How many input sets and result slots a GEMM burn allocates, within a memory budget.
#pragma once

#include <cstdint>

#include "capability/gemm_spec.h"
#include "gpuscope/status.h"

namespace gpuscope::capability::detail {

struct GemmMemoryPlan {
  int input_sets = 0;               // (A, B, first result) triples rotated through
  int work_slots = 0;               // results computed per timed group, then verified together
  std::uint64_t operand_bytes = 0;  // one n x n input matrix
  std::uint64_t result_bytes = 0;   // one n x n result
  std::uint64_t total_bytes = 0;    // everything, fixed_bytes included
};

// Wants enough input sets that the inputs rotated through exceed 3 x L2 (2..64 sets), and
// enough slots per group for about 1e12 FLOP (1..16), so that a group lasts over a millisecond
// and its CUDA-event timing is precise. Gives up slots first, then sets, to fit `budget_bytes`.
// fixed_bytes: the cuBLASLt workspace and small buffers.
// Fails with out_of_memory when not even one set and one slot fit.
Result<GemmMemoryPlan> plan_gemm_memory(const GemmSpec& spec, int n, std::uint64_t l2_bytes,
                                        std::uint64_t budget_bytes, std::uint64_t fixed_bytes);

}  // namespace gpuscope::capability::detail
