#include "models/vit.h"

#include <torch/torch.h>

#include "models/patch_gemm.h"

namespace gpuscope::workloads {
namespace {

// timm's Block: exact GELU, no mask, its parameter names.
TransformerBlockSpec block_spec(const VitConfig& c) {
  TransformerBlockSpec s;
  s.width = c.width;
  s.heads = c.heads;
  s.mlp_hidden = c.mlp_hidden;
  s.norm_eps = c.norm_eps;
  s.gelu = Gelu::exact;
  s.causal = false;
  s.names = {"norm1", "attn_qkv", "attn_proj", "norm2", "mlp_fc1", "mlp_fc2"};
  return s;
}

}  // namespace

VisionTransformer::VisionTransformer(const VitConfig& c,
                                     std::shared_ptr<const LayerOptions> options)
    : config_(c), options_(options) {
  const int64_t patches = (c.image_size / c.patch) * (c.image_size / c.patch);
  patch_embed_ = register_module(
      "patch_embed",
      torch::nn::Conv2d(torch::nn::Conv2dOptions(3, c.width, c.patch).stride(c.patch)));
  cls_token_ = register_parameter("cls_token", torch::empty({1, 1, c.width}));
  pos_embed_ = register_parameter("pos_embed", torch::empty({1, patches + 1, c.width}));
  torch::nn::init::normal_(cls_token_, 0.0, 1e-6);
  torch::nn::init::normal_(pos_embed_, 0.0, 0.02);
  blocks_ = register_module("blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.depth; ++i)
    blocks_->push_back(TransformerBlock(block_spec(c), options));
  norm_ = register_module("norm", LayerNorm(c.width, c.norm_eps, options));
  head_ = register_module("head", Dense(c.width, c.classes, true, options, false));
}

at::Tensor VisionTransformer::embed_patches(const at::Tensor& images) {
  if (!options_->patch_gemm) {
    // [B, 3, 224, 224] -> [B, 768, 14, 14] -> [B, 196, 768]
    return patch_embed_->forward(images).flatten(2).transpose(1, 2);
  }
  return patch_gemm(images, patch_embed_->weight, patch_embed_->bias, config_.patch);
}

at::Tensor VisionTransformer::forward(const at::Tensor& images) {
  at::Tensor x = embed_patches(images);
  // Under autocast, cat promotes to fp32 as in timm: the residual stream stays fp32.
  x = at::cat({cls_token_.expand({x.size(0), -1, -1}), x}, 1) + pos_embed_;
  for (const auto& block : *blocks_) x = block->as<TransformerBlock>()->forward(x);
  // LayerNorm is per token: normalizing the class token alone gives timm's norm-then-pool
  // result without normalizing the 196 patch tokens nobody reads.
  return head_->forward(norm_->forward(x.select(1, 0)));
}

}  // namespace gpuscope::workloads
