// Host-side batches for the loader (host_loader.h): staging slots laid out like the device
// batch, a writer that stores one decoded sample into a slot, and the `--input host` producer,
// which makes synthetic batches on the CPU with the work a data pipeline does per sample.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>
#include <memory>

#include "input/host_loader.h"
#include "synthetic_data.h"

namespace gpuscope::workloads {

// True when page-locked host memory can be allocated (a CUDA runtime with a device).
bool pinned_memory_available();

// An unfilled slot for `spec`'s batches: images in the spec's dtype and memory format (so that
// the copy to the device is one memcpy), int64 labels or tokens; page-locked when `pinned`.
// REQUIRES: !pinned || pinned_memory_available().
std::unique_ptr<HostSlot> make_host_slot(const BatchSpec& spec, bool pinned);

// Stores sample `n` of an image batch [B, 3, S, S] (float, bfloat16 or half; any strides) from
// planar floats chw[c * S * S + y * S + x], converting to the batch's dtype.
void store_image(const at::Tensor& images, int64_t n, const float* chw);

// `--input host`: batch `index` made from a generator seeded by (seed, index), so any worker
// makes the same batch. Images: random 8-bit RGB pixels, scaled and normalized with ImageNet's
// mean and std as ToTensor + Normalize do, uniform labels; GPT-2: uniform tokens, the target
// the input shifted by one.
BatchProducer synthetic_host_producer(const BatchSpec& spec, uint64_t seed);

// The side of the square images `spec` describes (ViT-B/16: 224).
int64_t image_side(const BatchSpec& spec);

}  // namespace gpuscope::workloads
