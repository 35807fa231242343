// The arithmetic of burn's error detection, in plain C++ so that it is tested on machines
// without a GPU. The GPU kernels (result_check.cu) apply the same rules element by element.
//
// Three checks, any failure of which fails the run:
//  1. Repeatability (gpu-burn's test): every GEMM result must be bit-identical to the first
//     result computed from the same inputs with the same algorithm. cuBLASLt is deterministic
//     for a fixed algorithm on one GPU (algo_select.cc keeps only algorithms that showed it), so
//     any differing element is a hardware or driver fault.
//  2. No NaN or Inf in any result: the inputs are bounded so that none can arise.
//  3. Accuracy: every few seconds a few 16x16 tiles of a result are recomputed on the host in
//     fp64 from the very inputs the GPU used, and each element's error is normalized as
//         |c - ref| / max(|ref|, rms(ref over the tile))
//     (relative error, but against the tile's RMS where ref is near zero, so that cancellation
//     does not inflate it). Limits per precision, with k = n = 8192 in mind and margin:
//       fp64 1e-12  accumulation error ~ u*sqrt(k/2) = 7e-15
//       fp32 1e-4   ~ u*sqrt(k/2) = 4e-6 at 1 sigma, ~1.3e-5 at the tail of 768 elements
//       tf32 1e-2   inputs rounded to 10-bit mantissas: ~2e-3 at the tail
//       fp16 1e-2   output rounding 2^-11 plus fp32 accumulation
//       bf16 1e-2   output rounding 2^-8 (3.9e-3) plus fp32 accumulation
//       fp8  2e-2   bf16 output (3.9e-3) plus Hopper's fp8 accumulation; reference includes
//                   the A and B scales
//       int8 exact  int32 accumulation of integers cannot round
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

#include "capability/gemm_spec.h"
#include "gpuscope/precision.h"

namespace gpuscope::capability::detail {

// Exact conversions of the narrow formats (bits as stored on the GPU, little-endian).
double half_to_double(std::uint16_t bits);
double bfloat16_to_double(std::uint16_t bits);
double e4m3_to_double(std::uint8_t bits);  // OCP/NVIDIA e4m3fn: no Inf, S.1111.111 is NaN

// Element `index` of an array of `type` as a double (exact for every type here).
double decode_element(ElementType type, const void* data, std::size_t index);
std::vector<double> decode_elements(ElementType type, const void* data, std::size_t count);

struct ElementCounts {
  std::uint64_t mismatches = 0;  // elements whose bits differ from the first result
  std::uint64_t nan_count = 0;   // in `result`
  std::uint64_t inf_count = 0;
};

// What the GPU's check kernel computes, on the host: `result` against `first`, bit for bit.
ElementCounts compare_results(ElementType type, const void* result, const void* first,
                              std::size_t count);

// The limit of check 3 for a precision (0 for int8: exact).
double reference_tolerance(Precision precision);

// A panel of an operand copied back from the GPU and decoded: element (i, l) — row i of op(A)
// or column i of op(B), position l along k — is data[i * stride_index + l * stride_k].
struct OperandView {
  const double* data = nullptr;
  std::size_t stride_index = 0;
  std::size_t stride_k = 0;
  double at(std::size_t i, std::size_t l) const { return data[i * stride_index + l * stride_k]; }
};

// ref(i, j) = scale * sum_l a(i, l) * b(j, l), for i, j < tile; column-major (ref[j*tile + i]),
// like the C tile copied back. fp64 accumulation.
std::vector<double> reference_tile(const OperandView& a, const OperandView& b, int tile, int k,
                                   double scale);

struct TileCheck {
  double max_error = 0;  // largest normalized error (absolute for int8); +inf for a NaN/Inf
  double tolerance = 0;
  bool ok = true;
};

// Check 3 for one tile: `result` and `reference` have the same length and order.
TileCheck check_tile(Precision precision, const std::vector<double>& result,
                     const std::vector<double>& reference);

}  // namespace gpuscope::capability::detail
