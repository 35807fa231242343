#include "models/resnet.h"

#include <torch/torch.h>

namespace gpuscope::workloads {
namespace {

constexpr int64_t kExpansion = 4;

torch::nn::Conv2d conv(int64_t in, int64_t out, int64_t kernel, int64_t stride) {
  auto c = torch::nn::Conv2d(
      torch::nn::Conv2dOptions(in, out, kernel).stride(stride).padding(kernel / 2).bias(false));
  torch::nn::init::kaiming_normal_(c->weight, 0.0, torch::kFanOut, torch::kReLU);
  return c;
}

torch::nn::Sequential stage(int64_t& in_channels, int64_t width, int64_t blocks, int64_t stride) {
  torch::nn::Sequential s;
  for (int64_t i = 0; i < blocks; ++i) {
    s->push_back(Bottleneck(in_channels, width, i == 0 ? stride : 1));
    in_channels = width * kExpansion;
  }
  return s;
}

}  // namespace

BottleneckImpl::BottleneckImpl(int64_t in_channels, int64_t width, int64_t stride) {
  const int64_t out_channels = width * kExpansion;
  conv1_ = register_module("conv1", conv(in_channels, width, 1, 1));
  bn1_ = register_module("bn1", torch::nn::BatchNorm2d(width));
  conv2_ = register_module("conv2", conv(width, width, 3, stride));
  bn2_ = register_module("bn2", torch::nn::BatchNorm2d(width));
  conv3_ = register_module("conv3", conv(width, out_channels, 1, 1));
  bn3_ = register_module("bn3", torch::nn::BatchNorm2d(out_channels));
  if (stride != 1 || in_channels != out_channels) {
    downsample_ = register_module("downsample",
                                  torch::nn::Sequential(conv(in_channels, out_channels, 1, stride),
                                                        torch::nn::BatchNorm2d(out_channels)));
  }
}

at::Tensor BottleneckImpl::forward(const at::Tensor& x) {
  // One layer per statement, as torchvision's Python: each assignment frees the tensor before
  // it. Chained, bn3(conv3(out)) kept conv2's output alive through conv3 and bn3, a fourth large
  // tensor at the inference peak (+411 MB at batch 1024 on the H100).
  at::Tensor out = conv1_->forward(x);
  out = bn1_->forward(out).relu_();
  out = conv2_->forward(out);
  out = bn2_->forward(out).relu_();
  out = conv3_->forward(out);
  out = bn3_->forward(out);
  // In place, as torchvision (BatchNorm's backward does not read its output).
  out.add_(downsample_ ? downsample_->forward(x) : x);
  return out.relu_();
}

ResNet50::ResNet50() {
  conv1_ = register_module("conv1", conv(3, 64, 7, 2));
  bn1_ = register_module("bn1", torch::nn::BatchNorm2d(64));
  int64_t channels = 64;
  layer1_ = register_module("layer1", stage(channels, 64, 3, 1));
  layer2_ = register_module("layer2", stage(channels, 128, 4, 2));
  layer3_ = register_module("layer3", stage(channels, 256, 6, 2));
  layer4_ = register_module("layer4", stage(channels, 512, 3, 2));
  fc_ = register_module("fc", torch::nn::Linear(channels, 1000));
}

at::Tensor ResNet50::forward(const at::Tensor& images) {
  at::Tensor x = bn1_->forward(conv1_->forward(images)).relu_();
  x = at::max_pool2d(x, /*kernel_size=*/{3, 3}, /*stride=*/{2, 2}, /*padding=*/{1, 1});
  x = layer4_->forward(layer3_->forward(layer2_->forward(layer1_->forward(x))));
  x = at::adaptive_avg_pool2d(x, {1, 1}).flatten(1);
  return fc_->forward(x);
}

}  // namespace gpuscope::workloads
