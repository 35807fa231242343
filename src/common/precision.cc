#include "gpuscope/precision.h"

#include "common/enum_names.h"

namespace gpuscope {
namespace {

constexpr detail::EnumName<Precision> kPrecisionNames[] = {
    {Precision::fp64, "fp64"}, {Precision::fp32, "fp32"}, {Precision::tf32, "tf32"},
    {Precision::fp16, "fp16"}, {Precision::bf16, "bf16"}, {Precision::fp8, "fp8"},
    {Precision::int8, "int8"}};
static_assert(detail::names_every_value(kPrecisionNames, Precision::int8));

}  // namespace

std::string_view precision_name(Precision p) {
  return detail::name_in(kPrecisionNames, p);
}

std::string_view rate_unit(Precision p) {
  return p == Precision::int8 ? "OP/s" : "FLOP/s";
}

std::string_view rate_unit(std::string_view precision) {
  const std::optional<Precision> p = parse_precision(precision);
  return p ? rate_unit(*p) : "FLOP/s";
}

std::optional<Precision> parse_precision(std::string_view name) {
  return detail::value_named(kPrecisionNames, name);
}

}  // namespace gpuscope
