// Synthetic batches made on the device, and the models' losses. Images are N(0, 1) noise with
// uniform class labels; token sequences are uniform over the vocabulary, the target being the
// input shifted by one. Random data, never zeros: zeros can run faster than real data.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

#include "models/model.h"

namespace gpuscope::workloads {

struct Batch {
  at::Tensor input;   // images [B, 3, H, W] in `image_dtype`, or tokens [B, T] int64
  at::Tensor target;  // labels [B] or next tokens [B, T], int64
};

struct BatchSpec {
  ModelKind model = ModelKind::vit_b16;
  ModelShape shape;
  int64_t batch = 1;
  at::ScalarType image_dtype = at::kFloat;
  bool channels_last = false;
};

Batch make_synthetic_batch(const BatchSpec& spec, at::Device device);

// Mean cross-entropy of logits against targets (token logits flattened to [B*T, V]). `fused`:
// on gpuscope-torch's kernel where it fits (fused_cross_entropy.h; the logits are consumed).
at::Tensor model_loss(ModelKind model, const at::Tensor& logits, const at::Tensor& target,
                      bool fused = false);

}  // namespace gpuscope::workloads
