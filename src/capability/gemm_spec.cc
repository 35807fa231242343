#include "capability/gemm_spec.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuscope::capability::detail {

std::size_t element_bytes(ElementType type) {
  switch (type) {
    case ElementType::f64:
      return 8;
    case ElementType::f32:
      return 4;
    case ElementType::f16:
      return 2;
    case ElementType::bf16:
      return 2;
    case ElementType::e4m3:
      return 1;
    case ElementType::i8:
      return 1;
    case ElementType::i32:
      return 4;
  }
  return 0;
}

std::string_view element_type_name(ElementType type) {
  switch (type) {
    case ElementType::f64:
      return "f64";
    case ElementType::f32:
      return "f32";
    case ElementType::f16:
      return "f16";
    case ElementType::bf16:
      return "bf16";
    case ElementType::e4m3:
      return "e4m3";
    case ElementType::i8:
      return "i8";
    case ElementType::i32:
      return "i32";
  }
  return "unknown";
}

namespace {

// fp64 runs on any supported device (tensor-core DMMA from cc 8.0); tf32, bf16 and IMMA need
// Ampere (cc 8.0, the oldest architecture this project builds for); fp8 needs Ada (8.9) or
// Hopper (9.0).
constexpr GemmSpec kSpecs[] = {
    {Precision::fp64, ElementType::f64, ElementType::f64, false, "CUBLAS_COMPUTE_64F", 1, 1, 8, 0},
    {Precision::fp32, ElementType::f32, ElementType::f32, false, "CUBLAS_COMPUTE_32F", 1, 1, 8, 0},
    {Precision::tf32, ElementType::f32, ElementType::f32, false, "CUBLAS_COMPUTE_32F_FAST_TF32", 1,
     1, 8, 0},
    {Precision::fp16, ElementType::f16, ElementType::f16, false, "CUBLAS_COMPUTE_32F", 1, 1, 8, 0},
    {Precision::bf16, ElementType::bf16, ElementType::bf16, false, "CUBLAS_COMPUTE_32F", 1, 1, 8,
     0},
    {Precision::fp8, ElementType::e4m3, ElementType::bf16, true, "CUBLAS_COMPUTE_32F", 0.5f, 0.25f,
     8, 9},
    {Precision::int8, ElementType::i8, ElementType::i32, true, "CUBLAS_COMPUTE_32I", 1, 1, 8, 0},
};

}  // namespace

const GemmSpec& gemm_spec(Precision precision) {
  for (const GemmSpec& spec : kSpecs) {
    if (spec.precision == precision) return spec;
  }
  return kSpecs[0];  // unreachable: every Precision has a row
}

double input_range(const GemmSpec& spec, int n) {
  if (spec.input == ElementType::i8) {
    const double limit = std::floor(std::sqrt(static_cast<double>(1u << 30) / std::max(n, 1)));
    return std::clamp(limit, 1.0, 127.0);
  }
  // e4m3 holds +-448; 2 keeps products small and still uses many distinct values.
  if (spec.input == ElementType::e4m3) return 2.0;
  return 1.0;
}

PrecisionSupport precision_support_for(Precision precision, int cc_major, int cc_minor) {
  const GemmSpec& spec = gemm_spec(precision);
  PrecisionSupport support;
  support.precision = precision;
  const bool new_enough = cc_major > spec.min_cc_major ||
                          (cc_major == spec.min_cc_major && cc_minor >= spec.min_cc_minor);
  support.supported = new_enough;
  if (!new_enough) {
    support.reason = fmt::format("{} needs compute capability {}.{} or newer; this device is {}.{}",
                                 precision_name(precision), spec.min_cc_major, spec.min_cc_minor,
                                 cc_major, cc_minor);
  }
  return support;
}

}  // namespace gpuscope::capability::detail
