// Lookup of the datasheet table by NVML name and memory size, and the estimate for GPUs the
// table lacks.
#include "gpuscope/datasheet.h"

#include <fmt/format.h>

#include <cctype>

namespace gpuscope {
namespace {

using P = Precision;

// Reported memory may sit below the nominal size (ECC on GDDR, driver reservations) or a little
// above it (physical HBM stacks behind a marketing size like "141GB").
constexpr double kMemoryLowRatio = 0.85;
constexpr double kMemoryHighRatio = 1.08;
constexpr double kBytesPerGib = 1024.0 * 1024.0 * 1024.0;

// Dense FLOP per clock per SM of one architecture, derived from the datasheet rows: e.g. H100
// SXM5 989.4e12 / (132 SMs x 1830 MHz) = 4096 fp16; A100 312e12 / (108 x 1410 MHz) = 2048;
// A10 125e12 / (72 x 1695 MHz) = 1024; L4 121e12 / (58 x 2040 MHz) = 1024; V100 SXM2 125e12 /
// (80 x 1530 MHz) = 1024; T4 65e12 / (40 x 1590 MHz) = 1024.
struct Architecture {
  int cc_major;
  int cc_minor;
  std::string_view name;
  // Full-rate (datacenter/professional) path; absent precision = no such hardware path.
  std::map<Precision, double> flop_per_clock_per_sm;
  // GeForce parts of this architecture run tf32/fp16/bf16/fp8 with FP32 accumulate at half rate.
  bool geforce_half_rate = false;
  // Datasheets rate tensor-core math at this fraction of the max SM clock (Hopper: 1830 of
  // 1980 MHz on SXM5, about 1620 of 1755 MHz on PCIe); FP32/FP64 use the full clock.
  double tensor_clock_ratio = 1.0;
  std::string_view fp64_path;
};

const std::vector<Architecture>& architectures() {
  static const std::vector<Architecture> archs = {
      {.cc_major = 7,
       .cc_minor = 0,
       .name = "Volta",
       .flop_per_clock_per_sm = {{P::fp64, 64}, {P::fp32, 128}, {P::fp16, 1024}},
       .fp64_path = "vector FP64"},
      {.cc_major = 7,
       .cc_minor = 5,
       .name = "Turing",
       .flop_per_clock_per_sm = {{P::fp64, 4}, {P::fp32, 128}, {P::fp16, 1024}, {P::int8, 2048}},
       .geforce_half_rate = true,
       .fp64_path = "vector FP64 (1/32 of FP32)"},
      {.cc_major = 8,
       .cc_minor = 0,
       .name = "Ampere GA100",
       .flop_per_clock_per_sm = {{P::fp64, 128},
                                 {P::fp32, 128},
                                 {P::tf32, 1024},
                                 {P::fp16, 2048},
                                 {P::bf16, 2048},
                                 {P::int8, 4096}},
       .fp64_path = "FP64 Tensor Core"},
      {.cc_major = 8,
       .cc_minor = 6,
       .name = "Ampere GA10x",
       .flop_per_clock_per_sm = {{P::fp64, 4},
                                 {P::fp32, 256},
                                 {P::tf32, 512},
                                 {P::fp16, 1024},
                                 {P::bf16, 1024},
                                 {P::int8, 2048}},
       .geforce_half_rate = true,
       .fp64_path = "vector FP64 (1/64 of FP32)"},
      {.cc_major = 8,
       .cc_minor = 9,
       .name = "Ada",
       .flop_per_clock_per_sm = {{P::fp64, 4},
                                 {P::fp32, 256},
                                 {P::tf32, 512},
                                 {P::fp16, 1024},
                                 {P::bf16, 1024},
                                 {P::fp8, 2048},
                                 {P::int8, 2048}},
       .geforce_half_rate = true,
       .fp64_path = "vector FP64 (1/64 of FP32)"},
      {.cc_major = 9,
       .cc_minor = 0,
       .name = "Hopper",
       .flop_per_clock_per_sm = {{P::fp64, 256},
                                 {P::fp32, 256},
                                 {P::tf32, 2048},
                                 {P::fp16, 4096},
                                 {P::bf16, 4096},
                                 {P::fp8, 8192},
                                 {P::int8, 8192}},
       .tensor_clock_ratio = 1830.0 / 1980.0,
       .fp64_path = "FP64 Tensor Core"},
  };
  return archs;
}

const Architecture* find_architecture(int cc_major, int cc_minor) {
  for (const Architecture& arch : architectures()) {
    if (arch.cc_major == cc_major && arch.cc_minor == cc_minor) return &arch;
  }
  return nullptr;
}

bool is_tensor_precision(Precision p) {
  return p == P::tf32 || p == P::fp16 || p == P::bf16 || p == P::fp8 || p == P::int8;
}

// The tensor paths GeForce halves: those with an FP32 accumulator (int8 accumulates in int32).
bool is_fp32_accumulate_tensor_precision(Precision p) {
  return p == P::tf32 || p == P::fp16 || p == P::bf16 || p == P::fp8;
}

bool has_word(std::string_view normalized, std::string_view word) {
  std::size_t start = 0;
  while (start <= normalized.size()) {
    std::size_t end = normalized.find(' ', start);
    if (end == std::string_view::npos) end = normalized.size();
    if (normalized.substr(start, end - start) == word) return true;
    start = end + 1;
  }
  return false;
}

bool memory_agrees(const detail::DatasheetRow& row, const GpuDescription& gpu) {
  if (!gpu.memory_total_bytes || row.memory_gib <= 0) return true;
  const double gib = static_cast<double>(*gpu.memory_total_bytes) / kBytesPerGib;
  return gib >= row.memory_gib * kMemoryLowRatio && gib <= row.memory_gib * kMemoryHighRatio;
}

bool name_matches(const detail::DatasheetRow& row, std::string_view normalized) {
  for (std::string_view alias : row.nvml_names) {
    if (detail::normalize_gpu_name(alias) == normalized) return true;
  }
  return false;
}

std::string model_name(std::string_view nvml_name) {
  constexpr std::string_view kPrefix = "NVIDIA ";
  if (nvml_name.substr(0, kPrefix.size()) == kPrefix) nvml_name.remove_prefix(kPrefix.size());
  return std::string(nvml_name);
}

std::string describe_rates(const std::map<Precision, double>& per_sm) {
  std::string out;
  for (const auto& [precision, flop] : per_sm) {
    if (!out.empty()) out += ", ";
    out += fmt::format("{} {}", precision_name(precision), flop);
  }
  return out;
}

}  // namespace

namespace detail {

std::string normalize_gpu_name(std::string_view nvml_name) {
  std::string out;
  out.reserve(nvml_name.size());
  for (char c : nvml_name) {
    const auto u = static_cast<unsigned char>(c);
    const bool space = std::isspace(u) != 0 || c == '-' || c == '_';
    if (space) {
      if (!out.empty() && out.back() != ' ') out += ' ';
    } else {
      out += static_cast<char>(std::toupper(u));
    }
  }
  if (!out.empty() && out.back() == ' ') out.pop_back();
  for (std::string_view prefix : {std::string_view("NVIDIA "), std::string_view("TESLA ")}) {
    if (out.starts_with(prefix)) out.erase(0, prefix.size());
  }
  return out;
}

}  // namespace detail

const std::vector<PeakRates>& datasheet_table() {
  static const std::vector<PeakRates> table = [] {
    std::vector<PeakRates> out;
    for (const detail::DatasheetRow& row : detail::datasheet_rows()) out.push_back(row.rates);
    return out;
  }();
  return table;
}

std::optional<PeakRates> find_datasheet(const GpuDescription& gpu) {
  const std::string normalized = detail::normalize_gpu_name(gpu.nvml_name);
  if (normalized.empty() || has_word(normalized, "MIG")) return std::nullopt;

  const detail::DatasheetRow* found = nullptr;
  for (const detail::DatasheetRow& row : detail::datasheet_rows()) {
    if (!name_matches(row, normalized) || !memory_agrees(row, gpu)) continue;
    if (found != nullptr) return std::nullopt;  // ambiguous: two models fit
    found = &row;
  }
  if (found == nullptr) return std::nullopt;
  return found->rates;
}

Result<PeakRates> estimate_peak(const GpuDescription& gpu) {
  std::string missing;
  auto need = [&missing](bool present, std::string_view what) {
    if (present) return;
    if (!missing.empty()) missing += ", ";
    missing += what;
  };
  need(gpu.cc_major.has_value() && gpu.cc_minor.has_value(), "compute capability");
  need(gpu.sm_count.has_value(), "SM count");
  need(gpu.max_sm_clock_mhz.has_value(), "max SM clock");
  if (!missing.empty()) {
    return Status(Code::not_supported, fmt::format("cannot estimate peak rates of '{}': {} unknown",
                                                   gpu.nvml_name, missing));
  }
  if (*gpu.sm_count <= 0 || *gpu.max_sm_clock_mhz == 0) {
    return Status(Code::invalid_argument,
                  fmt::format("cannot estimate peak rates of '{}': SM count {} and max SM clock "
                              "{} MHz must be positive",
                              gpu.nvml_name, *gpu.sm_count, *gpu.max_sm_clock_mhz));
  }
  const Architecture* arch = find_architecture(*gpu.cc_major, *gpu.cc_minor);
  if (arch == nullptr) {
    return Status(Code::not_supported,
                  fmt::format("cannot estimate peak rates of '{}': compute capability {}.{} has "
                              "no per-SM rates in the table",
                              gpu.nvml_name, *gpu.cc_major, *gpu.cc_minor));
  }

  const bool geforce =
      arch->geforce_half_rate && has_word(detail::normalize_gpu_name(gpu.nvml_name), "GEFORCE");
  const double clock_hz = static_cast<double>(*gpu.max_sm_clock_mhz) * 1e6;
  const double sms = static_cast<double>(*gpu.sm_count);

  PeakRates peak;
  peak.model = model_name(gpu.nvml_name);
  peak.estimated = true;
  std::map<Precision, double> per_sm = arch->flop_per_clock_per_sm;
  for (auto& [precision, flop] : per_sm) {
    if (geforce && is_fp32_accumulate_tensor_precision(precision)) flop /= 2;
    const double ratio = is_tensor_precision(precision) ? arch->tensor_clock_ratio : 1.0;
    peak.flops_per_s[precision] = sms * flop * clock_hz * ratio;
  }

  peak.source = fmt::format(
      "estimate: {} SMs x {} MHz max SM clock x {} dense FLOP/clock/SM ({}{})", *gpu.sm_count,
      *gpu.max_sm_clock_mhz, arch->name, describe_rates(per_sm),
      arch->tensor_clock_ratio != 1.0
          ? fmt::format("; tensor rates x {:.3f} of the clock", arch->tensor_clock_ratio)
          : std::string());
  if (gpu.max_mem_clock_mhz && gpu.memory_bus_width_bits && *gpu.max_mem_clock_mhz > 0 &&
      *gpu.memory_bus_width_bits > 0) {
    peak.memory_bandwidth_bytes_per_s = 2.0 * static_cast<double>(*gpu.max_mem_clock_mhz) * 1e6 *
                                        static_cast<double>(*gpu.memory_bus_width_bits) / 8.0;
    peak.source += fmt::format("; bandwidth = 2 x {} MHz max memory clock x {} bits / 8",
                               *gpu.max_mem_clock_mhz, *gpu.memory_bus_width_bits);
  }

  std::string notes = fmt::format("not a datasheet figure; fp64 = {}", arch->fp64_path);
  if (arch->tensor_clock_ratio != 1.0) {
    notes += "; tensor rates at the fraction of max clock NVIDIA's datasheets use";
  }
  if (geforce) {
    notes +=
        "; GeForce: tf32/fp16/bf16/fp8 at the half-rate FP32-accumulate path; NVML's max SM "
        "clock on GeForce is the top of the boost curve, above the rated boost clock, so these "
        "can read ~20-25% high";
  } else if (arch->geforce_half_rate) {
    notes +=
        "; assumes full-rate FP32 accumulate as on datacenter/professional cards (not true of "
        "all: the L40 is half-rate)";
  }
  if (arch->cc_major == 7 && arch->cc_minor == 0) notes += "; no int8 tensor path on Volta";
  peak.notes = std::move(notes);
  return peak;
}

Result<PeakRates> peak_rates_for(const GpuDescription& gpu) {
  if (std::optional<PeakRates> found = find_datasheet(gpu)) return std::move(*found);
  return estimate_peak(gpu);
}

std::optional<double> peak_flops(const PeakRates& rates, Precision precision) {
  auto it = rates.flops_per_s.find(precision);
  if (it == rates.flops_per_s.end()) return std::nullopt;
  return it->second;
}

}  // namespace gpuscope
