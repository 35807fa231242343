#include "input/image_set.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <fstream>
#include <random>
#include <variant>

#include "input/files.h"
#include "input/jpeg_codec.h"

namespace gpuscope::workloads {

std::optional<std::string> write_image_set(const ImageSetOptions& options) {
  if (!jpeg_available()) return jpeg_unavailable_reason();
  std::mt19937_64 rng(options.seed);
  std::uniform_int_distribution<int> size(96, 320);
  for (int64_t i = 0; i < options.count; ++i) {
    const int64_t label = i % options.classes;
    const std::string folder = options.dir + "/class_" + std::to_string(label);
    if (std::string error = make_directories(folder); !error.empty()) return error;

    RgbImage image;
    image.width = size(rng);
    image.height = size(rng);
    image.pixels.resize(static_cast<size_t>(image.width) * image.height * 3);
    // Each class its own base colour and stripe period; noise from a cheap generator (a set
    // of thousands of images should take seconds).
    const float hue = static_cast<float>(label) / static_cast<float>(options.classes);
    const float period = 6.0f + 5.0f * static_cast<float>(label % 5);
    std::array<float, 3> base{};
    for (int c = 0; c < 3; ++c) {
      base[c] = 255.0f * (0.5f + 0.45f * std::sin(6.2832f * (hue + static_cast<float>(c) / 3.0f)));
    }
    uint64_t state = rng();
    for (int y = 0; y < image.height; ++y) {
      const float height_fraction = static_cast<float>(y) / static_cast<float>(image.height);
      for (int x = 0; x < image.width; ++x) {
        const bool stripe = static_cast<int>(static_cast<float>(x + y) / period) % 2 == 0;
        for (int c = 0; c < 3; ++c) {
          state = state * 6364136223846793005ull + 1442695040888963407ull;
          const float noise = static_cast<float>((state >> 40) % 41) - 20.0f;
          const float v =
              base[c] * (0.6f + 0.4f * height_fraction) + (stripe ? 30.0f : -30.0f) + noise;
          image.pixels[(static_cast<size_t>(y) * image.width + x) * 3 + c] =
              static_cast<uint8_t>(std::clamp(v, 0.0f, 255.0f));
        }
      }
    }
    auto encoded = encode_jpeg(image, 90);
    if (auto* error = std::get_if<std::string>(&encoded)) return *error;
    const auto& bytes = std::get<std::vector<uint8_t>>(encoded);
    const std::string file = folder + "/image_" + std::to_string(i) + ".jpg";
    std::ofstream out(file, std::ios::binary);
    out.write(reinterpret_cast<const char*>(bytes.data()),
              static_cast<std::streamsize>(bytes.size()));
    if (!out) return file + ": cannot be written";
  }
  return std::nullopt;
}

}  // namespace gpuscope::workloads
