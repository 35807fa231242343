#include "input/augment.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace gpuscope::workloads {

CropBox random_resized_crop(int width, int height, std::mt19937_64& rng) {
  const double area = static_cast<double>(width) * height;
  std::uniform_real_distribution<double> scale(0.08, 1.0);
  std::uniform_real_distribution<double> log_ratio(std::log(3.0 / 4.0), std::log(4.0 / 3.0));
  for (int attempt = 0; attempt < 10; ++attempt) {
    const double target = area * scale(rng);
    const double ratio = std::exp(log_ratio(rng));
    const int w = static_cast<int>(std::lround(std::sqrt(target * ratio)));
    const int h = static_cast<int>(std::lround(std::sqrt(target / ratio)));
    if (w > 0 && h > 0 && w <= width && h <= height) {
      const int x = std::uniform_int_distribution<int>(0, width - w)(rng);
      const int y = std::uniform_int_distribution<int>(0, height - h)(rng);
      return {x, y, w, h};
    }
  }
  const double in_ratio = static_cast<double>(width) / height;
  int w = width, h = height;
  if (in_ratio < 3.0 / 4.0) {
    h = static_cast<int>(std::lround(w / (3.0 / 4.0)));
  } else if (in_ratio > 4.0 / 3.0) {
    w = static_cast<int>(std::lround(h * (4.0 / 3.0)));
  }
  w = std::clamp(w, 1, width);
  h = std::clamp(h, 1, height);
  return {(width - w) / 2, (height - h) / 2, w, h};
}

namespace {

// Source coordinate of each output column/row: the two neighbours and the weight of the second.
struct Tap {
  int lo = 0, hi = 0;
  float weight = 0;
};

std::vector<Tap> taps(int crop_start, int crop_size, int image_size, int side) {
  std::vector<Tap> out(static_cast<size_t>(side));
  const double step = static_cast<double>(crop_size) / side;
  for (int i = 0; i < side; ++i) {
    const double src = std::clamp((i + 0.5) * step - 0.5, 0.0, crop_size - 1.0);
    const int lo = static_cast<int>(src);
    out[i].lo = std::min(crop_start + lo, image_size - 1);
    out[i].hi = std::min(crop_start + std::min(lo + 1, crop_size - 1), image_size - 1);
    out[i].weight = static_cast<float>(src - lo);
  }
  return out;
}

}  // namespace

void resize_normalize(const RgbImage& image, const CropBox& crop, bool flip, int side, float* out) {
  const std::vector<Tap> xs = taps(crop.x, crop.width, image.width, side);
  const std::vector<Tap> ys = taps(crop.y, crop.height, image.height, side);
  std::array<float, 3> scale{}, shift{};
  for (int c = 0; c < 3; ++c) {
    scale[c] = 1.0f / (255.0f * kImageNetStd[c]);
    shift[c] = -kImageNetMean[c] / kImageNetStd[c];
  }
  const size_t plane = static_cast<size_t>(side) * side;
  const size_t stride = static_cast<size_t>(image.width) * 3;
  for (int y = 0; y < side; ++y) {
    const uint8_t* top = image.pixels.data() + ys[y].lo * stride;
    const uint8_t* bottom = image.pixels.data() + ys[y].hi * stride;
    const float wy = ys[y].weight;
    for (int x = 0; x < side; ++x) {
      const Tap& tx = xs[flip ? side - 1 - x : x];
      const size_t lo = static_cast<size_t>(tx.lo) * 3, hi = static_cast<size_t>(tx.hi) * 3;
      const size_t at = static_cast<size_t>(y) * side + x;
      for (int c = 0; c < 3; ++c) {
        const auto value = [](const uint8_t* row, size_t i) { return static_cast<float>(row[i]); };
        const float upper =
            value(top, lo + c) + tx.weight * (value(top, hi + c) - value(top, lo + c));
        const float lower =
            value(bottom, lo + c) + tx.weight * (value(bottom, hi + c) - value(bottom, lo + c));
        out[c * plane + at] = (upper + wy * (lower - upper)) * scale[c] + shift[c];
      }
    }
  }
}

}  // namespace gpuscope::workloads
