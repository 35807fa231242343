// ResNet-50 as torchvision's resnet50 (v1.5: the stride sits on the 3x3 convolution of each
// bottleneck): a 7x7/2 stem with max-pooling, bottleneck stages of [3, 4, 6, 3] blocks at widths
// 64-512 (x4 expansion), global average pooling, a 2048->1000 classifier. BatchNorm after every
// convolution; Kaiming-normal (fan-out) convolution weights. 25,557,032 parameters.
#pragma once

#include <torch/nn/modules/batchnorm.h>
#include <torch/nn/modules/container/sequential.h>
#include <torch/nn/modules/conv.h>
#include <torch/nn/modules/linear.h>

#include "models/model.h"

namespace gpuscope::workloads {

class BottleneckImpl : public torch::nn::Module {
 public:
  BottleneckImpl(int64_t in_channels, int64_t width, int64_t stride);
  at::Tensor forward(const at::Tensor& x);

 private:
  torch::nn::Conv2d conv1_{nullptr}, conv2_{nullptr}, conv3_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr}, bn2_{nullptr}, bn3_{nullptr};
  torch::nn::Sequential downsample_{nullptr};  // null when the shapes already match
};
TORCH_MODULE(Bottleneck);

class ResNet50 : public ReferenceModel {
 public:
  ResNet50();
  at::Tensor forward(const at::Tensor& images) override;

 private:
  torch::nn::Conv2d conv1_{nullptr};
  torch::nn::BatchNorm2d bn1_{nullptr};
  torch::nn::Sequential layer1_{nullptr}, layer2_{nullptr}, layer3_{nullptr}, layer4_{nullptr};
  torch::nn::Linear fc_{nullptr};
};

}  // namespace gpuscope::workloads
