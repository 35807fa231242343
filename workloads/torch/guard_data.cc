#include "guard_data.h"

#include <ATen/CPUGeneratorImpl.h>

namespace gpuscope::workloads {
namespace {

constexpr int64_t kGuardVocab = 256;

}  // namespace

int64_t guard_default_batch(ModelKind model) {
  return model == ModelKind::gpt2 ? 8 : 32;
}

std::vector<Batch> make_guard_batches(const BatchSpec& spec, uint64_t seed, at::Device device) {
  at::Generator gen = at::make_generator<at::CPUGeneratorImpl>(seed);
  const auto floats = at::TensorOptions().dtype(at::kFloat);
  const auto longs = at::TensorOptions().dtype(at::kLong);
  std::vector<Batch> batches;
  if (spec.model == ModelKind::gpt2) {
    for (int64_t i = 0; i < kGuardBatches; ++i) {
      at::Tensor tokens = at::empty({spec.batch, spec.shape.seq_len + 1}, longs);
      tokens.select(1, 0).copy_(at::randint(kGuardVocab, {spec.batch}, gen, longs));
      for (int64_t t = 1; t <= spec.shape.seq_len; ++t) {
        tokens.select(1, t).copy_((tokens.select(1, t - 1) * 5 + 3).remainder(kGuardVocab));
      }
      batches.push_back({tokens.narrow(1, 0, spec.shape.seq_len).contiguous().to(device),
                         tokens.narrow(1, 1, spec.shape.seq_len).contiguous().to(device)});
    }
    return batches;
  }
  const int64_t side = spec.model == ModelKind::vit_b16 ? 224 : spec.shape.image_size;
  const at::Tensor coarse = at::randn({kGuardClasses, 3, 8, 8}, gen, floats);
  const at::Tensor patterns =
      at::upsample_bilinear2d(coarse, {side, side}, /*align_corners=*/false);
  for (int64_t i = 0; i < kGuardBatches; ++i) {
    const at::Tensor labels = at::randint(kGuardClasses, {spec.batch}, gen, longs);
    const at::Tensor noise = at::randn({spec.batch, 3, side, side}, gen, floats) * 0.5;
    at::Tensor images = (patterns.index_select(0, labels) + noise).to(device, spec.image_dtype);
    if (spec.channels_last) images = images.contiguous(at::MemoryFormat::ChannelsLast);
    batches.push_back({images, labels.to(device)});
  }
  return batches;
}

}  // namespace gpuscope::workloads
