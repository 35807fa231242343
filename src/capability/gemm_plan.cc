#include "capability/gemm_plan.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace gpuscope::capability::detail {

namespace {
constexpr int kMaxSets = 64;
constexpr int kMaxSlots = 16;
constexpr double kGroupFlop = 1e12;
}  // namespace

Result<GemmMemoryPlan> plan_gemm_memory(const GemmSpec& spec, int n, std::uint64_t l2_bytes,
                                        std::uint64_t budget_bytes, std::uint64_t fixed_bytes) {
  const auto elements = static_cast<std::uint64_t>(n) * static_cast<std::uint64_t>(n);
  GemmMemoryPlan plan;
  plan.operand_bytes = elements * element_bytes(spec.input);
  plan.result_bytes = elements * element_bytes(spec.output);
  const std::uint64_t set_inputs = 2 * plan.operand_bytes;
  const std::uint64_t set_bytes = set_inputs + plan.result_bytes;

  const double wanted_sets = std::ceil(3.0 * static_cast<double>(l2_bytes) /
                                       static_cast<double>(std::max<std::uint64_t>(set_inputs, 1)));
  plan.input_sets = static_cast<int>(std::clamp(wanted_sets, 2.0, static_cast<double>(kMaxSets)));
  const double flop = 2.0 * static_cast<double>(n) * static_cast<double>(n) * n;
  plan.work_slots = static_cast<int>(
      std::clamp(std::ceil(kGroupFlop / flop), 1.0, static_cast<double>(kMaxSlots)));

  auto total = [&] {
    return static_cast<std::uint64_t>(plan.input_sets) * set_bytes +
           static_cast<std::uint64_t>(plan.work_slots) * plan.result_bytes + fixed_bytes;
  };
  while (total() > budget_bytes) {
    if (plan.work_slots > 1) {
      --plan.work_slots;
    } else if (plan.input_sets > 1) {
      --plan.input_sets;
    } else {
      return Status(
          Code::out_of_memory,
          fmt::format("{} GEMM n={} needs {:.2f} GiB, {:.2f} GiB allowed",
                      precision_name(spec.precision), n, static_cast<double>(total()) / (1u << 30),
                      static_cast<double>(budget_bytes) / (1u << 30)));
    }
  }
  plan.total_bytes = total();
  return plan;
}

}  // namespace gpuscope::capability::detail
