#include "models/transformer_block.h"

#include <torch/torch.h>

namespace gpuscope::workloads {

TransformerBlockImpl::TransformerBlockImpl(const TransformerBlockSpec& s,
                                           const std::shared_ptr<const LayerOptions>& options)
    : heads_(s.heads), gelu_(s.gelu), causal_(s.causal) {
  norm1_ = register_module(s.names.norm1, LayerNorm(s.width, s.norm_eps, options));
  qkv_ = register_module(s.names.qkv, Dense(s.width, 3 * s.width, true, options, true));
  proj_ = register_module(s.names.proj, Dense(s.width, s.width, true, options, true));
  norm2_ = register_module(s.names.norm2, LayerNorm(s.width, s.norm_eps, options));
  fc1_ = register_module(s.names.fc1, Dense(s.width, s.mlp_hidden, true, options, true));
  fc2_ = register_module(s.names.fc2, Dense(s.mlp_hidden, s.width, true, options, true));
}

at::Tensor TransformerBlockImpl::forward(const at::Tensor& input) {
  const at::Tensor attention =
      self_attention(qkv_->forward(norm1_->forward(input)), heads_, causal_);
  const at::Tensor x = proj_->forward_residual(attention, input);
  return fc2_->forward_residual(fc1_->forward_gelu(norm2_->forward(x), gelu_), x);
}

}  // namespace gpuscope::workloads
