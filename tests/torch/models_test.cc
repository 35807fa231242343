#include <gtest/gtest.h>
#include <torch/torch.h>

#include <cmath>
#include <limits>
#include <map>
#include <string>

#include "models/layers.h"
#include "models/model.h"

namespace gpuscope::workloads {
namespace {

std::shared_ptr<ReferenceModel> build(ModelKind kind) {
  return make_model(kind, std::make_shared<LayerOptions>());
}

// The Python models' own counts: sum(p.numel() for p in model.parameters()).
TEST(Models, ParameterCountsEqualThePythonModels) {
  EXPECT_EQ(count_parameters(*build(ModelKind::vit_b16)), 86'567'656);   // timm
  EXPECT_EQ(count_parameters(*build(ModelKind::resnet50)), 25'557'032);  // torchvision
  EXPECT_EQ(count_parameters(*build(ModelKind::gpt2)), 124'439'808);     // GPT-2 small, tied
  for (const auto& info : model_catalogue()) {
    EXPECT_EQ(count_parameters(*build(info.kind)), info.parameters) << info.name;
  }
}

TEST(Models, Gpt2HeadIsTiedToTheTokenEmbedding) {
  const auto model = build(ModelKind::gpt2);
  int64_t embeddings = 0;
  for (const auto& item : model->named_parameters()) {
    if (item.value().dim() == 2 && item.value().size(0) == 50257) ++embeddings;
  }
  EXPECT_EQ(embeddings, 1);
}

// The blocks keep their Python twins' parameter names (timm's, HF's with '.' as '_' inside a
// block), and GPT-2 initializes the projections into the residual stream scaled down.
TEST(Models, TransformerBlocksKeepTheirNamesAndInitialization) {
  const auto names = [](const torch::nn::Module& m) {
    std::map<std::string, at::Tensor> out;
    for (const auto& item : m.named_parameters()) out[item.key()] = item.value();
    return out;
  };
  const auto vit = names(*build(ModelKind::vit_b16));
  for (const char* n :
       {"blocks.0.norm1.weight", "blocks.0.attn_qkv.weight", "blocks.0.attn_proj.bias",
        "blocks.0.norm2.bias", "blocks.0.mlp_fc1.weight", "blocks.11.mlp_fc2.bias"}) {
    EXPECT_TRUE(vit.count(n)) << n;
  }
  const auto gpt2 = names(*build(ModelKind::gpt2));
  for (const char* n : {"h.0.ln_1.weight", "h.0.attn_c_attn.weight", "h.0.attn_c_proj.bias",
                        "h.0.ln_2.bias", "h.0.mlp_c_fc.weight", "h.11.mlp_c_proj.bias"}) {
    EXPECT_TRUE(gpt2.count(n)) << n;
  }
  const double scaled = 0.02 / std::sqrt(24.0);  // 0.02 / sqrt(2 x 12 blocks)
  EXPECT_NEAR(gpt2.at("h.3.attn_c_proj.weight").std().item<double>(), scaled, 2e-4);
  EXPECT_NEAR(gpt2.at("h.3.mlp_c_proj.weight").std().item<double>(), scaled, 2e-4);
  EXPECT_NEAR(gpt2.at("h.3.attn_c_attn.weight").std().item<double>(), 0.02, 5e-4);
  EXPECT_NEAR(vit.at("blocks.3.attn_proj.weight").std().item<double>(), 0.02, 5e-4);
}

TEST(Models, BatchNormStatisticsAreBuffersNotParameters) {
  const auto model = build(ModelKind::resnet50);
  int64_t running = 0;
  for (const auto& item : model->named_buffers()) {
    if (item.key().find("running_mean") != std::string::npos) ++running;
  }
  EXPECT_EQ(running, 53);  // one per BatchNorm2d, as in torchvision
}

TEST(Models, OutputShapes) {
  torch::NoGradGuard no_grad;
  EXPECT_EQ(build(ModelKind::vit_b16)->forward(torch::randn({2, 3, 224, 224})).sizes(),
            (std::vector<int64_t>{2, 1000}));
  EXPECT_EQ(build(ModelKind::resnet50)->forward(torch::randn({2, 3, 64, 64})).sizes(),
            (std::vector<int64_t>{2, 1000}));
  EXPECT_EQ(build(ModelKind::gpt2)->forward(torch::randint(50257, {2, 16})).sizes(),
            (std::vector<int64_t>{2, 16, 50257}));
}

TEST(Models, Gpt2IsCausal) {
  torch::NoGradGuard no_grad;
  const auto model = build(ModelKind::gpt2);
  model->eval();
  auto tokens = torch::randint(50257, {1, 12});
  const auto before = model->forward(tokens);
  tokens[0][11] = (tokens[0][11].item<int64_t>() + 1) % 50257;  // change the last token only
  const auto after = model->forward(tokens);
  EXPECT_TRUE(torch::allclose(before.narrow(1, 0, 11), after.narrow(1, 0, 11), 1e-4, 1e-5));
  EXPECT_FALSE(torch::allclose(before.narrow(1, 11, 1), after.narrow(1, 11, 1)));
}

// The attention core against attention written out: softmax(q k^T / sqrt(d)) v per head, with
// q, k, v the thirds of qkv; its gradient reaches qkv whole.
TEST(Models, SelfAttentionIsMultiHeadAttentionOverQkvThirds) {
  torch::manual_seed(3);
  const int64_t batch = 2, tokens = 5, heads = 4, head_dim = 8, width = heads * head_dim;
  for (const bool causal : {false, true}) {
    const auto qkv = torch::randn({batch, tokens, 3 * width}, torch::requires_grad());
    const auto y = self_attention(qkv, heads, causal);
    ASSERT_EQ(y.sizes(), (std::vector<int64_t>{batch, tokens, width}));

    const auto expected_input = qkv.detach().clone().requires_grad_(true);
    const auto thirds = expected_input.chunk(3, -1);
    auto as_heads = [&](const at::Tensor& t) {
      return t.reshape({batch, tokens, heads, head_dim}).permute({0, 2, 1, 3});
    };
    auto scores = torch::matmul(as_heads(thirds[0]), as_heads(thirds[1]).transpose(-2, -1)) /
                  std::sqrt(static_cast<double>(head_dim));
    if (causal) {
      scores = scores.masked_fill(torch::ones({tokens, tokens}, torch::kBool).triu(1),
                                  -std::numeric_limits<float>::infinity());
    }
    const auto expected = torch::matmul(scores.softmax(-1), as_heads(thirds[2]))
                              .permute({0, 2, 1, 3})
                              .reshape({batch, tokens, width});
    EXPECT_TRUE(torch::allclose(y, expected, 1e-5, 1e-5)) << "causal " << causal;

    const auto weights = torch::randn({batch, tokens, width});
    (y * weights).sum().backward();
    (expected * weights).sum().backward();
    EXPECT_TRUE(torch::allclose(qkv.grad(), expected_input.grad(), 1e-5, 1e-5))
        << "causal " << causal;
    EXPECT_GT(qkv.grad().abs().sum().item<double>(), 0);
  }
}

TEST(Models, CatalogueAndNames) {
  EXPECT_EQ(parse_model("vit_base_patch16_224"), ModelKind::vit_b16);
  EXPECT_EQ(parse_model("resnet50"), ModelKind::resnet50);
  EXPECT_EQ(parse_model("gpt2"), ModelKind::gpt2);
  EXPECT_FALSE(parse_model("bert").has_value());
  EXPECT_FALSE(model_info(ModelKind::resnet50).supports_fp8);
}

}  // namespace
}  // namespace gpuscope::workloads
