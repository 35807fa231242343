#include "models/vit.h"

#include <torch/torch.h>

namespace gpuscope::workloads {
namespace {

torch::nn::LayerNorm layer_norm(int64_t width, double eps) {
  return torch::nn::LayerNorm(torch::nn::LayerNormOptions({width}).eps(eps));
}

}  // namespace

VitBlockImpl::VitBlockImpl(const VitConfig& c, const std::shared_ptr<const LayerOptions>& options)
    : heads_(c.heads) {
  norm1_ = register_module("norm1", layer_norm(c.width, c.norm_eps));
  qkv_ = register_module("attn_qkv", Dense(c.width, 3 * c.width, true, options, true));
  proj_ = register_module("attn_proj", Dense(c.width, c.width, true, options, true));
  norm2_ = register_module("norm2", layer_norm(c.width, c.norm_eps));
  fc1_ = register_module("mlp_fc1", Dense(c.width, c.mlp_hidden, true, options, true));
  fc2_ = register_module("mlp_fc2", Dense(c.mlp_hidden, c.width, true, options, true));
}

at::Tensor VitBlockImpl::forward(const at::Tensor& input) {
  const at::Tensor attention =
      self_attention(qkv_->forward(norm1_->forward(input)), heads_, /*causal=*/false);
  const at::Tensor x = proj_->forward_residual(attention, input);
  return fc2_->forward_residual(fc1_->forward_gelu(norm2_->forward(x), Gelu::exact), x);
}

VisionTransformer::VisionTransformer(const VitConfig& c,
                                     std::shared_ptr<const LayerOptions> options)
    : config_(c) {
  const int64_t patches = (c.image_size / c.patch) * (c.image_size / c.patch);
  patch_embed_ = register_module(
      "patch_embed",
      torch::nn::Conv2d(torch::nn::Conv2dOptions(3, c.width, c.patch).stride(c.patch)));
  cls_token_ = register_parameter("cls_token", torch::empty({1, 1, c.width}));
  pos_embed_ = register_parameter("pos_embed", torch::empty({1, patches + 1, c.width}));
  torch::nn::init::normal_(cls_token_, 0.0, 1e-6);
  torch::nn::init::normal_(pos_embed_, 0.0, 0.02);
  blocks_ = register_module("blocks", torch::nn::ModuleList());
  for (int64_t i = 0; i < c.depth; ++i) blocks_->push_back(VitBlock(c, options));
  norm_ = register_module("norm", layer_norm(c.width, c.norm_eps));
  head_ = register_module("head", Dense(c.width, c.classes, true, options, false));
}

at::Tensor VisionTransformer::forward(const at::Tensor& images) {
  // [B, 3, 224, 224] -> [B, 768, 14, 14] -> [B, 196, 768]
  at::Tensor x = patch_embed_->forward(images).flatten(2).transpose(1, 2);
  // Under autocast, cat promotes to fp32 as in timm: the residual stream stays fp32.
  x = at::cat({cls_token_.expand({x.size(0), -1, -1}), x}, 1) + pos_embed_;
  for (const auto& block : *blocks_) x = block->as<VitBlock>()->forward(x);
  // LayerNorm is per token: normalizing the class token alone gives timm's norm-then-pool
  // result without normalizing the 196 patch tokens nobody reads.
  return head_->forward(norm_->forward(x.select(1, 0)));
}

}  // namespace gpuscope::workloads
