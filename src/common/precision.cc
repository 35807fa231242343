#include "gpuscope/precision.h"

namespace gpuscope {

std::string_view precision_name(Precision p) {
  switch (p) {
    case Precision::fp64:
      return "fp64";
    case Precision::fp32:
      return "fp32";
    case Precision::tf32:
      return "tf32";
    case Precision::fp16:
      return "fp16";
    case Precision::bf16:
      return "bf16";
    case Precision::fp8:
      return "fp8";
    case Precision::int8:
      return "int8";
  }
  return "unknown";
}

std::string_view rate_unit(Precision p) {
  return p == Precision::int8 ? "OP/s" : "FLOP/s";
}

std::string_view rate_unit(std::string_view precision) {
  const std::optional<Precision> p = parse_precision(precision);
  return p ? rate_unit(*p) : "FLOP/s";
}

std::optional<Precision> parse_precision(std::string_view name) {
  for (Precision p : kAllPrecisions) {
    if (precision_name(p) == name) return p;
  }
  return std::nullopt;
}

}  // namespace gpuscope
