// A convolution whose kernel equals its stride (ViT's 16x16 patch embedding) as one GEMM over the
// image's non-overlapping patches: one copy of the images into [patches, C * p * p] rows laid
// out as the weight's [C, p, p], times the weight [out, C * p * p]^T. Same weights and result as
// the convolution, which cuDNN ran as an im2col kernel at a fraction of cuBLAS's speed.
//
// In training the backward recomputes the patch rows from the images instead of keeping them:
// the images are alive anyway, and the rows would be a second copy of them (96 MB for ViT-B/16
// at batch 160 in fp32, where the convolution kept nothing extra).
#pragma once

#include <ATen/ATen.h>

namespace gpuscope::workloads {

// images [B, C, H, W] (H, W multiples of `patch`), weight [out, C, patch, patch], bias [out] or
// undefined -> [B, (H / patch) * (W / patch), out], as conv2d(images, weight, bias, stride =
// patch) flattened and transposed. Differentiable in all three.
at::Tensor patch_gemm(const at::Tensor& images, const at::Tensor& weight, const at::Tensor& bias,
                      int64_t patch);

}  // namespace gpuscope::workloads
