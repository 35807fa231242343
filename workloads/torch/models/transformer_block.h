// The pre-norm transformer block ViT-B/16 and GPT-2 share:
//   x = x + proj(attention(qkv(norm1(x))));  x = x + fc2(gelu(fc1(norm2(x))))
// They differ in LayerNorm eps, the GELU form, causality, and the names of their parameters,
// which each keeps as its Python twin has them (timm's "norm1", "attn_qkv", ...; HF's "ln_1",
// "attn_c_attn", ...).
#pragma once

#include <memory>

#include "models/layer_norm.h"
#include "models/layers.h"

namespace gpuscope::workloads {

struct TransformerBlockSpec {
  int64_t width = 768;
  int64_t heads = 12;
  int64_t mlp_hidden = 3072;
  double norm_eps = 1e-6;
  Gelu gelu = Gelu::exact;
  bool causal = false;
  struct Names {
    const char* norm1;
    const char* qkv;
    const char* proj;
    const char* norm2;
    const char* fc1;
    const char* fc2;
  } names{};
};

class TransformerBlockImpl : public torch::nn::Module {
 public:
  TransformerBlockImpl(const TransformerBlockSpec& spec,
                       const std::shared_ptr<const LayerOptions>& options);
  at::Tensor forward(const at::Tensor& x);

  // The two projections into the residual stream (GPT-2 initializes them scaled down).
  Dense& proj() { return proj_; }
  Dense& fc2() { return fc2_; }

 private:
  int64_t heads_;
  Gelu gelu_;
  bool causal_;
  LayerNorm norm1_{nullptr}, norm2_{nullptr};
  Dense qkv_{nullptr}, proj_{nullptr}, fc1_{nullptr}, fc2_{nullptr};
};
TORCH_MODULE(TransformerBlock);

}  // namespace gpuscope::workloads
