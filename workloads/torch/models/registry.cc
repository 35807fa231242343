#include <array>

#include "models/gpt2.h"
#include "models/model.h"
#include "models/resnet.h"
#include "models/vit.h"

namespace gpuscope::workloads {
namespace {

constexpr std::array<ModelInfo, 3> kModels = {{
    {ModelKind::vit_b16, "vit_b16", "vit_base_patch16_224",
     "ViT-B/16 at 224x224, 1000 classes (timm vit_base_patch16_224)", 86'567'656, 160, 1024, true},
    {ModelKind::resnet50, "resnet50", "resnet50",
     "ResNet-50 v1.5, 1000 classes (torchvision resnet50)", 25'557'032, 256, 1024, false},
    {ModelKind::gpt2, "gpt2", "gpt2",
     "GPT-2 small decoder, 124M, context 1024, tied embeddings, no dropout", 124'439'808, 16, 32,
     true},
}};

}  // namespace

std::span<const ModelInfo> model_catalogue() {
  return kModels;
}

const ModelInfo& model_info(ModelKind kind) {
  for (const auto& info : kModels) {
    if (info.kind == kind) return info;
  }
  return kModels.front();
}

std::optional<ModelKind> parse_model(std::string_view name) {
  for (const auto& info : kModels) {
    if (info.name == name || info.python_name == name) return info.kind;
  }
  if (name == "vit") return ModelKind::vit_b16;
  return std::nullopt;
}

std::shared_ptr<ReferenceModel> make_model(ModelKind kind,
                                           std::shared_ptr<const LayerOptions> options) {
  switch (kind) {
    case ModelKind::vit_b16:
      return std::make_shared<VisionTransformer>(VitConfig{}, std::move(options));
    case ModelKind::resnet50:
      return std::make_shared<ResNet50>();
    case ModelKind::gpt2:
      return std::make_shared<Gpt2>(Gpt2Config{}, std::move(options));
  }
  return nullptr;
}

int64_t count_parameters(const torch::nn::Module& module) {
  int64_t total = 0;
  for (const auto& p : module.parameters()) total += p.numel();
  return total;
}

}  // namespace gpuscope::workloads
