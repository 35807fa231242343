// The numeric precisions gpuscope measures and compares, shared by the datasheet table, burn
// and bench.
#pragma once

#include <array>
#include <optional>
#include <string_view>

namespace gpuscope {

enum class Precision {
  fp64,  // IEEE double (DGEMM; tensor cores on A100/H100)
  fp32,  // IEEE single with TF32 off (SGEMM on CUDA cores)
  tf32,  // fp32 inputs through TF32 tensor cores
  fp16,  // half inputs, fp32 accumulate
  bf16,  // bfloat16 inputs, fp32 accumulate
  fp8,   // e4m3 inputs, fp32 accumulate (Hopper/Ada and newer)
  int8,  // int8 inputs, int32 accumulate (IMMA)
};

inline constexpr std::array<Precision, 7> kAllPrecisions = {
    Precision::fp64, Precision::fp32, Precision::tf32, Precision::fp16,
    Precision::bf16, Precision::fp8,  Precision::int8};

// "fp64", "tf32", ... (stable: used in JSON and on the command line).
std::string_view precision_name(Precision p);
std::optional<Precision> parse_precision(std::string_view name);

// The unit of a GEMM rate in this precision, for people: "OP/s" for integer precisions (int8
// counts integer operations, not floating-point ones), else "FLOP/s". Also by name ("int8").
std::string_view rate_unit(Precision p);
std::string_view rate_unit(std::string_view precision);

}  // namespace gpuscope
