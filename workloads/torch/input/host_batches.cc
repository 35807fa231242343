#include "input/host_batches.h"

#include <random>
#include <vector>

#include "input/augment.h"

namespace gpuscope::workloads {
namespace {

constexpr int64_t kClasses = 1000;
constexpr int64_t kVocab = 50257;

template <typename T>
void store_planar(const at::Tensor& images, int64_t n, const float* chw) {
  const int64_t side = images.size(2);
  const auto st = images.strides();
  T* sample = images.data_ptr<T>() + n * st[0];
  for (int64_t c = 0; c < 3; ++c) {
    for (int64_t y = 0; y < side; ++y) {
      T* row = sample + c * st[1] + y * st[2];
      const float* from = chw + (c * side + y) * side;
      for (int64_t x = 0; x < side; ++x) row[x * st[3]] = static_cast<T>(from[x]);
    }
  }
}

uint64_t mix(uint64_t seed, int64_t index) {
  return seed * 0x9E3779B97F4A7C15ull + static_cast<uint64_t>(index) * 0xBF58476D1CE4E5B9ull + 1;
}

}  // namespace

bool pinned_memory_available() {
  return at::globalContext().hasCUDA();
}

int64_t image_side(const BatchSpec& spec) {
  return spec.model == ModelKind::vit_b16 ? 224 : spec.shape.image_size;
}

std::unique_ptr<HostSlot> make_host_slot(const BatchSpec& spec, bool pinned) {
  auto slot = std::make_unique<HostSlot>();
  const auto longs = at::TensorOptions().dtype(at::kLong).pinned_memory(pinned);
  if (spec.model == ModelKind::gpt2) {
    slot->input = at::empty({spec.batch, spec.shape.seq_len}, longs);
    slot->target = at::empty({spec.batch, spec.shape.seq_len}, longs);
    return slot;
  }
  const int64_t side = image_side(spec);
  slot->input =
      at::empty({spec.batch, 3, side, side},
                at::TensorOptions().dtype(spec.image_dtype).pinned_memory(pinned),
                spec.channels_last ? at::MemoryFormat::ChannelsLast : at::MemoryFormat::Contiguous);
  slot->target = at::empty({spec.batch}, longs);
  return slot;
}

void store_image(const at::Tensor& images, int64_t n, const float* chw) {
  switch (images.scalar_type()) {
    case at::kFloat:
      return store_planar<float>(images, n, chw);
    case at::kBFloat16:
      return store_planar<c10::BFloat16>(images, n, chw);
    case at::kHalf:
      return store_planar<c10::Half>(images, n, chw);
    default:
      TORCH_CHECK(false, "store_image: unsupported image dtype ", images.scalar_type());
  }
}

BatchProducer synthetic_host_producer(const BatchSpec& spec, uint64_t seed) {
  return [spec, seed](int64_t index, HostSlot& slot) {
    std::mt19937_64 rng(mix(seed, index));
    if (spec.model == ModelKind::gpt2) {
      std::uniform_int_distribution<int64_t> token(0, kVocab - 1);
      const int64_t t = spec.shape.seq_len;
      int64_t* input = slot.input.data_ptr<int64_t>();
      int64_t* target = slot.target.data_ptr<int64_t>();
      for (int64_t b = 0; b < spec.batch; ++b) {
        int64_t previous = token(rng);
        for (int64_t i = 0; i < t; ++i) {
          const int64_t next = token(rng);
          input[b * t + i] = previous;
          target[b * t + i] = next;
          previous = next;
        }
      }
      return;
    }
    const int64_t side = image_side(spec);
    const int64_t plane = side * side;
    std::vector<float> chw(static_cast<size_t>(3 * plane));
    std::uniform_int_distribution<int64_t> label(0, kClasses - 1);
    int64_t* labels = slot.target.data_ptr<int64_t>();
    for (int64_t n = 0; n < spec.batch; ++n) {
      // One 64-bit draw gives eight 8-bit pixels, as a decoder would hand them over.
      for (int64_t c = 0; c < 3; ++c) {
        const float scale = 1.0f / (255.0f * kImageNetStd[c]);
        const float shift = -kImageNetMean[c] / kImageNetStd[c];
        float* out = chw.data() + c * plane;
        for (int64_t i = 0; i < plane; i += 8) {
          uint64_t bits = rng();
          for (int64_t k = i; k < std::min(i + 8, plane); ++k, bits >>= 8) {
            out[k] = static_cast<float>(bits & 0xFF) * scale + shift;
          }
        }
      }
      store_image(slot.input, n, chw.data());
      labels[n] = label(rng);
    }
  };
}

}  // namespace gpuscope::workloads
