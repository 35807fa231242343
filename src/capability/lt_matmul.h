// One square GEMM of a precision through cuBLASLt: descriptors, heuristic candidates, launch.
// D = scale_a * scale_b * op(A) op(B) with beta = 0 and C = D (one output buffer); all
// matrices n x n, column-major, leading dimension n.
#pragma once

#include <cublasLt.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <vector>

#include "capability/cuda_raii.h"
#include "capability/gemm_spec.h"
#include "gpuscope/capability.h"

namespace gpuscope::capability::detail {

class LtMatmul {
 public:
  LtMatmul() = default;  // empty: create() makes a usable one
  // a_scale / b_scale: device pointers to one float each, used for fp8 only (may be null else).
  static Result<LtMatmul> create(cublasLtHandle_t handle, const GemmSpec& spec, int n,
                                 const float* a_scale, const float* b_scale);

  // Up to `count` algorithms cuBLASLt proposes within `workspace_bytes`, best guess first.
  // Fails with not_supported when it proposes none.
  Result<std::vector<cublasLtMatmulHeuristicResult_t>> heuristics(std::uint64_t workspace_bytes,
                                                                  int count) const;

  // Enqueues one GEMM on `stream`.
  Status run(const cublasLtMatmulAlgo_t& algo, const void* a, const void* b, void* d,
             void* workspace, std::size_t workspace_bytes, cudaStream_t stream) const;

  const GemmSpec& spec() const { return *spec_; }

 private:
  cublasLtHandle_t handle_ = nullptr;
  const GemmSpec* spec_ = nullptr;
  LtMatmulDesc desc_;
  LtLayout a_layout_;
  LtLayout b_layout_;
  LtLayout c_layout_;
  alignas(8) unsigned char alpha_[8] = {};  // in the scale type: double, float or int32
  alignas(8) unsigned char beta_[8] = {};
};

// The configuration attributes of an algorithm (the fields of GemmAlgorithm it can fill).
GemmAlgorithm describe_algorithm(const cublasLtMatmulAlgo_t& algo);

}  // namespace gpuscope::capability::detail
