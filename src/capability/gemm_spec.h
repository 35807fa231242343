// What each precision's GEMM is made of: element types, layout, input range, fp8 scales, the
// device generation it needs. Plain data, no vendor types: the cuBLASLt adapter (lt_matmul.h)
// maps it to cudaDataType_t and cublasComputeType_t.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "gpuscope/capability.h"
#include "gpuscope/precision.h"

namespace gpuscope::capability::detail {

// Storage types of GEMM operands and results.
enum class ElementType { f64, f32, f16, bf16, e4m3, i8, i32 };

std::size_t element_bytes(ElementType type);
std::string_view element_type_name(ElementType type);

struct GemmSpec {
  Precision precision = Precision::fp32;
  ElementType input = ElementType::f32;   // A and B
  ElementType output = ElementType::f32;  // C and D (the same buffer; beta = 0)
  // TN (op(A) = A^T) where the tensor-core path requires it (fp8, int8 IMMA); NN otherwise,
  // as torch.matmul calls cuBLAS for row-major operands.
  bool transpose_a = false;
  std::string_view compute_type;  // cublasComputeType_t's name, for reports
  // fp8 only: the per-tensor scales cuBLASLt applies (D = a_scale * b_scale * A B). Not 1, so
  // that a kernel ignoring them is caught by the reference check.
  float a_scale = 1;
  float b_scale = 1;
  int min_cc_major = 8;  // the device generation this precision needs
  int min_cc_minor = 0;
};

const GemmSpec& gemm_spec(Precision precision);

// Inputs are uniform in [-range, range] (integers for int8). For int8 the range keeps every
// int32 sum of n products of magnitude range^2 below 2^30, so it cannot overflow.
double input_range(const GemmSpec& spec, int n);

// A precision's support on a device of compute capability major.minor.
PrecisionSupport precision_support_for(Precision precision, int cc_major, int cc_minor);

}  // namespace gpuscope::capability::detail
