// The training-time image transform of the JPEG input path, as torchvision's
// RandomResizedCrop(side) + RandomHorizontalFlip() + ToTensor() + Normalize(ImageNet mean/std):
// a random crop of 8-100% of the area with aspect ratio 3/4..4/3, resized bilinearly to
// side x side, flipped with probability 1/2, scaled to [0, 1] and normalized per channel.
#pragma once

#include <array>
#include <cstdint>
#include <random>

#include "input/jpeg_codec.h"

namespace gpuscope::workloads {

inline constexpr std::array<float, 3> kImageNetMean = {0.485f, 0.456f, 0.406f};
inline constexpr std::array<float, 3> kImageNetStd = {0.229f, 0.224f, 0.225f};

struct CropBox {
  int x = 0, y = 0, width = 0, height = 0;
};

// torchvision's RandomResizedCrop.get_params: ten tries at a random area and ratio, then the
// largest central crop within the ratio range. REQUIRES: width, height >= 1.
CropBox random_resized_crop(int width, int height, std::mt19937_64& rng);

// Resizes `crop` of `image` to side x side (bilinear, half-pixel centers), mirrors it when
// `flip`, and writes normalized values as planar CHW floats: out[c * side * side + y * side + x].
// REQUIRES: out holds 3 * side * side floats; crop lies inside the image.
void resize_normalize(const RgbImage& image, const CropBox& crop, bool flip, int side, float* out);

}  // namespace gpuscope::workloads
