#include "models/layers.h"

#include <ATen/autocast_mode.h>
#include <torch/torch.h>

#include "models/residual_linear.h"

namespace gpuscope::workloads {

DenseImpl::DenseImpl(int64_t in_features, int64_t out_features, bool with_bias,
                     std::shared_ptr<const LayerOptions> options, bool fp8_capable)
    : options_(std::move(options)),
      fp8_capable_(fp8_capable && fp8_linear_fits(in_features, out_features)) {
  weight = register_parameter("weight", torch::empty({out_features, in_features}));
  torch::nn::init::normal_(weight, 0.0, 0.02);
  if (with_bias) bias = register_parameter("bias", torch::zeros({out_features}));
}

at::ScalarType gemm_dtype(const at::Tensor& x) {
  const auto device_type = x.device().type();
  if (at::autocast::is_autocast_enabled(device_type)) {
    return at::autocast::get_autocast_dtype(device_type);
  }
  return x.scalar_type();
}

bool DenseImpl::use_fp8(const at::Tensor& x) const {
  return options_->fp8 && fp8_capable_ && x.size(-1) == weight.size(1);
}

at::Tensor DenseImpl::forward(const at::Tensor& x) {
  if (use_fp8(x)) {
    if (at::GradMode::is_enabled()) {
      fp8_weight_cache_.reset();
      return fp8_linear(x, weight, bias, gemm_dtype(x));
    }
    // Inference: the weights do not change, so they are quantized once.
    if (!fp8_weight_cache_) fp8_weight_cache_ = quantize_fp8_weight(weight);
    return fp8_linear_inference(x, *fp8_weight_cache_, bias, gemm_dtype(x));
  }
  return at::linear(x, weight, bias);
}

at::Tensor DenseImpl::forward_gelu(const at::Tensor& x, Gelu form) {
  if (options_->gelu_epilogue && !at::GradMode::is_enabled() && x.is_cuda() && !use_fp8(x) &&
      bias.defined()) {
    const auto dtype = gemm_dtype(x);
    const at::Tensor x2d = x.reshape({-1, x.size(-1)}).to(dtype);
    const at::Tensor y = at::_addmm_activation(bias.to(dtype), x2d, weight.to(dtype).t(), 1, 1,
                                               /*use_gelu=*/true);
    auto sizes = x.sizes().vec();
    sizes.back() = weight.size(0);
    return y.view(sizes);
  }
  return at::gelu(forward(x), form == Gelu::tanh ? "tanh" : "none");
}

at::Tensor DenseImpl::forward_residual(const at::Tensor& x, const at::Tensor& residual) {
  if (options_->residual_epilogue && !at::GradMode::is_enabled() && !use_fp8(x) && bias.defined()) {
    const at::Tensor x2d = x.reshape({-1, x.size(-1)});
    const at::Tensor r2d = residual.reshape({-1, residual.size(-1)});
    if (residual_linear_fits(x2d, weight, bias, r2d)) {
      return residual_linear(x2d, weight, bias, r2d).view(residual.sizes());
    }
  }
  return residual + forward(x);
}

at::Tensor self_attention(const at::Tensor& qkv, int64_t heads, bool causal) {
  const int64_t batch = qkv.size(0);
  const int64_t tokens = qkv.size(1);
  const int64_t width = qkv.size(2) / 3;
  // q, k, v as [B, H, N, D] strided views of qkv's thirds, no copies. Taken with split, whose
  // backward is one concatenation of the three gradients. timm's unbind of a [3, B, H, N, D]
  // permutation made the backward stack them in that order and copy again to undo the
  // permutation: 3.2 ms against 0.6 ms per GPT-2 bf16 training step on the H100.
  std::vector<at::Tensor> parts = qkv.split(width, -1);
  for (auto& part : parts) part = part.view({batch, tokens, heads, width / heads}).transpose(1, 2);
  const at::Tensor y = at::scaled_dot_product_attention(parts[0], parts[1], parts[2],
                                                        /*attn_mask=*/std::nullopt,
                                                        /*dropout_p=*/0.0, causal);
  return y.transpose(1, 2).reshape({batch, tokens, width});
}

}  // namespace gpuscope::workloads
