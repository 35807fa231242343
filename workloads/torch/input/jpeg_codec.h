// JPEG decoding and encoding for gpuscope-torch's image input path, behind libjpeg-turbo's libjpeg
// API (Debian libjpeg62-turbo-dev; cmake/jpeg.cmake). The only file that includes a libjpeg
// header. Built without libjpeg, every call fails with jpeg_unavailable_reason().
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <variant>
#include <vector>

namespace gpuscope::workloads {

struct RgbImage {
  int width = 0;
  int height = 0;
  std::vector<uint8_t> pixels;  // height x width x 3, row-major, interleaved RGB
};

// True when this build has a JPEG codec.
bool jpeg_available();
// Why --input jpeg cannot run in a build without the codec.
std::string jpeg_unavailable_reason();

// Decodes a baseline or progressive JPEG (grayscale and CMYK converted to RGB). Returns the
// image, or libjpeg's message when the data is not a decodable JPEG (never aborts the process).
std::variant<RgbImage, std::string> decode_jpeg(std::span<const uint8_t> data);

// Encodes `image` at `quality` (1..100). Returns the JPEG bytes, or the reason it failed.
// REQUIRES: image.pixels.size() == width * height * 3.
std::variant<std::vector<uint8_t>, std::string> encode_jpeg(const RgbImage& image, int quality);

}  // namespace gpuscope::workloads
