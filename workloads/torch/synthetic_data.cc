#include "synthetic_data.h"

#include "fused_cross_entropy.h"

namespace gpuscope::workloads {
namespace {

constexpr int64_t kClasses = 1000;
constexpr int64_t kVocab = 50257;

}  // namespace

Batch make_synthetic_batch(const BatchSpec& spec, at::Device device) {
  const auto longs = at::TensorOptions().dtype(at::kLong).device(device);
  Batch b;
  if (spec.model == ModelKind::gpt2) {
    const at::Tensor tokens = at::randint(kVocab, {spec.batch, spec.shape.seq_len + 1}, longs);
    b.input = tokens.narrow(1, 0, spec.shape.seq_len).contiguous();
    b.target = tokens.narrow(1, 1, spec.shape.seq_len).contiguous();
    return b;
  }
  const int64_t side = spec.model == ModelKind::vit_b16 ? 224 : spec.shape.image_size;
  b.input = at::randn({spec.batch, 3, side, side},
                      at::TensorOptions().dtype(spec.image_dtype).device(device));
  if (spec.channels_last) b.input = b.input.contiguous(at::MemoryFormat::ChannelsLast);
  b.target = at::randint(kClasses, {spec.batch}, longs);
  return b;
}

at::Tensor model_loss(ModelKind model, const at::Tensor& logits, const at::Tensor& target,
                      bool fused) {
  const at::Tensor rows = model == ModelKind::gpt2 ? logits.reshape({-1, logits.size(-1)}) : logits;
  const at::Tensor targets = model == ModelKind::gpt2 ? target.reshape({-1}) : target;
  if (fused && fused_cross_entropy_fits(rows, targets)) return fused_cross_entropy(rows, targets);
  return at::cross_entropy_loss(rows, targets);
}

}  // namespace gpuscope::workloads
