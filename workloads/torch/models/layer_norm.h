// LayerNorm over the last dimension with torch::nn::LayerNorm's parameters ("weight" = 1,
// "bias" = 0) and result. With LayerOptions::own_layer_norm, outside autograd and autocast, on
// contiguous CUDA fp16/bf16 rows of up to 1024 values, it runs gpuscope-torch's own kernel
// (layer_norm_kernel.h); everything else goes to at::layer_norm.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <memory>

#include "models/layers.h"

namespace gpuscope::workloads {

// True when own_layer_norm can take these tensors: x [..., W] contiguous, weight and bias [W],
// all CUDA, one 16-bit dtype, 16-byte aligned, W as layer_norm_width_fits.
bool own_layer_norm_fits(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias);

// REQUIRES: own_layer_norm_fits(...). A new tensor shaped as x; not differentiable.
at::Tensor own_layer_norm(const at::Tensor& x, const at::Tensor& weight, const at::Tensor& bias,
                          double eps);

class LayerNormImpl : public torch::nn::Module {
 public:
  LayerNormImpl(int64_t width, double eps, std::shared_ptr<const LayerOptions> options);
  at::Tensor forward(const at::Tensor& x);

  at::Tensor weight;
  at::Tensor bias;

 private:
  double eps_;
  std::shared_ptr<const LayerOptions> options_;
};
TORCH_MODULE(LayerNorm);

}  // namespace gpuscope::workloads
