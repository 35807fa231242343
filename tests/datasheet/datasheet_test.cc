#include "gpuscope/datasheet.h"

#include <gtest/gtest.h>

#include <cmath>
#include <optional>
#include <set>
#include <string>
#include <vector>

namespace gpuscope {
namespace {

constexpr double kGib = 1024.0 * 1024.0 * 1024.0;

GpuDescription named(std::string nvml_name, std::optional<double> memory_gib = std::nullopt) {
  GpuDescription gpu;
  gpu.nvml_name = std::move(nvml_name);
  if (memory_gib) gpu.memory_total_bytes = static_cast<std::uint64_t>(*memory_gib * kGib);
  return gpu;
}

std::string found_model(const GpuDescription& gpu) {
  std::optional<PeakRates> found = find_datasheet(gpu);
  return found ? found->model : std::string("<none>");
}

const PeakRates& table_entry(std::string_view model) {
  for (const PeakRates& rates : datasheet_table()) {
    if (rates.model == model) return rates;
  }
  ADD_FAILURE() << "no table entry " << model;
  static const PeakRates kEmpty;
  return kEmpty;
}

// --- Lookup ----------------------------------------------------------------------------------

struct NameCase {
  const char* nvml_name;
  std::optional<double> memory_gib;  // as NVML reports it (below nominal where ECC reserves)
  const char* model;                 // nullptr: no datasheet is found
};

// Expects each case to find its model's datasheet, or none.
void expect_found(const std::vector<NameCase>& cases) {
  for (const NameCase& c : cases) {
    const GpuDescription gpu = named(c.nvml_name, c.memory_gib);
    if (c.model == nullptr) {
      EXPECT_FALSE(find_datasheet(gpu)) << c.nvml_name;
    } else {
      EXPECT_EQ(found_model(gpu), c.model) << c.nvml_name;
    }
  }
}

TEST(FindDatasheet, FindsRealNvmlNames) {
  const NameCase cases[] = {
      {"NVIDIA H200", 140.4, "H200 SXM 141GB"},
      {"NVIDIA H200 NVL", 140.4, "H200 NVL 141GB"},
      {"NVIDIA H100 80GB HBM3", 79.6, "H100 SXM5 80GB"},
      {"NVIDIA H100 PCIe", 79.6, "H100 PCIe 80GB"},
      {"NVIDIA H100 NVL", 93.6, "H100 NVL 94GB"},
      {"NVIDIA A100-SXM4-40GB", 39.6, "A100 SXM4 40GB"},
      {"NVIDIA A100-SXM4-80GB", 80, "A100 SXM4 80GB"},
      {"NVIDIA A100-PCIE-40GB", 39.6, "A100 PCIe 40GB"},
      {"NVIDIA A100 80GB PCIe", 80, "A100 PCIe 80GB"},
      {"NVIDIA A30", 24, "A30"},
      {"NVIDIA L40S", 45, "L40S"},
      {"NVIDIA L40", 45, "L40"},
      {"NVIDIA L4", 22.5, "L4"},
      {"NVIDIA A10", 22.5, "A10"},
      {"NVIDIA A40", 45, "A40"},
      {"NVIDIA RTX A6000", 48, "RTX A6000"},
      {"NVIDIA GeForce RTX 4090", 24, "GeForce RTX 4090"},
      {"NVIDIA GeForce RTX 4080", 16, "GeForce RTX 4080 16GB"},
      {"NVIDIA GeForce RTX 3090 Ti", 24, "GeForce RTX 3090 Ti"},
      {"NVIDIA GeForce RTX 3090", 24, "GeForce RTX 3090"},
      {"NVIDIA GeForce RTX 3080", 10, "GeForce RTX 3080 10GB"},
      {"Tesla T4", 15, "T4"},
      {"Tesla V100-SXM2-32GB", 31.7, "V100 SXM2 32GB"},
      {"Tesla V100-SXM2-16GB", 15.8, "V100 SXM2 16GB"},
      {"Tesla V100-PCIE-16GB", 15.8, "V100 PCIe 16GB"},
      {"Tesla V100-PCIE-32GB", 31.7, "V100 PCIe 32GB"},
      {"Tesla V100S-PCIE-32GB", 31.7, "V100S PCIe 32GB"},
  };
  for (const NameCase& c : cases) {
    EXPECT_EQ(found_model(named(c.nvml_name, c.memory_gib)), c.model) << c.nvml_name;
    EXPECT_EQ(found_model(named(c.nvml_name)), c.model) << c.nvml_name << " without memory";
  }
}

TEST(FindDatasheet, NeverMatchesASiblingModel) {
  expect_found({
      {"NVIDIA GeForce RTX 3090 Ti", std::nullopt, "GeForce RTX 3090 Ti"},
      {"NVIDIA L40", std::nullopt, "L40"},
      {"NVIDIA L40S", std::nullopt, "L40S"},
      {"Tesla V100S-PCIE-32GB", std::nullopt, "V100S PCIe 32GB"},
      {"NVIDIA H200 NVL", std::nullopt, "H200 NVL 141GB"},
      {"NVIDIA A10G", 22.5, nullptr},
      {"NVIDIA GeForce RTX 4080 SUPER", 16, nullptr},
      {"NVIDIA GeForce RTX 3080 Ti", 12, nullptr},
      {"NVIDIA H100", std::nullopt, nullptr},
      {"NVIDIA H800", std::nullopt, nullptr},
      {"NVIDIA B200", std::nullopt, nullptr},
      {"", std::nullopt, nullptr},
  });
}

TEST(FindDatasheet, MigInstancesDoNotMatchTheWholeGpu) {
  expect_found({
      {"NVIDIA A100-SXM4-40GB MIG 3g.20gb", 19.5, nullptr},
      {"NVIDIA H100 80GB HBM3 MIG 1g.10gb", std::nullopt, nullptr},
      {"NVIDIA A100-SXM4-80GB MIG 7g.80gb", 79, nullptr},
  });
}

TEST(FindDatasheet, MemorySizeMustAgree) {
  expect_found({
      // The RTX 3080 exists with 10 GB (68 SMs) and 12 GB (70 SMs) under one NVML name.
      {"NVIDIA GeForce RTX 3080", 10, "GeForce RTX 3080 10GB"},
      {"NVIDIA GeForce RTX 3080", 12, nullptr},
      // A size that contradicts the name means some other variant: no datasheet rather than a
      // wrong one.
      {"NVIDIA H100 PCIe", 40, nullptr},
      {"NVIDIA A100-SXM4-40GB", 80, nullptr},
      // Physical HBM above the marketing size still agrees (H200: 144 GiB of stacks, "141GB").
      {"NVIDIA H200", 144, "H200 SXM 141GB"},
  });
}

TEST(FindDatasheet, NormalizesCaseSeparatorsAndPrefixes) {
  expect_found({
      {"nvidia geforce rtx 4090", std::nullopt, "GeForce RTX 4090"},
      {"  NVIDIA  GeForce   RTX 4090 ", std::nullopt, "GeForce RTX 4090"},
      {"NVIDIA A100 SXM4 40GB", std::nullopt, "A100 SXM4 40GB"},
      {"NVIDIA T4", std::nullopt, "T4"},
      {"NVIDIA Tesla V100-SXM2-16GB", std::nullopt, "V100 SXM2 16GB"},
  });
  EXPECT_EQ(detail::normalize_gpu_name("Tesla V100-SXM2-32GB"), "V100 SXM2 32GB");
  EXPECT_EQ(detail::normalize_gpu_name("NVIDIA GeForce RTX 3090 Ti"), "GEFORCE RTX 3090 TI");
  EXPECT_EQ(detail::normalize_gpu_name("NVIDIA A100-SXM4-40GB MIG 3g.20gb"),
            "A100 SXM4 40GB MIG 3G.20GB");
}

// --- The table itself ------------------------------------------------------------------------

TEST(DatasheetTable, EveryRowFindsItselfUniquely) {
  for (const detail::DatasheetRow& row : detail::datasheet_rows()) {
    ASSERT_FALSE(row.nvml_names.empty()) << row.rates.model;
    EXPECT_GT(row.memory_gib, 0) << row.rates.model;
    for (std::string_view name : row.nvml_names) {
      EXPECT_EQ(found_model(named(std::string(name), row.memory_gib)), row.rates.model) << name;
    }
  }
}

TEST(DatasheetTable, FollowsTheConventions) {
  const auto& table = datasheet_table();
  ASSERT_GE(table.size(), 20u);
  std::set<std::string> models;
  for (const PeakRates& rates : table) {
    SCOPED_TRACE(rates.model);
    EXPECT_TRUE(models.insert(rates.model).second) << "duplicate model";
    EXPECT_FALSE(rates.estimated);
    EXPECT_NE(rates.source.find("NVIDIA"), std::string::npos) << rates.source;
    EXPECT_NE(rates.source.find("https://"), std::string::npos) << rates.source;

    ASSERT_TRUE(rates.memory_bandwidth_bytes_per_s.has_value());
    EXPECT_GE(*rates.memory_bandwidth_bytes_per_s, 1e11);
    EXPECT_LE(*rates.memory_bandwidth_bytes_per_s, 1e13);

    // FLOP/s, not TFLOP/s: every rate between 0.1 TFLOP/s and 10 PFLOP/s.
    for (const auto& [precision, flops] : rates.flops_per_s) {
      EXPECT_GE(flops, 1e11) << precision_name(precision);
      EXPECT_LE(flops, 1e16) << precision_name(precision);
    }
    const auto fp32 = peak_flops(rates, Precision::fp32);
    const auto fp16 = peak_flops(rates, Precision::fp16);
    ASSERT_TRUE(fp32 && fp16 && peak_flops(rates, Precision::fp64));
    EXPECT_GE(*fp16, *fp32);
    if (auto bf16 = peak_flops(rates, Precision::bf16)) {
      EXPECT_DOUBLE_EQ(*bf16, *fp16);
    }
    if (auto tf32 = peak_flops(rates, Precision::tf32)) {
      EXPECT_GE(*tf32, *fp32);
      EXPECT_LT(*tf32, *fp16);
    }
    if (auto fp8 = peak_flops(rates, Precision::fp8)) {
      EXPECT_GT(*fp8, *fp16);
    }
    if (auto int8 = peak_flops(rates, Precision::int8)) {
      EXPECT_GT(*int8, *fp16);
    }
  }
}

TEST(DatasheetTable, Fp8OnlyOnAdaAndHopper) {
  const std::set<std::string> with_fp8 = {"H200 SXM 141GB",
                                          "H200 NVL 141GB",
                                          "H100 SXM5 80GB",
                                          "H100 NVL 94GB",
                                          "H100 PCIe 80GB",
                                          "L40S",
                                          "L40",
                                          "L4",
                                          "GeForce RTX 4090",
                                          "GeForce RTX 4080 16GB"};
  for (const PeakRates& rates : datasheet_table()) {
    EXPECT_EQ(peak_flops(rates, Precision::fp8).has_value(), with_fp8.contains(rates.model))
        << rates.model;
  }
}

TEST(DatasheetTable, SpotValues) {
  const PeakRates& h100 = table_entry("H100 SXM5 80GB");
  EXPECT_DOUBLE_EQ(*peak_flops(h100, Precision::bf16), 989.4e12);
  EXPECT_DOUBLE_EQ(*peak_flops(h100, Precision::fp64), 66.9e12);  // FP64 Tensor Core
  EXPECT_DOUBLE_EQ(*h100.memory_bandwidth_bytes_per_s, 3.35e12);

  const PeakRates& a100 = table_entry("A100 SXM4 40GB");
  EXPECT_DOUBLE_EQ(*peak_flops(a100, Precision::fp16), 312e12);
  EXPECT_FALSE(peak_flops(a100, Precision::fp8));
  EXPECT_DOUBLE_EQ(*table_entry("A100 SXM4 80GB").memory_bandwidth_bytes_per_s, 2039e9);

  // GeForce: the FP32-accumulate rate, half of the 142e12 FP16-accumulate figure.
  const PeakRates& rtx3090 = table_entry("GeForce RTX 3090");
  EXPECT_DOUBLE_EQ(*peak_flops(rtx3090, Precision::fp16), 71e12);
  EXPECT_NE(rtx3090.notes.find("half"), std::string::npos);

  // Volta: no bf16, tf32 or int8 tensor path.
  const PeakRates& v100 = table_entry("V100 SXM2 32GB");
  EXPECT_FALSE(peak_flops(v100, Precision::bf16));
  EXPECT_FALSE(peak_flops(v100, Precision::tf32));
  EXPECT_FALSE(peak_flops(v100, Precision::int8));
  EXPECT_DOUBLE_EQ(*peak_flops(v100, Precision::fp16), 125e12);
}

// --- The estimate ----------------------------------------------------------------------------

struct Hardware {
  const char* nvml_name;
  const char* model;  // table entry the estimate should reproduce
  int cc_major, cc_minor, sm_count;
  unsigned sm_clock_mhz;   // max SM clock (GeForce: rated boost, see below)
  unsigned mem_clock_mhz;  // 0 = unknown
  unsigned bus_width_bits;
};

GpuDescription describe(const Hardware& hw) {
  GpuDescription gpu = named(hw.nvml_name);
  gpu.cc_major = hw.cc_major;
  gpu.cc_minor = hw.cc_minor;
  gpu.sm_count = hw.sm_count;
  gpu.max_sm_clock_mhz = hw.sm_clock_mhz;
  if (hw.mem_clock_mhz != 0) {
    gpu.max_mem_clock_mhz = hw.mem_clock_mhz;
    gpu.memory_bus_width_bits = hw.bus_width_bits;
  }
  return gpu;
}

// SM counts and clocks behind each datasheet figure. On GeForce cards NVML's max SM clock is
// the top of the boost curve, above the rated boost the datasheet uses, so those rows feed the
// rated boost clock (the estimate's notes warn about exactly this).
const Hardware kHardware[] = {
    {"NVIDIA H100 80GB HBM3", "H100 SXM5 80GB", 9, 0, 132, 1980, 2619, 5120},
    {"NVIDIA H200", "H200 SXM 141GB", 9, 0, 132, 1980, 0, 0},
    {"NVIDIA H100 PCIe", "H100 PCIe 80GB", 9, 0, 114, 1755, 1593, 5120},
    {"NVIDIA A100-SXM4-40GB", "A100 SXM4 40GB", 8, 0, 108, 1410, 1215, 5120},
    {"NVIDIA A100-SXM4-80GB", "A100 SXM4 80GB", 8, 0, 108, 1410, 1593, 5120},
    {"NVIDIA A30", "A30", 8, 0, 56, 1440, 1215, 3072},
    {"NVIDIA L40S", "L40S", 8, 9, 142, 2520, 9001, 384},
    {"NVIDIA L4", "L4", 8, 9, 58, 2040, 6251, 192},
    {"NVIDIA GeForce RTX 4090", "GeForce RTX 4090", 8, 9, 128, 2520, 10501, 384},
    {"NVIDIA A10", "A10", 8, 6, 72, 1695, 6251, 384},
    {"NVIDIA A40", "A40", 8, 6, 84, 1740, 7251, 384},
    {"NVIDIA GeForce RTX 3090", "GeForce RTX 3090", 8, 6, 82, 1695, 9751, 384},
    {"Tesla T4", "T4", 7, 5, 40, 1590, 5001, 256},
    {"Tesla V100-SXM2-16GB", "V100 SXM2 16GB", 7, 0, 80, 1530, 877, 4096},
    {"Tesla V100-PCIE-16GB", "V100 PCIe 16GB", 7, 0, 80, 1380, 877, 4096},
};

TEST(EstimatePeak, ReproducesTheTableWithinTenPercent) {
  for (const Hardware& hw : kHardware) {
    SCOPED_TRACE(hw.model);
    Result<PeakRates> estimate = estimate_peak(describe(hw));
    ASSERT_TRUE(estimate.ok()) << estimate.status().to_string();
    const PeakRates& table = table_entry(hw.model);

    // Same precisions supported, each within 10%.
    std::set<Precision> estimated_precisions, table_precisions;
    for (const auto& [p, flops] : estimate->flops_per_s) estimated_precisions.insert(p);
    for (const auto& [p, flops] : table.flops_per_s) table_precisions.insert(p);
    EXPECT_EQ(estimated_precisions, table_precisions);
    for (const auto& [precision, flops] : table.flops_per_s) {
      std::optional<double> guess = peak_flops(*estimate, precision);
      if (!guess) continue;
      EXPECT_NEAR(*guess / flops, 1.0, 0.10)
          << precision_name(precision) << ": " << *guess << " vs " << flops;
    }
    if (hw.mem_clock_mhz != 0) {
      ASSERT_TRUE(estimate->memory_bandwidth_bytes_per_s.has_value());
      EXPECT_NEAR(*estimate->memory_bandwidth_bytes_per_s / *table.memory_bandwidth_bytes_per_s,
                  1.0, 0.10);
    }
  }
}

TEST(EstimatePeak, MatchesTheWorkedExamples) {
  Result<PeakRates> h100 = estimate_peak(describe(kHardware[0]));
  ASSERT_TRUE(h100.ok());
  EXPECT_NEAR(*peak_flops(*h100, Precision::fp16), 989.4e12, 0.5e12);  // 4096 x 132 x 1830 MHz
  EXPECT_NEAR(*h100->memory_bandwidth_bytes_per_s, 3.352e12, 0.001e12);

  GpuDescription rtx3090 = named("NVIDIA GeForce RTX 3090");
  rtx3090.cc_major = 8;
  rtx3090.cc_minor = 6;
  rtx3090.sm_count = 82;
  rtx3090.max_sm_clock_mhz = 1695;
  rtx3090.max_mem_clock_mhz = 9751;
  rtx3090.memory_bus_width_bits = 384;
  Result<PeakRates> geforce = estimate_peak(rtx3090);
  ASSERT_TRUE(geforce.ok());
  EXPECT_NEAR(*geforce->memory_bandwidth_bytes_per_s, 936.0e9, 0.1e9);
}

TEST(EstimatePeak, IsLabelledAsAnEstimate) {
  Result<PeakRates> estimate = estimate_peak(describe(kHardware[3]));
  ASSERT_TRUE(estimate.ok());
  EXPECT_TRUE(estimate->estimated);
  EXPECT_EQ(estimate->model, "A100-SXM4-40GB");
  EXPECT_EQ(estimate->source.rfind("estimate: ", 0), 0u) << estimate->source;
  EXPECT_NE(estimate->source.find("108 SMs x 1410 MHz"), std::string::npos) << estimate->source;
  EXPECT_NE(estimate->notes.find("FP64 Tensor Core"), std::string::npos) << estimate->notes;
}

TEST(EstimatePeak, GeForceGetsTheHalfRateFp32AccumulatePath) {
  GpuDescription pro = named("NVIDIA RTX A5000");
  pro.cc_major = 8;
  pro.cc_minor = 6;
  pro.sm_count = 64;
  pro.max_sm_clock_mhz = 1695;
  GpuDescription geforce = pro;
  geforce.nvml_name = "NVIDIA GeForce RTX 3070 Ti";

  Result<PeakRates> p = estimate_peak(pro);
  Result<PeakRates> g = estimate_peak(geforce);
  ASSERT_TRUE(p.ok() && g.ok());
  for (Precision half : {Precision::tf32, Precision::fp16, Precision::bf16}) {
    EXPECT_DOUBLE_EQ(*peak_flops(*p, half), 2 * *peak_flops(*g, half)) << precision_name(half);
  }
  for (Precision full : {Precision::fp64, Precision::fp32, Precision::int8}) {
    EXPECT_DOUBLE_EQ(*peak_flops(*p, full), *peak_flops(*g, full)) << precision_name(full);
  }
  EXPECT_NE(g->notes.find("GeForce"), std::string::npos);
  EXPECT_NE(p->notes.find("L40"), std::string::npos);
}

TEST(EstimatePeak, BandwidthNeedsClockAndBusWidth) {
  GpuDescription gpu = describe(kHardware[3]);
  gpu.memory_bus_width_bits.reset();
  Result<PeakRates> estimate = estimate_peak(gpu);
  ASSERT_TRUE(estimate.ok());
  EXPECT_FALSE(estimate->memory_bandwidth_bytes_per_s.has_value());
  EXPECT_FALSE(peak_flops(*estimate, Precision::fp8));  // Ampere has no fp8
}

TEST(EstimatePeak, MissingInputsAreNotSupported) {
  const GpuDescription full = describe(kHardware[0]);
  ASSERT_TRUE(estimate_peak(full).ok());

  GpuDescription no_cc = full;
  no_cc.cc_major.reset();
  GpuDescription no_cc_minor = full;
  no_cc_minor.cc_minor.reset();
  GpuDescription no_sms = full;
  no_sms.sm_count.reset();
  GpuDescription no_clock = full;
  no_clock.max_sm_clock_mhz.reset();
  for (const GpuDescription& gpu : {no_cc, no_cc_minor, no_sms, no_clock}) {
    Result<PeakRates> estimate = estimate_peak(gpu);
    EXPECT_EQ(estimate.code(), Code::not_supported) << estimate.status().to_string();
  }
  Result<PeakRates> nothing = estimate_peak(named("NVIDIA H100 80GB HBM3"));
  EXPECT_EQ(nothing.code(), Code::not_supported);
  EXPECT_NE(nothing.status().message().find("SM count"), std::string::npos);
}

TEST(EstimatePeak, UnknownArchitecturesAreNotSupported) {
  for (auto [major, minor] :
       {std::pair{10, 0}, std::pair{12, 0}, std::pair{8, 7}, std::pair{6, 0}}) {
    GpuDescription gpu = describe(kHardware[0]);
    gpu.nvml_name = "NVIDIA Future GPU";
    gpu.cc_major = major;
    gpu.cc_minor = minor;
    EXPECT_EQ(estimate_peak(gpu).code(), Code::not_supported) << major << "." << minor;
  }
}

TEST(EstimatePeak, NonPositiveInputsAreInvalid) {
  GpuDescription gpu = describe(kHardware[0]);
  gpu.sm_count = 0;
  EXPECT_EQ(estimate_peak(gpu).code(), Code::invalid_argument);
}

// --- peak_rates_for ----------------------------------------------------------------------------

TEST(PeakRatesFor, PrefersTheTable) {
  Result<PeakRates> rates = peak_rates_for(describe(kHardware[0]));
  ASSERT_TRUE(rates.ok());
  EXPECT_FALSE(rates->estimated);
  EXPECT_EQ(rates->model, "H100 SXM5 80GB");
}

TEST(PeakRatesFor, FallsBackToTheEstimate) {
  GpuDescription gh200 = describe(kHardware[0]);
  gh200.nvml_name = "NVIDIA GH200 480GB";
  Result<PeakRates> rates = peak_rates_for(gh200);
  ASSERT_TRUE(rates.ok());
  EXPECT_TRUE(rates->estimated);
  EXPECT_EQ(rates->model, "GH200 480GB");
}

TEST(PeakRatesFor, FailsWhenNeitherWorks) {
  EXPECT_EQ(peak_rates_for(named("NVIDIA Unknown GPU")).code(), Code::not_supported);
}

TEST(PeakFlops, AbsentPrecisionIsNullopt) {
  const PeakRates& v100 = table_entry("V100 PCIe 16GB");
  EXPECT_FALSE(peak_flops(v100, Precision::int8).has_value());
  EXPECT_DOUBLE_EQ(*peak_flops(v100, Precision::fp32), 14e12);
}

}  // namespace
}  // namespace gpuscope
