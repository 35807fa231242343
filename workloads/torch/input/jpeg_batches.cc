#include "input/jpeg_batches.h"

#include <algorithm>
#include <fstream>
#include <iterator>
#include <numeric>
#include <random>
#include <stdexcept>
#include <variant>

#include "input/augment.h"
#include "input/host_batches.h"
#include "input/jpeg_codec.h"

namespace gpuscope::workloads {
namespace {

std::variant<RgbImage, std::string> read_image(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return std::string("cannot be opened");
  const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  return decode_jpeg(
      std::span<const uint8_t>(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()));
}

}  // namespace

JpegBatches::JpegBatches(ImageFolder folder, const BatchSpec& spec, uint64_t seed)
    : folder_(std::move(folder)), spec_(spec), seed_(seed), order_(folder_.files.size()) {
  std::iota(order_.begin(), order_.end(), size_t{0});
  std::mt19937_64 rng(seed);
  std::shuffle(order_.begin(), order_.end(), rng);
}

bool JpegBatches::is_bad(size_t file) const {
  std::lock_guard lock(bad_mutex_);
  return bad_.count(file) != 0;
}

void JpegBatches::mark_bad(size_t file, const std::string& why) {
  std::lock_guard lock(bad_mutex_);
  if (bad_.insert(file).second && first_bad_.empty()) {
    first_bad_ = folder_.files[file].path + ": " + why;
  }
}

int64_t JpegBatches::unreadable_files() const {
  std::lock_guard lock(bad_mutex_);
  return static_cast<int64_t>(bad_.size());
}

std::string JpegBatches::first_unreadable() const {
  std::lock_guard lock(bad_mutex_);
  return first_bad_;
}

void JpegBatches::produce(int64_t index, HostSlot& slot) {
  const int side = static_cast<int>(image_side(spec_));
  std::vector<float> chw(static_cast<size_t>(3) * side * side);
  int64_t* labels = slot.target.data_ptr<int64_t>();
  const size_t files = order_.size();
  for (int64_t n = 0; n < spec_.batch; ++n) {
    const int64_t sample = index * spec_.batch + n;
    std::mt19937_64 rng(seed_ * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(sample) + 1);
    bool stored = false;
    for (size_t k = 0; k < files && !stored; ++k) {
      const size_t file = order_[(static_cast<size_t>(sample) + k) % files];
      if (is_bad(file)) continue;
      auto decoded = read_image(folder_.files[file].path);
      if (auto* why = std::get_if<std::string>(&decoded)) {
        mark_bad(file, *why);
        continue;
      }
      const RgbImage& image = std::get<RgbImage>(decoded);
      const CropBox crop = random_resized_crop(image.width, image.height, rng);
      const bool flip = std::bernoulli_distribution(0.5)(rng);
      resize_normalize(image, crop, flip, side, chw.data());
      store_image(slot.input, n, chw.data());
      labels[n] = folder_.files[file].label;
      stored = true;
    }
    if (!stored) {
      throw std::runtime_error("no file under " + folder_.root +
                               " decodes as a JPEG (first: " + first_unreadable() + ")");
    }
  }
}

}  // namespace gpuscope::workloads
