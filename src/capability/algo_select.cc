#include "capability/algo_select.h"

#include <fmt/format.h>

#include <algorithm>

namespace gpuscope::capability::detail {

namespace {

struct Timed {
  cublasLtMatmulHeuristicResult_t candidate{};
  double median_seconds = 0;
};

// Median time of one GEMM with this candidate, or not_supported when cuBLASLt refuses it.
Result<double> time_candidate(const AlgoSelection& s, const cublasLtMatmulHeuristicResult_t& c,
                              std::vector<Event>& starts, std::vector<Event>& stops) {
  // Warm-up: the first launch of a kernel loads its module.
  Status status = s.matmul->run(c.algo, s.sets[0].a, s.sets[0].b, s.out, s.workspace,
                                s.workspace_bytes, s.stream);
  if (!status.ok()) return status;
  for (int r = 0; r < s.timed_runs; ++r) {
    const Operands& set = s.sets[static_cast<std::size_t>(r) % s.sets.size()];
    const auto i = static_cast<std::size_t>(r);
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaEventRecord(starts[i].get(), s.stream)));
    GPUSCOPE_RETURN_IF_ERROR(
        s.matmul->run(c.algo, set.a, set.b, s.out, s.workspace, s.workspace_bytes, s.stream));
    GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaEventRecord(stops[i].get(), s.stream)));
  }
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaStreamSynchronize(s.stream)));
  std::vector<double> seconds;
  for (int r = 0; r < s.timed_runs; ++r) {
    const auto i = static_cast<std::size_t>(r);
    GPUSCOPE_ASSIGN_OR_RETURN(double t, elapsed_seconds(starts[i], stops[i]));
    seconds.push_back(t);
  }
  return summarize(seconds).median;
}

// True when two runs on the same inputs agree bit for bit (and hold no NaN/Inf).
Result<bool> repeats_itself(const AlgoSelection& s, const cublasLtMatmulAlgo_t& algo) {
  const Operands& set = s.sets[0];
  GPUSCOPE_RETURN_IF_ERROR(
      s.matmul->run(algo, set.a, set.b, s.out, s.workspace, s.workspace_bytes, s.stream));
  GPUSCOPE_RETURN_IF_ERROR(
      s.matmul->run(algo, set.a, set.b, s.out_again, s.workspace, s.workspace_bytes, s.stream));
  GPUSCOPE_RETURN_IF_ERROR(launch_compare(s.matmul->spec().output, s.out_again, s.out,
                                          s.result_count, s.counters, s.sm_count, s.stream));
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaMemcpyAsync(
      s.host_counters, s.counters, sizeof(CheckCounters), cudaMemcpyDeviceToHost, s.stream)));
  GPUSCOPE_RETURN_IF_ERROR(
      GPUSCOPE_API_CHECK(cudaMemsetAsync(s.counters, 0, sizeof(CheckCounters), s.stream)));
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaStreamSynchronize(s.stream)));
  const CheckCounters& c = *s.host_counters;
  return c.mismatches == 0 && c.nan_count == 0 && c.inf_count == 0;
}

}  // namespace

Result<ChosenAlgorithm> select_algorithm(const AlgoSelection& s) {
  GPUSCOPE_ASSIGN_OR_RETURN(auto candidates, s.matmul->heuristics(s.workspace_bytes, s.candidates));
  std::vector<Event> starts;
  std::vector<Event> stops;
  for (int r = 0; r < s.timed_runs; ++r) {
    GPUSCOPE_ASSIGN_OR_RETURN(Event start, make_event());
    GPUSCOPE_ASSIGN_OR_RETURN(Event stop, make_event());
    starts.push_back(std::move(start));
    stops.push_back(std::move(stop));
  }

  std::vector<Timed> timed;
  Status last_refusal;
  for (const auto& candidate : candidates) {
    Result<double> median = time_candidate(s, candidate, starts, stops);
    if (!median.ok()) {
      // A candidate cuBLASLt proposes but then refuses is skipped; anything else is fatal.
      if (median.code() != Code::not_supported && median.code() != Code::invalid_argument) {
        return median.status();
      }
      last_refusal = median.status();
      continue;
    }
    timed.push_back({candidate, *median});
  }
  if (timed.empty()) {
    return Status(Code::not_supported, fmt::format("none of cuBLASLt's {} candidates ran: {}",
                                                   candidates.size(), last_refusal.to_string()));
  }
  std::stable_sort(timed.begin(), timed.end(), [](const Timed& x, const Timed& y) {
    return x.median_seconds < y.median_seconds;
  });

  int unrepeatable = 0;
  for (const Timed& t : timed) {
    GPUSCOPE_ASSIGN_OR_RETURN(bool repeatable, repeats_itself(s, t.candidate.algo));
    if (!repeatable) {
      ++unrepeatable;
      continue;
    }
    ChosenAlgorithm chosen;
    chosen.algo = t.candidate.algo;
    chosen.info = describe_algorithm(t.candidate.algo);
    chosen.info.workspace_bytes = t.candidate.workspaceSize;
    chosen.info.workspace_limit_bytes = s.workspace_bytes;
    chosen.info.candidates_timed = static_cast<int>(timed.size());
    chosen.info.unrepeatable = unrepeatable;
    chosen.info.median_seconds = t.median_seconds;
    chosen.info.compute_type = std::string(s.matmul->spec().compute_type);
    chosen.info.layout = s.matmul->spec().transpose_a ? "TN" : "NN";
    return chosen;
  }
  return Status(Code::internal,
                "no cuBLASLt algorithm gave bit-identical results on identical inputs");
}

}  // namespace gpuscope::capability::detail
