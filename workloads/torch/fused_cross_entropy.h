// Mean cross-entropy whose gradient is written over the logits (models/cross_entropy_kernel.h):
// the forward leaves softmax - one_hot in the logits' own buffer, the backward scales it in
// place. Saves the two logit-sized tensors ATen's log_softmax + nll_loss keep for the backward
// (3.3 GB for GPT-2 small at batch 16 in bf16, twice that under autocast, where log_softmax
// runs in fp32) and three of their passes over the logits. The logits are consumed: nothing
// else may read them after the loss.
#pragma once

#include <ATen/ATen.h>

namespace gpuscope::workloads {

// Whether fused_cross_entropy takes these: CUDA, 2-D contiguous fp32/fp16/bf16 logits, one
// contiguous int64 target per row on the same device.
bool fused_cross_entropy_fits(const at::Tensor& logits, const at::Tensor& target);

// mean over rows whose target is not ignore_index of logsumexp(logits[r]) - logits[r][target[r]],
// as at::cross_entropy_loss (fp32 result); differentiable with respect to the logits.
at::Tensor fused_cross_entropy(const at::Tensor& logits, const at::Tensor& target,
                               int64_t ignore_index = -100);

}  // namespace gpuscope::workloads
