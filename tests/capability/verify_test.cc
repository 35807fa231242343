// Burn's verification math: format decoding, the bit-for-bit comparison (with an injected
// corrupted element), NaN/Inf counting, the fp64 reference and the tolerances.
#include "capability/verify.h"

#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <random>
#include <vector>

namespace gpuscope::capability::detail {
namespace {

// Round-to-nearest-even float -> bfloat16 / half bits, as the GPU stores results.
std::uint16_t to_bfloat16(float f) {
  const auto bits = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t rounding = 0x7FFF + ((bits >> 16) & 1);
  return static_cast<std::uint16_t>((bits + rounding) >> 16);
}

std::uint16_t to_half(float f) {
  // Exact for the normal range used here; rounds to nearest even.
  const auto bits = std::bit_cast<std::uint32_t>(f);
  const std::uint32_t sign = (bits >> 16) & 0x8000;
  const int exponent = static_cast<int>((bits >> 23) & 0xFF) - 127 + 15;
  std::uint32_t mantissa = bits & 0x7FFFFF;
  if (exponent <= 0 || exponent >= 31) return static_cast<std::uint16_t>(sign);  // not used
  std::uint32_t h = (static_cast<std::uint32_t>(exponent) << 10) | (mantissa >> 13);
  const std::uint32_t rest = mantissa & 0x1FFF;
  if (rest > 0x1000 || (rest == 0x1000 && (h & 1))) ++h;
  return static_cast<std::uint16_t>(sign | h);
}

TEST(VerifyDecode, HalfValues) {
  EXPECT_EQ(half_to_double(0x3C00), 1.0);
  EXPECT_EQ(half_to_double(0xC000), -2.0);
  EXPECT_EQ(half_to_double(0x7BFF), 65504.0);
  EXPECT_EQ(half_to_double(0x0001), std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_TRUE(std::isinf(half_to_double(0x7C00)));
  EXPECT_TRUE(std::isnan(half_to_double(0x7E00)));
}

TEST(VerifyDecode, Bfloat16Values) {
  EXPECT_EQ(bfloat16_to_double(0x3F80), 1.0);
  EXPECT_EQ(bfloat16_to_double(0xC0A0), -5.0);
  EXPECT_TRUE(std::isinf(bfloat16_to_double(0xFF80)));
  EXPECT_TRUE(std::isnan(bfloat16_to_double(0x7FC0)));
}

TEST(VerifyDecode, E4m3Values) {
  EXPECT_EQ(e4m3_to_double(0x38), 1.0);    // exponent 7 = bias
  EXPECT_EQ(e4m3_to_double(0x7E), 448.0);  // largest finite
  EXPECT_EQ(e4m3_to_double(0xC0), -2.0);
  EXPECT_EQ(e4m3_to_double(0x01), std::ldexp(1.0, -9));  // smallest subnormal
  EXPECT_TRUE(std::isnan(e4m3_to_double(0x7F)));
  EXPECT_TRUE(std::isnan(e4m3_to_double(0xFF)));
}

TEST(VerifyDecode, IntegersAndWideFloats) {
  const std::int8_t i8[] = {-128, 127};
  EXPECT_EQ(decode_element(ElementType::i8, i8, 0), -128.0);
  EXPECT_EQ(decode_element(ElementType::i8, i8, 1), 127.0);
  const std::int32_t i32[] = {-2000000000};
  EXPECT_EQ(decode_element(ElementType::i32, i32, 0), -2e9);
  const double f64[] = {0.1};
  EXPECT_EQ(decode_element(ElementType::f64, f64, 0), 0.1);
}

// Check 1: the same product computed again must be bit-identical; one flipped bit anywhere is
// found, in every output type.
TEST(VerifyCompare, InjectedCorruptedElementIsDetected) {
  for (ElementType type : {ElementType::f64, ElementType::f32, ElementType::f16, ElementType::bf16,
                           ElementType::i32}) {
    SCOPED_TRACE(std::string(element_type_name(type)));
    const std::size_t count = 4096;
    const std::size_t bytes = element_bytes(type);
    std::vector<unsigned char> first(count * bytes);
    std::mt19937 rng(7);
    // Finite, non-special values: small positive integers' bit patterns in the low bytes.
    for (std::size_t i = 0; i < count; ++i) {
      const float v = static_cast<float>(rng() % 1000) / 7.0f + 1.0f;
      switch (type) {
        case ElementType::f64: {
          const double d = v;
          std::memcpy(&first[i * bytes], &d, bytes);
          break;
        }
        case ElementType::f32:
          std::memcpy(&first[i * bytes], &v, bytes);
          break;
        case ElementType::f16: {
          const std::uint16_t h = to_half(v);
          std::memcpy(&first[i * bytes], &h, bytes);
          break;
        }
        case ElementType::bf16: {
          const std::uint16_t h = to_bfloat16(v);
          std::memcpy(&first[i * bytes], &h, bytes);
          break;
        }
        default: {
          const auto n = static_cast<std::int32_t>(v * 1000);
          std::memcpy(&first[i * bytes], &n, bytes);
        }
      }
    }
    std::vector<unsigned char> again = first;
    EXPECT_EQ(compare_results(type, again.data(), first.data(), count).mismatches, 0u);

    again[1234 * bytes] ^= 1u;  // what --inject-fault does on the GPU
    const ElementCounts counts = compare_results(type, again.data(), first.data(), count);
    EXPECT_EQ(counts.mismatches, 1u);
    EXPECT_EQ(counts.nan_count, 0u);
    EXPECT_EQ(counts.inf_count, 0u);
  }
}

TEST(VerifyCompare, NanAndInfAreCounted) {
  std::vector<float> result = {1.0f, std::numeric_limits<float>::quiet_NaN(),
                               std::numeric_limits<float>::infinity(),
                               -std::numeric_limits<float>::infinity()};
  const ElementCounts counts =
      compare_results(ElementType::f32, result.data(), result.data(), result.size());
  EXPECT_EQ(counts.mismatches, 0u);
  EXPECT_EQ(counts.nan_count, 1u);
  EXPECT_EQ(counts.inf_count, 2u);

  const std::uint16_t half[] = {0x3C00, 0x7C00, 0xFE00, 0x0000};
  const ElementCounts h = compare_results(ElementType::f16, half, half, 4);
  EXPECT_EQ(h.nan_count, 1u);
  EXPECT_EQ(h.inf_count, 1u);

  const std::uint16_t bf[] = {0x7F80, 0x7FC1, 0x3F80, 0xFF80};
  const ElementCounts b = compare_results(ElementType::bf16, bf, bf, 4);
  EXPECT_EQ(b.nan_count, 1u);
  EXPECT_EQ(b.inf_count, 2u);

  const double d[] = {std::numeric_limits<double>::quiet_NaN(), 1e308};
  EXPECT_EQ(compare_results(ElementType::f64, d, d, 2).nan_count, 1u);

  // Integers have no NaN: all-ones exponent-like patterns are ordinary values.
  const std::int32_t ints[] = {0x7F800000, 0x7FC00000};
  const ElementCounts i = compare_results(ElementType::i32, ints, ints, 2);
  EXPECT_EQ(i.nan_count + i.inf_count, 0u);
}

TEST(VerifyTolerance, PerPrecision) {
  EXPECT_EQ(reference_tolerance(Precision::fp64), 1e-12);
  EXPECT_EQ(reference_tolerance(Precision::fp32), 1e-4);
  EXPECT_EQ(reference_tolerance(Precision::tf32), 1e-2);
  EXPECT_EQ(reference_tolerance(Precision::fp16), 1e-2);
  EXPECT_EQ(reference_tolerance(Precision::bf16), 1e-2);
  EXPECT_EQ(reference_tolerance(Precision::fp8), 2e-2);
  EXPECT_EQ(reference_tolerance(Precision::int8), 0.0);
}

TEST(VerifyReference, SmallProductAndLayouts) {
  // op(A) rows 2 x k=3 stored "NN style" (stride_index 1, stride_k 2) and op(B) columns.
  const double a[] = {1, 4, 2, 5, 3, 6};  // a(0,:) = 1 2 3, a(1,:) = 4 5 6
  const double b[] = {1, 0, 1, 2, 1, 0};  // b(col 0,:) = 1 0 1, b(col 1,:) = 2 1 0
  const OperandView av{a, 1, 2};
  const OperandView bv{b, 3, 1};
  const std::vector<double> ref = reference_tile(av, bv, 2, 3, 0.5);
  // Column-major: ref[j*2 + i].
  EXPECT_EQ(ref[0], 0.5 * (1 + 3));
  EXPECT_EQ(ref[1], 0.5 * (4 + 6));
  EXPECT_EQ(ref[2], 0.5 * (2 + 2));
  EXPECT_EQ(ref[3], 0.5 * (8 + 5));
}

// Two tile x k operands (rows of k values), filled in turn by `draw`.
struct Operands {
  std::size_t k;
  std::vector<double> a, b;

  Operands(int tile, int k_values, const std::function<double()>& draw)
      : k(static_cast<std::size_t>(k_values)), a(static_cast<std::size_t>(tile) * k), b(a.size()) {
    for (double& x : a) x = draw();
    for (double& x : b) x = draw();
  }
  OperandView av() const { return {a.data(), k, 1}; }
  OperandView bv() const { return {b.data(), k, 1}; }
};

// Check 3 on a realistic tile: a bf16 GEMM's rounding passes, a corrupted element fails.
TEST(VerifyReference, Bf16RoundingPassesCorruptionFails) {
  const int tile = 16;
  const int k = 8192;
  std::mt19937_64 rng(3);
  std::uniform_real_distribution<double> uniform(-1.0, 1.0);
  // Inputs are bf16 values, exactly as on the GPU.
  const Operands operands(
      tile, k, [&] { return bfloat16_to_double(to_bfloat16(static_cast<float>(uniform(rng)))); });
  const std::vector<double> ref = reference_tile(operands.av(), operands.bv(), tile, k, 1.0);

  std::vector<double> gpu(ref.size());
  for (std::size_t i = 0; i < ref.size(); ++i) {
    gpu[i] = bfloat16_to_double(to_bfloat16(static_cast<float>(ref[i])));
  }
  const TileCheck good = check_tile(Precision::bf16, gpu, ref);
  EXPECT_TRUE(good.ok) << good.max_error;
  EXPECT_GT(good.max_error, 0.0);
  EXPECT_LT(good.max_error, 4e-3);  // bf16 output rounding: at most 2^-8

  std::vector<double> corrupted = gpu;
  corrupted[77] += 0.5 * std::fabs(corrupted[77]) + 1.0;
  EXPECT_FALSE(check_tile(Precision::bf16, corrupted, ref).ok);

  std::vector<double> with_nan = gpu;
  with_nan[5] = std::numeric_limits<double>::quiet_NaN();
  const TileCheck nan_check = check_tile(Precision::bf16, with_nan, ref);
  EXPECT_FALSE(nan_check.ok);
  EXPECT_TRUE(std::isinf(nan_check.max_error));
}

TEST(VerifyReference, Fp32AccumulationErrorPassesItsTolerance) {
  const int tile = 16;
  const int k = 8192;
  std::mt19937_64 rng(11);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  const Operands operands(tile, k, [&] { return uniform(rng); });
  const OperandView av = operands.av(), bv = operands.bv();
  const std::vector<double> ref = reference_tile(av, bv, tile, k, 1.0);
  // A GPU-like fp32 result: sequential fp32 accumulation.
  std::vector<double> gpu(ref.size());
  for (int j = 0; j < tile; ++j) {
    for (int i = 0; i < tile; ++i) {
      float sum = 0;
      for (int l = 0; l < k; ++l) {
        sum = std::fma(static_cast<float>(av.at(i, l)), static_cast<float>(bv.at(j, l)), sum);
      }
      gpu[static_cast<std::size_t>(j * tile + i)] = sum;
    }
  }
  const TileCheck check = check_tile(Precision::fp32, gpu, ref);
  EXPECT_TRUE(check.ok) << check.max_error;
  // ... and would fail fp64's tolerance: the limits are not vacuous.
  EXPECT_FALSE(check_tile(Precision::fp64, gpu, ref).ok);
}

TEST(VerifyReference, Int8IsExact) {
  const std::vector<double> ref = {100, -3, 0, 524288};
  std::vector<double> got = ref;
  EXPECT_TRUE(check_tile(Precision::int8, got, ref).ok);
  got[3] += 1;
  const TileCheck off = check_tile(Precision::int8, got, ref);
  EXPECT_FALSE(off.ok);
  EXPECT_EQ(off.max_error, 1.0);
}

TEST(VerifyReference, SizeMismatchFails) {
  EXPECT_FALSE(check_tile(Precision::fp32, {1.0}, {1.0, 2.0}).ok);
}

}  // namespace
}  // namespace gpuscope::capability::detail
