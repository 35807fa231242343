#include "models/patch_gemm.h"

#include <torch/autograd.h>

namespace gpuscope::workloads {
namespace {

// [B, C, H, W] -> [B, H/p, p, W/p, p] per channel -> [B * H/p * W/p, C * p * p].
at::Tensor to_patch_rows(const at::Tensor& images, int64_t p) {
  const int64_t b = images.size(0), c = images.size(1);
  const int64_t rows = images.size(2) / p, cols = images.size(3) / p;
  return images.reshape({b, c, rows, p, cols, p})
      .permute({0, 2, 4, 1, 3, 5})
      .reshape({b * rows * cols, c * p * p});
}

// The inverse of to_patch_rows (for the images' gradient).
at::Tensor from_patch_rows(const at::Tensor& rows2d, const at::IntArrayRef image_sizes, int64_t p) {
  const int64_t b = image_sizes[0], c = image_sizes[1];
  const int64_t rows = image_sizes[2] / p, cols = image_sizes[3] / p;
  return rows2d.reshape({b, rows, cols, c, p, p})
      .permute({0, 3, 1, 4, 2, 5})
      .reshape({b, c, rows * p, cols * p});
}

class PatchGemmFunction : public torch::autograd::Function<PatchGemmFunction> {
 public:
  static at::Tensor forward(torch::autograd::AutogradContext* ctx, const at::Tensor& images,
                            const at::Tensor& weight, const at::Tensor& bias, int64_t patch) {
    // Under autocast, linear runs in its dtype here as it would outside the Function.
    const at::Tensor y =
        at::linear(to_patch_rows(images, patch), weight.reshape({weight.size(0), -1}),
                   bias.numel() > 0 ? bias : at::Tensor());
    ctx->save_for_backward({images, weight});
    ctx->saved_data["patch"] = patch;
    ctx->saved_data["has_bias"] = bias.numel() > 0;
    return y;
  }

  static torch::autograd::variable_list backward(torch::autograd::AutogradContext* ctx,
                                                 torch::autograd::variable_list grad_outputs) {
    const auto saved = ctx->get_saved_variables();
    const at::Tensor& images = saved[0];
    const at::Tensor& weight = saved[1];
    const int64_t patch = ctx->saved_data["patch"].toInt();
    const at::Tensor& grad = grad_outputs[0];  // [rows, out], in the GEMM's dtype
    const auto dtype = grad.scalar_type();
    const at::Tensor w2d = weight.reshape({weight.size(0), -1}).to(dtype);
    at::Tensor grad_images, grad_weight, grad_bias;
    if (weight.requires_grad()) {
      grad_weight = at::mm(grad.t(), to_patch_rows(images, patch).to(dtype))
                        .view(weight.sizes())
                        .to(weight.scalar_type());
    }
    if (ctx->saved_data["has_bias"].toBool()) {
      grad_bias = grad.sum(0, /*keepdim=*/false, at::kFloat).to(weight.scalar_type());
    }
    if (images.requires_grad()) {
      grad_images =
          from_patch_rows(at::mm(grad, w2d), images.sizes(), patch).to(images.scalar_type());
    }
    return {grad_images, grad_weight, grad_bias, at::Tensor()};
  }
};

}  // namespace

at::Tensor patch_gemm(const at::Tensor& images, const at::Tensor& weight, const at::Tensor& bias,
                      int64_t patch) {
  const int64_t b = images.size(0);
  const int64_t patches = (images.size(2) / patch) * (images.size(3) / patch);
  at::Tensor y;
  if (at::GradMode::is_enabled() && (images.requires_grad() || weight.requires_grad() ||
                                     (bias.defined() && bias.requires_grad()))) {
    // autograd::Function cannot take an undefined tensor: no bias is an empty one.
    const at::Tensor b_or_empty = bias.defined() ? bias : at::empty({0}, weight.options());
    y = PatchGemmFunction::apply(images, weight, b_or_empty, patch);
  } else {
    y = at::linear(to_patch_rows(images, patch), weight.reshape({weight.size(0), -1}), bias);
  }
  return y.view({b, patches, weight.size(0)});
}

}  // namespace gpuscope::workloads
