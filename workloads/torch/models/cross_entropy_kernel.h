// gpuscope-torch's cross-entropy kernel: the loss of each row of logits and, in the same
// buffer, its gradient. One block per row reads the row twice (max and sum of exponentials in
// fp32, then softmax) and writes softmax - one_hot(target) over the logits. ATen's
// log_softmax + nll_loss keep two more logit-sized tensors until the backward (GPT-2 small at
// batch 16: 3 x 1.65 GB at the peak, measured on the H100, bench/RESULTS.md). No LibTorch here:
// fused_cross_entropy.cc checks tensors and calls it on the current stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpuscope::workloads {

enum class LogitKind { fp32, fp16, bf16 };

// For each of `rows` contiguous rows of `vocab` logits (overwritten): loss[r] = logsumexp(x) -
// x[target[r]] and x[j] = (softmax(x)[j] - (j == target[r])) * *grad_factor (a device value,
// read by the kernel: no synchronization); a row whose target is `ignore_index` gets loss 0 and
// gradient 0. Targets must lie in [0, vocab) otherwise. Returns the launch's error.
cudaError_t launch_cross_entropy(LogitKind kind, void* logits, const int64_t* target, float* loss,
                                 int64_t rows, int64_t vocab, int64_t ignore_index,
                                 const float* grad_factor, cudaStream_t stream);

// values[i] *= *factor for n contiguous values; nothing is read or written when *factor is 1.
cudaError_t launch_scale_in_place(LogitKind kind, void* values, int64_t n, const float* factor,
                                  cudaStream_t stream);

}  // namespace gpuscope::workloads
