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

void check(cudaError_t status) {
  TORCH_CHECK(status == cudaSuccess, "fused_cross_entropy: ", cudaGetErrorString(status));
}

cudaStream_t stream_of(const at::Tensor& t) {
  return c10::cuda::getCurrentCUDAStream(t.device().index());
}

class FusedCrossEntropy : public torch::autograd::Function<FusedCrossEntropy> {
 public:
  static at::Tensor forward(AutogradContext* ctx, const at::Tensor& logits,
                            const at::Tensor& target, int64_t ignore_index) {
    // The logits' storage becomes their gradient. Nothing saved them for a backward of its own
    // (a Linear's backward reads its input, not its output), so overwriting them is safe.
    at::Tensor grad = logits.detach();
    const auto floats = logits.options().dtype(at::kFloat);
    at::Tensor row_loss = at::empty({logits.size(0)}, floats);
    // On the device, so that nothing synchronizes (or breaks a CUDA graph's capture).
    const at::Tensor counted = target.ne(ignore_index).sum().to(at::kFloat);
    // The mean's 1/count goes into the gradient now, so that the backward usually has nothing
    // to do (its incoming gradient is 1). Not in fp16: (p - y) / 16384 tokens (GPT-2 at batch
    // 16) would fall below fp16's range for small probabilities before the loss scale lifts it.
    const bool fp16 = logits.scalar_type() == at::kHalf;
    const at::Tensor forward_factor = fp16 ? at::ones({}, floats) : counted.reciprocal();
    check(launch_cross_entropy(logit_kind(logits.scalar_type()), grad.data_ptr(),
                               target.const_data_ptr<int64_t>(), row_loss.mutable_data_ptr<float>(),
                               logits.size(0), logits.size(1), ignore_index,
                               forward_factor.const_data_ptr<float>(), stream_of(logits)));
    ctx->saved_data["grad"] = grad;
    ctx->saved_data["counted"] = counted;
    return row_loss.sum() / counted;
  }

  static tensor_list backward(AutogradContext* ctx, tensor_list grad_outputs) {
    at::Tensor grad = ctx->saved_data["grad"].toTensor();
    // Only the returned gradient holds the buffer from here: the Linear's backward consumes it
    // and it goes, instead of staying with this node until the whole backward ends.
    ctx->saved_data.erase("grad");
    const at::Tensor incoming = grad_outputs[0].to(at::kFloat);
    const bool fp16 = grad.scalar_type() == at::kHalf;
    const at::Tensor factor =
        (fp16 ? incoming / ctx->saved_data["counted"].toTensor() : incoming).contiguous();
    check(launch_scale_in_place(logit_kind(grad.scalar_type()), grad.data_ptr(), grad.numel(),
                                factor.const_data_ptr<float>(), stream_of(grad)));
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
