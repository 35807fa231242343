// The diagnose rules: each reads one process's observations (observations.h) and, when what it
// looks for is there, returns a Finding with the evidence from this run, the fix as code a
// PyTorch user would write, the expected speed-up from its gain model (gain_models.h) and a
// confidence. Thresholds and models: docs/diagnose.md.
#pragma once

#include <optional>
#include <vector>

#include "analysis/observations.h"
#include "gpuscope/analysis.h"

namespace gpuscope::analysis::detail {

std::optional<Finding> input_bound(const Observations& o);
std::optional<Finding> pageable_copies(const Observations& o);
std::optional<Finding> sync_every_step(const Observations& o);
std::optional<Finding> allocator_churn(const Observations& o);
std::optional<Finding> launch_bound(const Observations& o);
std::optional<Finding> no_tensor_cores(const Observations& o);
std::optional<Finding> small_batch(const Observations& o);
std::optional<Finding> cudnn_defaults(const Observations& o);
std::optional<Finding> unfused_optimizer(const Observations& o);
std::optional<Finding> throttled(const Observations& o);
std::optional<Finding> shared_gpu(const Observations& o);
// Collectives (NCCL) with no computation beside them, the wait for a slower rank left out.
std::optional<Finding> exposed_communication(const Observations& o);
// One process keeps two or more GPUs busy (each at least 5 % of the step): nn.DataParallel, or
// a model split across GPUs by hand.
std::optional<Finding> one_process_many_gpus(const Observations& o);
// The GPU idle 30 % or more of the step (busy under 70 %) with no cause named: run by run_rules
// only when no other rule found anything.
std::optional<Finding> gpu_idle(const Observations& o);

// Every rule above on one process, ranked (analysis::rank).
std::vector<Finding> run_rules(const Observations& o);

// Over the ranks of one job (processes whose kernels include collectives): each one's wait for
// the slowest, comm_wait_s = its exposed communication beyond the least exposed rank's (the
// slowest rank arrives last at every collective and waits for nobody). A job of one process
// with collectives, or none, is left as it is.
void share_out_waits(std::vector<Observations>& ranks);

// Over the ranks: one rank slower than the others, which wait for it in their collectives every
// step (the most any rank waits at least 5 % of the step and 0.2 ms). Subject: the slowest.
std::optional<Finding> rank_imbalance(const std::vector<Observations>& ranks);

// Over the whole job: GPUs that were sampled but that none of its processes used.
std::optional<Finding> idle_gpus(const std::vector<GpuObservations>& gpus);

// The "healthy" finding (info) for a job with no major finding: the evidence (busy share,
// tensor activity) and what could still be tried.
Finding healthy(const Observations& o);

}  // namespace gpuscope::analysis::detail
