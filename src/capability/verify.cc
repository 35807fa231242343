#include "capability/verify.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>

namespace gpuscope::capability::detail {

namespace {

template <typename T>
T load(const void* data, std::size_t index) {
  T value;
  std::memcpy(&value, static_cast<const unsigned char*>(data) + index * sizeof(T), sizeof(T));
  return value;
}

// Generic binary decoding: sign, exponent field, mantissa field, bias; `ieee_specials` means an
// all-ones exponent encodes Inf/NaN.
double decode_binary(std::uint32_t bits, int exponent_bits, int mantissa_bits, int bias) {
  const std::uint32_t mantissa_mask = (1u << mantissa_bits) - 1;
  const std::uint32_t exponent_mask = (1u << exponent_bits) - 1;
  const bool negative = (bits >> (exponent_bits + mantissa_bits)) & 1u;
  const std::uint32_t exponent = (bits >> mantissa_bits) & exponent_mask;
  const std::uint32_t mantissa = bits & mantissa_mask;
  double magnitude;
  if (exponent == 0) {
    magnitude = std::ldexp(static_cast<double>(mantissa), 1 - bias - mantissa_bits);
  } else {
    magnitude = std::ldexp(static_cast<double>(mantissa | (1u << mantissa_bits)),
                           static_cast<int>(exponent) - bias - mantissa_bits);
  }
  return negative ? -magnitude : magnitude;
}

double decode_ieee_narrow(std::uint32_t bits, int exponent_bits, int mantissa_bits, int bias) {
  const std::uint32_t exponent_mask = (1u << exponent_bits) - 1;
  const std::uint32_t exponent = (bits >> mantissa_bits) & exponent_mask;
  if (exponent == exponent_mask) {
    const bool negative = (bits >> (exponent_bits + mantissa_bits)) & 1u;
    if ((bits & ((1u << mantissa_bits) - 1)) != 0) return std::numeric_limits<double>::quiet_NaN();
    return negative ? -std::numeric_limits<double>::infinity()
                    : std::numeric_limits<double>::infinity();
  }
  return decode_binary(bits, exponent_bits, mantissa_bits, bias);
}

struct Classes {
  bool nan = false;
  bool inf = false;
};

Classes classify(ElementType type, const void* data, std::size_t index) {
  switch (type) {
    case ElementType::f64: {
      const double v = load<double>(data, index);
      return {std::isnan(v), std::isinf(v)};
    }
    case ElementType::f32: {
      const float v = load<float>(data, index);
      return {std::isnan(v), std::isinf(v)};
    }
    case ElementType::f16:
    case ElementType::bf16:
    case ElementType::e4m3: {
      const double v = decode_element(type, data, index);
      return {std::isnan(v), std::isinf(v)};
    }
    case ElementType::i8:
    case ElementType::i32:
      return {};
  }
  return {};
}

}  // namespace

double half_to_double(std::uint16_t bits) {
  return decode_ieee_narrow(bits, 5, 10, 15);
}

double bfloat16_to_double(std::uint16_t bits) {
  return decode_ieee_narrow(bits, 8, 7, 127);
}

double e4m3_to_double(std::uint8_t bits) {
  if ((bits & 0x7f) == 0x7f) return std::numeric_limits<double>::quiet_NaN();
  return decode_binary(bits, 4, 3, 7);
}

double decode_element(ElementType type, const void* data, std::size_t index) {
  switch (type) {
    case ElementType::f64:
      return load<double>(data, index);
    case ElementType::f32:
      return load<float>(data, index);
    case ElementType::f16:
      return half_to_double(load<std::uint16_t>(data, index));
    case ElementType::bf16:
      return bfloat16_to_double(load<std::uint16_t>(data, index));
    case ElementType::e4m3:
      return e4m3_to_double(load<std::uint8_t>(data, index));
    case ElementType::i8:
      return load<std::int8_t>(data, index);
    case ElementType::i32:
      return load<std::int32_t>(data, index);
  }
  return std::numeric_limits<double>::quiet_NaN();
}

std::vector<double> decode_elements(ElementType type, const void* data, std::size_t count) {
  std::vector<double> values(count);
  for (std::size_t i = 0; i < count; ++i) values[i] = decode_element(type, data, i);
  return values;
}

ElementCounts compare_results(ElementType type, const void* result, const void* first,
                              std::size_t count) {
  const std::size_t bytes = element_bytes(type);
  const auto* r = static_cast<const unsigned char*>(result);
  const auto* f = static_cast<const unsigned char*>(first);
  ElementCounts counts;
  for (std::size_t i = 0; i < count; ++i) {
    if (std::memcmp(r + i * bytes, f + i * bytes, bytes) != 0) ++counts.mismatches;
    const Classes c = classify(type, result, i);
    counts.nan_count += c.nan;
    counts.inf_count += c.inf;
  }
  return counts;
}

double reference_tolerance(Precision precision) {
  switch (precision) {
    case Precision::fp64:
      return 1e-12;
    case Precision::fp32:
      return 1e-4;
    case Precision::tf32:
      return 1e-2;
    case Precision::fp16:
      return 1e-2;
    case Precision::bf16:
      return 1e-2;
    case Precision::fp8:
      return 2e-2;
    case Precision::int8:
      return 0;
  }
  return 0;
}

std::vector<double> reference_tile(const OperandView& a, const OperandView& b, int tile, int k,
                                   double scale) {
  const auto t = static_cast<std::size_t>(tile);
  std::vector<double> ref(t * t);
  for (std::size_t j = 0; j < t; ++j) {
    for (std::size_t i = 0; i < t; ++i) {
      double sum = 0;
      for (std::size_t l = 0; l < static_cast<std::size_t>(k); ++l) sum += a.at(i, l) * b.at(j, l);
      ref[j * t + i] = scale * sum;
    }
  }
  return ref;
}

TileCheck check_tile(Precision precision, const std::vector<double>& result,
                     const std::vector<double>& reference) {
  TileCheck check;
  check.tolerance = reference_tolerance(precision);
  if (result.size() != reference.size() || result.empty()) {
    check.max_error = std::numeric_limits<double>::infinity();
    check.ok = false;
    return check;
  }
  const bool exact = precision == Precision::int8;
  double sum_squares = 0;
  for (double r : reference) sum_squares += r * r;
  const double rms = std::sqrt(sum_squares / static_cast<double>(reference.size()));
  for (std::size_t i = 0; i < result.size(); ++i) {
    const double diff = std::fabs(result[i] - reference[i]);
    double error;
    if (!std::isfinite(result[i])) {
      error = std::numeric_limits<double>::infinity();
    } else if (exact) {
      error = diff;
    } else {
      const double scale = std::max({std::fabs(reference[i]), rms, 1e-300});
      error = diff / scale;
    }
    check.max_error = std::max(check.max_error, error);
  }
  check.ok = check.max_error <= check.tolerance;
  return check;
}

}  // namespace gpuscope::capability::detail
