// GPT-2 small as HF's gpt2 / nanoGPT: token (50257) and position (1024) embeddings, 12 pre-norm
// blocks (LayerNorm eps 1e-5, 12-head causal attention, MLP 768-3072-768 with tanh GELU), final
// LayerNorm, language-model head tied to the token embedding. No dropout. 124,439,808 parameters.
#pragma once

#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/embedding.h>

#include "models/model.h"
#include "models/transformer_block.h"

namespace gpuscope::workloads {

struct Gpt2Config {
  int64_t vocab = 50257;
  int64_t context = 1024;
  int64_t width = 768;
  int64_t depth = 12;
  int64_t heads = 12;
  double norm_eps = 1e-5;
};

class Gpt2 : public ReferenceModel {
 public:
  Gpt2(const Gpt2Config& config, std::shared_ptr<const LayerOptions> options);
  // tokens [B, T] (int64, T <= context) -> logits [B, T, vocab].
  at::Tensor forward(const at::Tensor& tokens) override;

 private:
  Gpt2Config config_;
  torch::nn::Embedding wte_{nullptr}, wpe_{nullptr};
  torch::nn::ModuleList blocks_{nullptr};
  LayerNorm ln_f_{nullptr};
};

}  // namespace gpuscope::workloads
