#include "fused_adamw.h"

namespace gpuscope::workloads {

FusedAdamW::FusedAdamW(const std::vector<at::Tensor>& params, const AdamWOptions& options)
    : options_(options), params_(params) {
  TORCH_CHECK(!params.empty(), "FusedAdamW needs at least one parameter");
  std::vector<at::ScalarType> dtypes;
  for (const auto& p : params) {
    const auto it = std::find(dtypes.begin(), dtypes.end(), p.scalar_type());
    size_t index = static_cast<size_t>(it - dtypes.begin());
    if (it == dtypes.end()) {
      dtypes.push_back(p.scalar_type());
      groups_.emplace_back();
    }
    Group& group = groups_[index];
    group.params.push_back(p);
    group.exp_avgs.push_back(at::zeros_like(p, at::MemoryFormat::Preserve));
    group.exp_avg_sqs.push_back(at::zeros_like(p, at::MemoryFormat::Preserve));
  }
  step_ = at::zeros({}, params.front().options().dtype(at::kFloat));
}

void FusedAdamW::step(const std::optional<at::Tensor>& found_inf) {
  step_.add_(1);
  for (const Group& group : groups_) {
    std::vector<at::Tensor> grads;
    grads.reserve(group.params.size());
    for (const auto& p : group.params) grads.push_back(p.grad());
    const std::vector<at::Tensor> steps(group.params.size(), step_);
    at::_fused_adamw_(group.params, grads, group.exp_avgs, group.exp_avg_sqs,
                      /*max_exp_avg_sqs=*/{}, steps, options_.lr, options_.beta1, options_.beta2,
                      options_.weight_decay, options_.eps, /*amsgrad=*/false,
                      /*maximize=*/false, /*grad_scale=*/std::nullopt, found_inf);
  }
  if (found_inf) step_.sub_(*found_inf);
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

}  // namespace gpuscope::workloads
