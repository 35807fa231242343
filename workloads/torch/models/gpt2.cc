#include "models/gpt2.h"

#include <torch/torch.h>

#include <cmath>

namespace gpuscope::workloads {
namespace {

// HF's GPT2Block: tanh GELU, causal, its parameter names; the projections into the residual
// stream initialized with GPT-2's scaled std.
TransformerBlock make_block(const Gpt2Config& c,
                            const std::shared_ptr<const LayerOptions>& options) {
  TransformerBlockSpec s;
  s.width = c.width;
  s.heads = c.heads;
  s.mlp_hidden = 4 * c.width;
  s.norm_eps = c.norm_eps;
  s.gelu = Gelu::tanh;
  s.causal = true;
  s.names = {"ln_1", "attn_c_attn", "attn_c_proj", "ln_2", "mlp_c_fc", "mlp_c_proj"};
  TransformerBlock block(s, options);
  const double residual_std = 0.02 / std::sqrt(2.0 * static_cast<double>(c.depth));
  torch::NoGradGuard no_grad;
  block->proj()->weight.normal_(0.0, residual_std);
  block->fc2()->weight.normal_(0.0, residual_std);
  return block;
}

}  // namespace

Gpt2::Gpt2(const Gpt2Config& c, std::shared_ptr<const LayerOptions> options) : config_(c) {
  wte_ = register_module("wte", torch::nn::Embedding(c.vocab, c.width));
  wpe_ = register_module("wpe", torch::nn::Embedding(c.context, c.width));
  {
    torch::NoGradGuard no_grad;
    wte_->weight.normal_(0.0, 0.02);
    wpe_->weight.normal_(0.0, 0.01);
  }
  blocks_ = register_module("h", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.depth; ++i) blocks_->push_back(make_block(c, options));
  ln_f_ = register_module("ln_f", LayerNorm(c.width, c.norm_eps, options));
}

at::Tensor Gpt2::forward(const at::Tensor& tokens) {
  const int64_t length = tokens.size(1);
  TORCH_CHECK(length <= config_.context, "GPT-2 takes at most ", config_.context, " tokens");
  const at::Tensor positions =
      at::arange(length, at::TensorOptions().dtype(at::kLong).device(tokens.device()));
  at::Tensor x = wte_->forward(tokens) + wpe_->forward(positions);
  for (const auto& block : *blocks_) x = block->as<TransformerBlock>()->forward(x);
  // The head shares the token embedding's weight (no parameters of its own).
  return at::linear(ln_f_->forward(x), wte_->weight);
}

}  // namespace gpuscope::workloads
