#include "fused_cross_entropy.h"

#include <c10/cuda/CUDAStream.h>
#include <torch/torch.h>

#include "models/cross_entropy_kernel.h"

namespace gpuscope::workloads {
namespace {

using torch::autograd::AutogradContext;
using torch::autograd::tensor_list;

LogitKind logit_kind(at::ScalarType type) {
  switch (type) {
    case at::kHalf:
      return LogitKind::fp16;
    case at::kBFloat16:
      return LogitKind::bf16;
    default:
      return LogitKind::fp32;
  }
}

class FusedCrossEntropy : public torch::autograd::Function<FusedCrossEntropy> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& logits,
                            const at::Tensor& target, int64_t ignore_index) {
    // The logits' storage becomes their gradient. Nothing saved them for a backward of its own
    // (a Linear's backward reads its input, not its output), so overwriting them is safe.
    at::Tensor grad = logits.detach();
    at::Tensor row_loss = at::empty({logits.size(0)}, logits.options().dtype(at::kFloat));
    const cudaError_t status = launch_cross_entropy(
        logit_kind(logits.scalar_type()), grad.data_ptr(), target.const_data_ptr<int64_t>(),
        row_loss.mutable_data_ptr<float>(), logits.size(0), logits.size(1), ignore_index,
        c10::cuda::getCurrentCUDAStream(logits.device().index()));
    TORCH_CHECK(status == cudaSuccess, "fused_cross_entropy: ", cudaGetErrorString(status));
    // On the device: the mean needs no synchronization.
    const at::Tensor counted = target.ne(ignore_index).sum().to(at::kFloat);
    ctx->saved_data["grad"] = grad;
    ctx->saved_data["counted"] = counted;
    return row_loss.sum() / counted;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    at::Tensor grad = ctx->saved_data["grad"].toTensor();
    const at::Tensor counted = ctx->saved_data["counted"].toTensor();
    grad.mul_(grad_outputs[0] / counted);
    return {grad, at::Tensor(), at::Tensor()};
  }
};

}  // namespace

bool fused_cross_entropy_fits(const at::Tensor& logits, const at::Tensor& target) {
  if (!logits.defined() || !target.defined() || !logits.is_cuda()) return false;
  const auto type = logits.scalar_type();
  if (type != at::kFloat && type != at::kHalf && type != at::kBFloat16) return false;
  return logits.dim() == 2 && logits.is_contiguous() && logits.numel() > 0 && target.dim() == 1 &&
         target.scalar_type() == at::kLong && target.is_contiguous() &&
         target.size(0) == logits.size(0) && target.device() == logits.device();
}

at::Tensor fused_cross_entropy(const at::Tensor& logits, const at::Tensor& target,
                               int64_t ignore_index) {
  TORCH_CHECK(fused_cross_entropy_fits(logits, target),
              "fused_cross_entropy: tensors it cannot take");
  return FusedCrossEntropy::apply(logits, target, ignore_index);
}

}  // namespace gpuscope::workloads
