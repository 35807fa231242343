// Choosing the cuBLASLt algorithm for a burn: the heuristic's top candidates are each timed
// (CUDA events, median of several GEMMs over the rotating input sets) and the fastest one whose
// results repeat bit for bit is kept — burn's error check relies on that repeatability.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <vector>

#include "capability/lt_matmul.h"
#include "capability/result_check.h"
#include "gpuscope/capability.h"

namespace gpuscope::capability::detail {

struct Operands {
  const void* a = nullptr;
  const void* b = nullptr;
};

struct AlgoSelection {
  const LtMatmul* matmul = nullptr;
  std::vector<Operands> sets;  // REQUIRES: not empty
  void* out = nullptr;         // two distinct n x n result buffers
  void* out_again = nullptr;
  std::size_t result_count = 0;  // elements of one result
  void* workspace = nullptr;
  std::size_t workspace_bytes = 0;
  CheckCounters* counters = nullptr;       // device; zero on entry, zero on return
  CheckCounters* host_counters = nullptr;  // pinned staging for reading them
  int sm_count = 0;
  int candidates = 8;
  int timed_runs = 5;
  cudaStream_t stream = nullptr;
};

struct ChosenAlgorithm {
  cublasLtMatmulAlgo_t algo{};
  GemmAlgorithm info;  // configuration, workspace, candidates timed, median
};

// Fails with not_supported when no candidate runs, internal when none repeats itself.
Result<ChosenAlgorithm> select_algorithm(const AlgoSelection& selection);

}  // namespace gpuscope::capability::detail
