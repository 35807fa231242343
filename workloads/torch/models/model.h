// The reference models of gpuscope-torch behind one interface, and their catalogue.
//
// Each model equals a well-known Python model in architecture and parameter count (tests pin the
// counts): ViT-B/16 = timm vit_base_patch16_224, ResNet-50 = torchvision resnet50, GPT-2 small =
// HF/nanoGPT GPT-2 (124M, tied embeddings, no dropout). Inputs and losses are synthetic
// classification / next-token tasks (see synthetic_data.h).
#pragma once

#include <torch/nn/module.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string_view>

#include "models/layers.h"

namespace gpuscope::workloads {

enum class ModelKind { vit_b16, resnet50, gpt2 };

struct ModelInfo {
  ModelKind kind;
  std::string_view name;         // as on the command line and in JSON
  std::string_view python_name;  // the Python model it equals
  std::string_view description;
  int64_t parameters;  // trainable parameters, as the Python model counts them
  int64_t default_train_batch;
  int64_t default_infer_batch;
  bool supports_fp8;  // has Linear layers fp8 can take
};

std::span<const ModelInfo> model_catalogue();
const ModelInfo& model_info(ModelKind kind);
// Accepts the names and python names above ("vit_b16", "vit_base_patch16_224", ...).
std::optional<ModelKind> parse_model(std::string_view name);

// Input geometry. Tests shrink these to run fast on a CPU; the architecture stays the same
// (ViT-B/16 needs 224: its position embedding has 197 entries).
struct ModelShape {
  int64_t image_size = 224;  // ResNet-50 (ViT is fixed at 224)
  int64_t seq_len = 1024;    // GPT-2 tokens per sample, at most 1024
};

class ReferenceModel : public torch::nn::Module {
 public:
  // Images [B, 3, H, W] -> class logits [B, 1000]; tokens [B, T] -> logits [B, T, 50257].
  virtual at::Tensor forward(const at::Tensor& input) = 0;
};

// A freshly initialized model on the CPU in fp32. `options` is read by the model's layers at
// every forward (fp8, GELU epilogue) and must outlive it.
std::shared_ptr<ReferenceModel> make_model(ModelKind kind,
                                           std::shared_ptr<const LayerOptions> options);

int64_t count_parameters(const torch::nn::Module& module);

}  // namespace gpuscope::workloads
