// gpuscope-torch's own LayerNorm (module on the CPU, kernel on a GPU when there is one) and ViT's
// patch embedding as a GEMM.
#include <ATen/autocast_mode.h>
#include <gtest/gtest.h>
#include <torch/torch.h>

#include "models/layer_norm.h"
#include "models/vit.h"
#include "run_config.h"

namespace gpuscope::workloads {
namespace {

std::shared_ptr<LayerOptions> own_norm_options(bool on) {
  auto options = std::make_shared<LayerOptions>();
  options->own_layer_norm = on;
  return options;
}

TEST(LayerNorm, HasTorchsParametersAndResult) {
  torch::manual_seed(1);
  LayerNorm norm(64, 1e-6, own_norm_options(true));
  std::vector<std::string> names;
  for (const auto& p : norm->named_parameters()) names.push_back(p.key());
  EXPECT_EQ(names, (std::vector<std::string>{"weight", "bias"}));
  EXPECT_TRUE(norm->weight.eq(1).all().item<bool>());
  EXPECT_TRUE(norm->bias.eq(0).all().item<bool>());
  {
    torch::NoGradGuard no_grad;
    norm->weight.uniform_(0.5, 1.5);
    norm->bias.uniform_(-0.5, 0.5);
  }
  const at::Tensor x = torch::randn({3, 5, 64});
  const at::Tensor expected = at::layer_norm(x, {64}, norm->weight, norm->bias, 1e-6);
  const at::Tensor y = norm->forward(x);
  EXPECT_TRUE(torch::allclose(y, expected));
  EXPECT_TRUE(y.requires_grad());  // under autograd: ATen's differentiable op
}

TEST(LayerNorm, OwnKernelTakesOnlyContiguousCudaHalfRowsThatFit) {
  const auto bf16 = at::TensorOptions().dtype(at::kBFloat16);
  const at::Tensor w = torch::ones({768}, bf16), b = torch::zeros({768}, bf16);
  EXPECT_FALSE(own_layer_norm_fits(torch::randn({4, 768}, bf16), w, b));  // on the CPU
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device: the GPU cases need one";
  const auto cuda = bf16.device(at::kCUDA);
  const at::Tensor wc = w.to(at::kCUDA), bc = b.to(at::kCUDA);
  EXPECT_TRUE(own_layer_norm_fits(torch::randn({4, 768}, cuda), wc, bc));
  EXPECT_FALSE(own_layer_norm_fits(torch::randn({4, 768}, cuda.dtype(at::kFloat)), wc, bc));
  EXPECT_FALSE(own_layer_norm_fits(torch::randn({768, 4}, cuda).t(), wc, bc));  // strided
  EXPECT_FALSE(own_layer_norm_fits(torch::randn({4, 2048}, cuda), torch::ones({2048}, cuda),
                                   torch::zeros({2048}, cuda)));  // wider than 1024
  EXPECT_FALSE(own_layer_norm_fits(torch::randn({4, 100}, cuda), torch::ones({100}, cuda),
                                   torch::zeros({100}, cuda)));  // not a multiple of 8
}

// Against LayerNorm in fp32 on the same inputs, the kernel is as close as ATen's own fp16/bf16
// LayerNorm (both round once, to the output type).
TEST(LayerNorm, OwnKernelMatchesAtenOnTheGpu) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  torch::manual_seed(2);
  for (const auto dtype : {at::kBFloat16, at::kHalf}) {
    for (const int64_t width : {8, 256, 768, 1000 / 8 * 8, 1024}) {
      for (const int64_t rows : {1, 3, 4097}) {
        const auto options = at::TensorOptions().device(at::kCUDA).dtype(dtype);
        const at::Tensor x =
            (torch::randn({rows, width}, options.dtype(at::kFloat)) * 3 + 1).to(dtype);
        const at::Tensor w = torch::rand({width}, options) + 0.5;
        const at::Tensor b = torch::randn({width}, options);
        const at::Tensor reference =
            at::layer_norm(x.to(at::kFloat), {width}, w.to(at::kFloat), b.to(at::kFloat), 1e-5);
        const at::Tensor aten = at::layer_norm(x, {width}, w, b, 1e-5);
        const at::Tensor ours = own_layer_norm(x, w, b, 1e-5);
        ASSERT_EQ(ours.sizes(), x.sizes());
        ASSERT_EQ(ours.scalar_type(), dtype);
        const double aten_error = (aten.to(at::kFloat) - reference).abs().max().item<double>();
        const double our_error = (ours.to(at::kFloat) - reference).abs().max().item<double>();
        EXPECT_LE(our_error, aten_error * 1.01 + 1e-6)
            << c10::toString(dtype) << " width " << width << " rows " << rows;
        // Rounded the same way almost everywhere.
        EXPECT_GT(ours.eq(aten).to(at::kFloat).mean().item<double>(), 0.99);
      }
    }
  }
}

TEST(LayerNorm, ModuleUsesTheOwnKernelOnlyOutsideAutograd) {
  if (!torch::cuda::is_available()) GTEST_SKIP() << "no CUDA device";
  LayerNorm norm(768, 1e-6, own_norm_options(true));
  norm->to(at::kCUDA, at::kBFloat16);
  const at::Tensor x =
      torch::randn({2, 197, 768}, at::TensorOptions().device(at::kCUDA).dtype(at::kBFloat16));
  EXPECT_TRUE(norm->forward(x).requires_grad());
  torch::NoGradGuard no_grad;
  const at::Tensor y = norm->forward(x);
  EXPECT_FALSE(y.requires_grad());
  EXPECT_TRUE(torch::allclose(
      y.to(at::kFloat), at::layer_norm(x, {768}, norm->weight, norm->bias, 1e-6).to(at::kFloat),
      /*rtol=*/0, /*atol=*/0.05));
}

VitConfig small_vit() {
  VitConfig c;
  c.image_size = 32;
  c.patch = 8;
  c.width = 48;
  c.depth = 1;
  c.heads = 4;
  c.mlp_hidden = 96;
  c.classes = 10;
  return c;
}

// The patch embedding as a GEMM is the convolution: same output and the same gradients (its
// backward recomputes the patch rows from the images).
TEST(PatchGemm, EqualsThePatchConvolution) {
  struct Outcome {
    at::Tensor logits, weight_grad, bias_grad, image_grad;
  };
  const auto run = [](bool patch_gemm) {
    auto options = std::make_shared<LayerOptions>();
    options->patch_gemm = patch_gemm;
    torch::manual_seed(3);
    VisionTransformer vit(small_vit(), options);
    torch::manual_seed(4);
    const at::Tensor images = torch::randn({2, 3, 32, 32}, torch::requires_grad());
    const at::Tensor logits = vit.forward(images);
    logits.square().sum().backward();
    auto params = vit.named_parameters();
    return Outcome{logits.detach(), params["patch_embed.weight"].grad().clone(),
                   params["patch_embed.bias"].grad().clone(), images.grad().clone()};
  };
  const Outcome conv = run(false);
  const Outcome gemm = run(true);
  EXPECT_TRUE(torch::allclose(gemm.logits, conv.logits, 1e-4, 1e-5));
  EXPECT_TRUE(torch::allclose(gemm.weight_grad, conv.weight_grad, 1e-4, 1e-5));
  EXPECT_TRUE(torch::allclose(gemm.bias_grad, conv.bias_grad, 1e-4, 1e-5));
  EXPECT_TRUE(torch::allclose(gemm.image_grad, conv.image_grad, 1e-4, 1e-6));
  EXPECT_GT(conv.weight_grad.abs().sum().item<double>(), 0.0);
  EXPECT_GT(conv.image_grad.abs().sum().item<double>(), 0.0);
}

// Under autocast the GEMM runs in bf16 and the weight's gradient comes back in its fp32.
TEST(PatchGemm, AutocastGradientsKeepTheParameterDtype) {
  auto options = std::make_shared<LayerOptions>();
  options->patch_gemm = true;
  torch::manual_seed(3);
  VisionTransformer vit(small_vit(), options);
  const at::Tensor images = torch::randn({2, 3, 32, 32});
  {
    at::autocast::set_autocast_enabled(at::kCPU, true);
    at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
    const at::Tensor logits = vit.forward(images);
    at::autocast::set_autocast_enabled(at::kCPU, false);
    at::autocast::clear_cache();
    logits.to(at::kFloat).square().sum().backward();
  }
  const at::Tensor grad = vit.named_parameters()["patch_embed.weight"].grad();
  ASSERT_TRUE(grad.defined());
  EXPECT_EQ(grad.scalar_type(), at::kFloat);
  EXPECT_TRUE(grad.isfinite().all().item<bool>());
}

TEST(PatchGemm, SwitchesResolvePerModelAndTask) {
  RunConfig c;
  c.model = ModelKind::vit_b16;
  c.task = Task::infer;
  EXPECT_TRUE(resolve_switches(c, /*on_cuda=*/true).own_layer_norm);
  EXPECT_FALSE(resolve_switches(c, /*on_cuda=*/false).own_layer_norm);
  EXPECT_TRUE(resolve_switches(c, false).patch_gemm);
  c.task = Task::train;
  EXPECT_FALSE(resolve_switches(c, true).own_layer_norm);  // it has no backward
  EXPECT_TRUE(resolve_switches(c, true).patch_gemm);
  c.patch_gemm = Toggle::off;
  EXPECT_FALSE(resolve_switches(c, true).patch_gemm);
  c.model = ModelKind::resnet50;
  c.patch_gemm = Toggle::automatic;
  EXPECT_FALSE(resolve_switches(c, true).patch_gemm);
}

}  // namespace
}  // namespace gpuscope::workloads
