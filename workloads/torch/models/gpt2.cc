#include "models/gpt2.h"

#include <torch/torch.h>

#include <cmath>

namespace gpuscope::workloads {
namespace {

torch::nn::LayerNorm layer_norm(int64_t width, double eps) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({width}).eps(eps));
}

}  // namespace

Gpt2BlockImpl::Gpt2BlockImpl(const Gpt2Config& c,
                             const std::shared_ptr<const LayerOptions>& options)
    : heads_(c.heads) {
  ln_1_ = register_module("ln_1", layer_norm(c.width, c.norm_eps));
  c_attn_ = register_module("attn_c_attn", Dense(c.width, 3 * c.width, true, options, true));
  attn_proj_ = register_module("attn_c_proj", Dense(c.width, c.width, true, options, true));
  ln_2_ = register_module("ln_2", layer_norm(c.width, c.norm_eps));
  c_fc_ = register_module("mlp_c_fc", Dense(c.width, 4 * c.width, true, options, true));
  mlp_proj_ = register_module("mlp_c_proj", Dense(4 * c.width, c.width, true, options, true));
  // GPT-2's scaled initialization of the projections into the residual stream.
  const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(c.depth));
  torch::NoGradGuard no_grad;
  attn_proj_->weight.normal_(0.0, residual_std);
  mlp_proj_->weight.normal_(0.0, residual_std);
}

at::Tensor Gpt2BlockImpl::forward(const at::Tensor& input) {
  const at::Tensor attention =
      self_attention(c_attn_->forward(ln_1_->forward(input)), heads_, /*causal=*/true);
  const at::Tensor x = attn_proj_->forward_residual(attention, input);
  return mlp_proj_->forward_residual(c_fc_->forward_gelu(ln_2_->forward(x), Gelu::tanh), x);
}

Gpt2::Gpt2(const Gpt2Config& c, std::shared_ptr<const LayerOptions> options) : config_(c) {
  wte_ = register_module("wte", torch::nn::Embedding(c.vocab, c.width));
  wpe_ = register_module("wpe", torch::nn::Embedding(c.context, c.width));
  {
    torch::NoGradGuard no_grad;
    wte_->weight.normal_(0.0, 0.02);
    wpe_->weight.normal_(0.0, 0.01);
  }
  blocks_ = register_module("h", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.depth; ++i) blocks_->push_back(Gpt2Block(c, options));
  ln_f_ = register_module("ln_f", layer_norm(c.width, c.norm_eps));
}

at::Tensor Gpt2::forward(const at::Tensor& tokens) {
  const int64_t length = tokens.size(1);
  TORCH_CHECK(length <= config_.context, "GPT-2 takes at most ", config_.context, " tokens");
  const at::Tensor positions =
      at::arange(length, at::TensorOptions().dtype(at::kLong).device(tokens.device()));
  at::Tensor x = wte_->forward(tokens) + wpe_->forward(positions);
  for (const auto& block : *blocks_) x = block->as<Gpt2Block>()->forward(x);
  // The head shares the token embedding's weight (no parameters of its own).
  return at::linear(ln_f_->forward(x), wte_->weight);
}

}  // namespace gpuscope::workloads
