#include "fused_adamw.h"

#include <algorithm>

namespace gpuscope::workloads {

namespace {

// Each state tensor starts at a multiple of this many elements of its buffer, so that the fused
// kernel's vectorized loads stay aligned.
constexpr int64_t kStateAlignment = 64;

int64_t aligned(int64_t n) {
  return (n + kStateAlignment - 1) / kStateAlignment * kStateAlignment;
}

// One zeroed buffer holding a state tensor for each of `params`, laid out as each parameter is
// (contiguous or channels-last). One allocation instead of one per parameter: 2 x 152 small
// allocations for ViT-B/16 left the caching allocator with partly used blocks that its
// allocated-bytes count includes (pure bf16 training peaked 9.6 MB higher with them, H100).
std::vector<at::Tensor> state_views(const std::vector<at::Tensor>& params) {
  int64_t total = 0;
  for (const auto& p : params) total += aligned(p.numel());
  const at::Tensor buffer = at::zeros({total}, params.front().options());
  std::vector<at::Tensor> views;
  int64_t offset = 0;
  for (const auto& p : params) {
    views.push_back(p.is_non_overlapping_and_dense()
                        ? buffer.as_strided(p.sizes(), p.strides(), offset)
                        : at::zeros_like(p, at::MemoryFormat::Preserve));
    offset += aligned(p.numel());
  }
  return views;
}

// One fused AdamW update of `params` from `grads`, every tensor at the step count `step`.
void fused_update(const std::vector<at::Tensor>& params, const std::vector<at::Tensor>& grads,
                  const std::vector<at::Tensor>& exp_avgs,
                  const std::vector<at::Tensor>& exp_avg_sqs, const at::Tensor& step,
                  const AdamWOptions& options, const std::optional<at::Tensor>& found_inf) {
  const std::vector<at::Tensor> steps(params.size(), step);
  at::_fused_adamw_(params, grads, exp_avgs, exp_avg_sqs, /*max_exp_avg_sqs=*/{}, steps, options.lr,
                    options.beta1, options.beta2, options.weight_decay, options.eps,
                    /*amsgrad=*/false, /*maximize=*/false, /*grad_scale=*/std::nullopt, found_inf);
}

}  // namespace

// Adds `p` (and its state, when given) to the group of its dtype, made when there is none.
// Returns that group's index.
size_t FusedAdamW::add_to(std::vector<Group>& groups, const at::Tensor& p,
                          const at::Tensor& exp_avg, const at::Tensor& exp_avg_sq) {
  auto it = std::find_if(groups.begin(), groups.end(), [&](const Group& g) {
    return g.params.front().scalar_type() == p.scalar_type();
  });
  if (it == groups.end()) it = groups.emplace(groups.end());
  it->params.push_back(p);
  if (exp_avg.defined()) {
    it->exp_avgs.push_back(exp_avg);
    it->exp_avg_sqs.push_back(exp_avg_sq);
  }
  return static_cast<size_t>(it - groups.begin());
}

FusedAdamW::FusedAdamW(const std::vector<at::Tensor>& params, const AdamWOptions& options)
    : options_(options), params_(params) {
  TORCH_CHECK(!params.empty(), "FusedAdamW needs at least one parameter");
  std::vector<size_t> group_of;
  for (const auto& p : params) group_of.push_back(add_to(groups_, p, {}, {}));
  for (Group& group : groups_) {
    group.exp_avgs = state_views(group.params);
    group.exp_avg_sqs = state_views(group.params);
  }
  // Each parameter's state, for split().
  std::vector<size_t> taken(groups_.size(), 0);
  for (const size_t g : group_of) {
    const size_t i = taken[g]++;
    state_.emplace_back(groups_[g].exp_avgs[i], groups_[g].exp_avg_sqs[i]);
  }
  step_ = at::zeros({}, params.front().options().dtype(at::kFloat));
}

void FusedAdamW::split(const std::vector<std::vector<size_t>>& parts) {
  std::vector<int> seen(params_.size(), 0);
  std::vector<std::vector<Group>> split_parts;
  for (const auto& part : parts) {
    std::vector<Group> groups;
    for (const size_t index : part) {
      TORCH_CHECK(index < params_.size(), "FusedAdamW::split: parameter ", index, " of ",
                  params_.size());
      TORCH_CHECK(seen[index]++ == 0, "FusedAdamW::split: parameter ", index, " in two parts");
      add_to(groups, params_[index], state_[index].first, state_[index].second);
    }
    split_parts.push_back(std::move(groups));
  }
  TORCH_CHECK(std::find(seen.begin(), seen.end(), 0) == seen.end(),
              "FusedAdamW::split: a parameter in no part");
  parts_ = std::move(split_parts);
}

void FusedAdamW::begin_step() {
  TORCH_CHECK(!parts_.empty(), "FusedAdamW::begin_step before split()");
  step_.add_(1);
}

void FusedAdamW::step_part(size_t k) {
  step_groups(parts_.at(k), std::nullopt);
}

void FusedAdamW::step(const std::optional<at::Tensor>& found_inf) {
  step_.add_(1);
  step_groups(groups_, found_inf);
  if (found_inf) step_.sub_(*found_inf);
}

void FusedAdamW::step_groups(const std::vector<Group>& groups,
                             const std::optional<at::Tensor>& found_inf) {
  for (const Group& group : groups) {
    std::vector<at::Tensor> grads;
    grads.reserve(group.params.size());
    for (const auto& p : group.params) grads.push_back(p.grad());
    fused_update(group.params, grads, group.exp_avgs, group.exp_avg_sqs, step_, options_,
                 found_inf);
  }
}

void FusedAdamW::zero_grad() {
  for (auto& p : params_) p.mutable_grad().reset();
}

std::vector<at::Tensor> FusedAdamW::grads() const {
  std::vector<at::Tensor> out;
  out.reserve(params_.size());
  for (const auto& p : params_) out.push_back(p.grad());
  return out;
}

ShardedAdamW::ShardedAdamW(const std::vector<Shard>& shards, const at::Device& device,
                           const AdamWOptions& options)
    : options_(options) {
  for (const Shard& shard : shards) {
    const auto state = at::TensorOptions().device(device).dtype(shard.dtype);
    exp_avgs_.push_back(at::zeros({shard.elements}, state));
    exp_avg_sqs_.push_back(at::zeros({shard.elements}, state));
  }
  step_ = at::zeros({}, at::TensorOptions().device(device).dtype(at::kFloat));
}

void ShardedAdamW::begin_step() {
  step_.add_(1);
}

void ShardedAdamW::step_shard(size_t k, const at::Tensor& params, const at::Tensor& grads) {
  TORCH_CHECK(params.numel() == exp_avgs_.at(k).numel() && grads.numel() == params.numel() &&
                  params.scalar_type() == exp_avgs_[k].scalar_type(),
              "ShardedAdamW: shard ", k, " has ", exp_avgs_[k].numel(), " elements of ",
              exp_avgs_[k].scalar_type(), ", given ", params.numel(), " of ", params.scalar_type());
  if (params.numel() == 0) return;
  fused_update({params}, {grads}, {exp_avgs_[k]}, {exp_avg_sqs_[k]}, step_, options_, std::nullopt);
}

int64_t ShardedAdamW::state_bytes() const {
  int64_t bytes = 0;
  for (size_t k = 0; k < exp_avgs_.size(); ++k) {
    bytes += 2 * exp_avgs_[k].numel() * static_cast<int64_t>(exp_avgs_[k].element_size());
  }
  return bytes;
}

}  // namespace gpuscope::workloads
