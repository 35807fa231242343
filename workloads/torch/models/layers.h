// Building blocks shared by the reference models: a Linear layer that can run its GEMM in fp8 or
// fuse bias + GELU into cuBLASLt's epilogue, and multi-head self-attention through SDPA.
#pragma once

#include <torch/nn/module.h>
#include <torch/nn/pimpl.h>

#include <memory>
#include <optional>

#include "models/fp8_linear.h"

namespace gpuscope::workloads {

// Switches a model's layers read at every forward; the runner sets them before a run.
struct LayerOptions {
  bool fp8 = false;  // fp8-capable Linear layers run on _scaled_mm (see fp8_linear.h)
  // Inference only: fc1 + GELU as one cuBLASLt GEMM with a GELU epilogue (tanh form of GELU).
  bool gelu_epilogue = false;
  // Inference only: the projections into the residual stream add bias and residual in the
  // GEMM (see residual_linear.h).
  bool residual_epilogue = false;
  // Inference only: LayerNorm on gpuscope-torch's own fp16/bf16 kernel (see layer_norm.h).
  bool own_layer_norm = false;
  // ViT-B/16: the 16x16-stride-16 patch convolution as one GEMM over the image's patches (the
  // same weights and result; cuDNN ran it as an im2col convolution, see patch_gemm.h).
  bool patch_gemm = false;
};

enum class Gelu { exact, tanh };  // erf form (timm ViT), tanh approximation (GPT-2)

// y = x W^T + b, parameters "weight" [out, in] and "bias" [out], initialized N(0, 0.02) and 0.
class DenseImpl : public torch::nn::Module {
 public:
  // fp8_capable: whether LayerOptions::fp8 applies to this layer (the blocks' layers, not heads).
  DenseImpl(int64_t in_features, int64_t out_features, bool bias,
            std::shared_ptr<const LayerOptions> options, bool fp8_capable);

  at::Tensor forward(const at::Tensor& x);
  // gelu(x W^T + b) in the given form; with LayerOptions::gelu_epilogue, outside autograd, on a
  // CUDA tensor, one fused GEMM (which computes the tanh form).
  at::Tensor forward_gelu(const at::Tensor& x, Gelu form);
  // residual + x W^T + b; with LayerOptions::residual_epilogue, outside autograd, in one GEMM
  // where residual_linear_fits.
  at::Tensor forward_residual(const at::Tensor& x, const at::Tensor& residual);

  at::Tensor weight;
  at::Tensor bias;

 private:
  bool use_fp8(const at::Tensor& x) const;
  std::shared_ptr<const LayerOptions> options_;
  bool fp8_capable_;
  std::optional<Fp8Weight> fp8_weight_cache_;  // inference: quantized once
};
TORCH_MODULE(Dense);

// Multi-head self-attention core: qkv [B, N, 3C] (q, k, v concatenated, as timm and GPT-2 lay
// them out) -> [B, N, C], through at::scaled_dot_product_attention (the backend is chosen by the
// process-wide SDPA flags; see runner).
at::Tensor self_attention(const at::Tensor& qkv, int64_t heads, bool causal);

// The dtype autocast gives a GEMM on x's device, or x's dtype when autocast is off.
at::ScalarType gemm_dtype(const at::Tensor& x);

}  // namespace gpuscope::workloads
