// ViT-B/16 as timm's vit_base_patch16_224: 16x16 patches of a 224x224 image, a class token,
// learned position embeddings, 12 pre-norm blocks (LayerNorm eps 1e-6, 12-head attention with a
// biased qkv projection, MLP 768-3072-768 with exact GELU), final LayerNorm, class-token head.
// 86,567,656 parameters.
#pragma once

#include <torch/nn/modules/container/modulelist.h>
#include <torch/nn/modules/conv.h>

#include "models/model.h"
#include "models/transformer_block.h"

namespace gpuscope::workloads {

struct VitConfig {
  int64_t image_size = 224;
  int64_t patch = 16;
  int64_t width = 768;
  int64_t depth = 12;
  int64_t heads = 12;
  int64_t mlp_hidden = 3072;
  int64_t classes = 1000;
  double norm_eps = 1e-6;
};

class VisionTransformer : public ReferenceModel {
 public:
  VisionTransformer(const VitConfig& config, std::shared_ptr<const LayerOptions> options);
  at::Tensor forward(const at::Tensor& images) override;

 private:
  // [B, 3, 224, 224] -> [B, 196, 768]: patch_embed's convolution, or the same as one GEMM.
  at::Tensor embed_patches(const at::Tensor& images);

  VitConfig config_;
  std::shared_ptr<const LayerOptions> options_;
  torch::nn::Conv2d patch_embed_{nullptr};
  at::Tensor cls_token_, pos_embed_;
  torch::nn::ModuleList blocks_{nullptr};
  LayerNorm norm_{nullptr};
  Dense head_{nullptr};
};

}  // namespace gpuscope::workloads
