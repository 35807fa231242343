// The average of N ranks' copies of one chunk, for the copy-engine all-reduce at three ranks or
// more: out = (in[0] + in[1] + ... + in[n-1]) * (1/n) in one pass, reading each input once and
// writing once (torch's add_ per peer then div_ passed over the chunk n times, reading and
// writing it each time). In fp32 the result is bit for bit theirs: the same adds in the same
// order, then the product with the reciprocal, which is how ATen's div_ by a scalar divides.
// bf16 chunks are summed in fp32 and rounded once (add_ rounded after every add). No LibTorch
// here: peer_all_reduce.cc calls it on the all-reduce's stream.
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>

namespace gpuscope::workloads {

enum class AverageKind { fp32, bf16 };

// The most inputs one launch averages (ranks on one host).
inline constexpr int kAverageMaxInputs = 16;

// out[i] = average of inputs[0..n)[i] for i < count; out may be inputs[0]. 2 <= n <=
// kAverageMaxInputs. Returns the launch's error (cudaErrorInvalidValue for a bad n).
cudaError_t launch_chunk_average(AverageKind kind, void* out, const void* const* inputs, int n,
                                 int64_t count, cudaStream_t stream);

}  // namespace gpuscope::workloads
