// The datasheet table: one row per GPU model, newest architecture first.
//
// Every number is copied from the document named in its row's source (dense rates: half of a
// "with sparsity" figure), except fp64 on GPUs whose datasheets print none: that is derived
// from the printed FP32 by the architecture's FP64:FP32 ratio and the row's notes say so.
// datasheet_test.cc checks the conventions (units, fp16 >= fp32, bandwidth range) and that
// estimate_peak() reproduces these rows from SM count and clocks.
#include "gpuscope/datasheet.h"

namespace gpuscope::detail {
namespace {

using P = Precision;

// --- Sources ---------------------------------------------------------------------------------

constexpr const char* kHopperWhitepaper =
    "NVIDIA H100 Tensor Core GPU Architecture whitepaper, "
    "https://resources.nvidia.com/en-us-tensor-core/gtc22-whitepaper-hopper";
constexpr const char* kH100Datasheet =
    "NVIDIA H100 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/h100/";
constexpr const char* kH200Datasheet =
    "NVIDIA H200 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/h200/";
constexpr const char* kA100Datasheet =
    "NVIDIA A100 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/a100/";
constexpr const char* kA30Datasheet =
    "NVIDIA A30 Tensor Core GPU datasheet, "
    "https://www.nvidia.com/en-us/data-center/products/a30-gpu/";
constexpr const char* kA10Datasheet =
    "NVIDIA A10 Tensor Core GPU datasheet, "
    "https://www.nvidia.com/en-us/data-center/products/a10-gpu/";
constexpr const char* kA40Datasheet =
    "NVIDIA A40 GPU datasheet, https://www.nvidia.com/en-us/data-center/a40/";
constexpr const char* kL40SDatasheet =
    "NVIDIA L40S GPU datasheet, https://www.nvidia.com/en-us/data-center/l40s/";
constexpr const char* kL40Datasheet =
    "NVIDIA L40 GPU datasheet, https://www.nvidia.com/en-us/data-center/l40/";
constexpr const char* kL4Datasheet =
    "NVIDIA L4 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/l4/";
constexpr const char* kAdaWhitepaper =
    "NVIDIA Ada GPU Architecture whitepaper, "
    "https://images.nvidia.com/aem-dam/Solutions/geforce/ada/nvidia-ada-gpu-architecture.pdf";
constexpr const char* kGA102Whitepaper =
    "NVIDIA Ampere GA102 GPU Architecture whitepaper v2.0, "
    "https://www.nvidia.com/content/PDF/nvidia-ampere-ga-102-gpu-architecture-whitepaper-v2.pdf";
constexpr const char* kT4Datasheet =
    "NVIDIA T4 Tensor Core GPU datasheet, https://www.nvidia.com/en-us/data-center/tesla-t4/";
constexpr const char* kV100Datasheet =
    "NVIDIA Tesla V100 GPU Accelerator datasheet, https://www.nvidia.com/en-us/data-center/v100/";

std::string join(std::string_view a, std::string_view b) {
  std::string out(a);
  out += "; ";
  out += b;
  return out;
}

// --- Rates shared by several rows --------------------------------------------------------------

// H100 SXM5 and H200 SXM: GH100 with 132 SMs; tensor rates at 1830 MHz, FP32/FP64 at 1980 MHz.
std::map<Precision, double> hopper_sxm_rates() {
  return {{P::fp64, 66.9e12},  {P::fp32, 66.9e12},  {P::tf32, 494.7e12}, {P::fp16, 989.4e12},
          {P::bf16, 989.4e12}, {P::fp8, 1978.9e12}, {P::int8, 1978.9e12}};
}

// H100 NVL and H200 NVL: datasheet 30/60/60/835*/1671*/3341*/3341* TFLOPS.
std::map<Precision, double> hopper_nvl_rates() {
  return {{P::fp64, 60e12},    {P::fp32, 60e12},    {P::tf32, 417.5e12}, {P::fp16, 835.5e12},
          {P::bf16, 835.5e12}, {P::fp8, 1670.5e12}, {P::int8, 1670.5e12}};
}

// Every A100 (SXM4 and PCIe, 40 and 80 GB): 108 SMs at 1410 MHz.
std::map<Precision, double> a100_rates() {
  return {{P::fp64, 19.5e12}, {P::fp32, 19.5e12}, {P::tf32, 156e12},
          {P::fp16, 312e12},  {P::bf16, 312e12},  {P::int8, 624e12}};
}

std::map<Precision, double> v100_sxm2_rates() {
  return {{P::fp64, 7.8e12}, {P::fp32, 15.7e12}, {P::fp16, 125e12}};
}

std::map<Precision, double> v100_pcie_rates() {
  return {{P::fp64, 7e12}, {P::fp32, 14e12}, {P::fp16, 112e12}};
}

constexpr const char* kHopperNotes =
    "fp64 = FP64 Tensor Core (vector FP64 is half); datasheets rate tensor cores below the max "
    "boost clock that the FP32/FP64 figures use";
constexpr const char* kA100Notes = "fp64 = FP64 Tensor Core (vector FP64 is 9.7e12)";
constexpr const char* kAdaFp64Note =
    "fp64 not on the datasheet: FP32/64 (Ada has 2 FP64 units per SM)";
constexpr const char* kGA10xFp64Note =
    "fp64 not on the datasheet: FP32/64 (GA10x has 2 FP64 units per SM)";
constexpr const char* kGeForceNote =
    "GeForce: tf32/fp16/bf16/fp8 are the FP32-accumulate rates, half the FP16-accumulate rates "
    "quoted on product pages; int8 runs at full rate";
constexpr const char* kV100Notes =
    "fp64 = vector FP64; fp16 = tensor cores, FP32 accumulate; no bf16/tf32; no int8 tensor path "
    "(Volta has no IMMA; DP4A on CUDA cores is not listed)";

std::vector<DatasheetRow> make_rows() {
  const std::string ada_geforce_notes = join(kGeForceNote, kAdaFp64Note);
  const std::string ga10x_geforce_notes = join(kGeForceNote, kGA10xFp64Note);
  const std::string hopper_sxm_source = join(kH100Datasheet, kHopperWhitepaper);

  return {
      // --- Hopper (9.0) ---
      {.rates = {.model = "H200 SXM 141GB",
                 .flops_per_s = hopper_sxm_rates(),
                 .memory_bandwidth_bytes_per_s = 4.8e12,
                 .source = join(kH200Datasheet, kHopperWhitepaper),
                 .notes = join(kHopperNotes, "same GH100 compute as H100 SXM5")},
       .nvml_names = {"NVIDIA H200"},
       .memory_gib = 141},
      {.rates = {.model = "H200 NVL 141GB",
                 .flops_per_s = hopper_nvl_rates(),
                 .memory_bandwidth_bytes_per_s = 4.8e12,
                 .source = kH200Datasheet,
                 .notes = kHopperNotes},
       .nvml_names = {"NVIDIA H200 NVL"},
       .memory_gib = 141},
      {.rates = {.model = "H100 SXM5 80GB",
                 .flops_per_s = hopper_sxm_rates(),
                 .memory_bandwidth_bytes_per_s = 3.35e12,
                 .source = hopper_sxm_source,
                 .notes = kHopperNotes},
       .nvml_names = {"NVIDIA H100 80GB HBM3"},
       .memory_gib = 80},
      {.rates = {.model = "H100 NVL 94GB",
                 .flops_per_s = hopper_nvl_rates(),
                 .memory_bandwidth_bytes_per_s = 3.9e12,
                 .source = kH100Datasheet,
                 .notes = kHopperNotes},
       .nvml_names = {"NVIDIA H100 NVL"},
       .memory_gib = 94},
      {.rates = {.model = "H100 PCIe 80GB",
                 .flops_per_s = {{P::fp64, 51e12},
                                 {P::fp32, 51e12},
                                 {P::tf32, 378e12},
                                 {P::fp16, 756.5e12},
                                 {P::bf16, 756.5e12},
                                 {P::fp8, 1513e12},
                                 {P::int8, 1513e12}},
                 .memory_bandwidth_bytes_per_s = 2.0e12,
                 .source = kH100Datasheet,
                 .notes = kHopperNotes},
       .nvml_names = {"NVIDIA H100 PCIe"},
       .memory_gib = 80},

      // --- Ada (8.9) ---
      {.rates = {.model = "L40S",
                 .flops_per_s = {{P::fp64, 91.6e12 / 64},
                                 {P::fp32, 91.6e12},
                                 {P::tf32, 183e12},
                                 {P::fp16, 362.05e12},
                                 {P::bf16, 362.05e12},
                                 {P::fp8, 733e12},
                                 {P::int8, 733e12}},
                 .memory_bandwidth_bytes_per_s = 864e9,
                 .source = kL40SDatasheet,
                 .notes = join(kAdaFp64Note,
                               "fp16/bf16 as printed (362.05e12), slightly below half of the "
                               "printed sparse 733e12")},
       .nvml_names = {"NVIDIA L40S"},
       .memory_gib = 48},
      {.rates = {.model = "L40",
                 .flops_per_s = {{P::fp64, 90.5e12 / 64},
                                 {P::fp32, 90.5e12},
                                 {P::tf32, 90.5e12},
                                 {P::fp16, 181.05e12},
                                 {P::bf16, 181.05e12},
                                 {P::fp8, 362e12},
                                 {P::int8, 362e12}},
                 .memory_bandwidth_bytes_per_s = 864e9,
                 .source = kL40Datasheet,
                 .notes = join(kAdaFp64Note,
                               "the L40 datasheet prints FP32-accumulate tensor rates at half the "
                               "FP16-accumulate rate (as on GeForce), unlike the L40S")},
       .nvml_names = {"NVIDIA L40"},
       .memory_gib = 48},
      {.rates = {.model = "L4",
                 .flops_per_s = {{P::fp64, 30.3e12 / 64},
                                 {P::fp32, 30.3e12},
                                 {P::tf32, 60e12},
                                 {P::fp16, 121e12},
                                 {P::bf16, 121e12},
                                 {P::fp8, 242.5e12},
                                 {P::int8, 242.5e12}},
                 .memory_bandwidth_bytes_per_s = 300e9,
                 .source = kL4Datasheet,
                 .notes = kAdaFp64Note},
       .nvml_names = {"NVIDIA L4"},
       .memory_gib = 24},
      {.rates = {.model = "GeForce RTX 4090",
                 .flops_per_s = {{P::fp64, 82.6e12 / 64},
                                 {P::fp32, 82.6e12},
                                 {P::tf32, 82.6e12},
                                 {P::fp16, 165.2e12},
                                 {P::bf16, 165.2e12},
                                 {P::fp8, 330.3e12},
                                 {P::int8, 660.6e12}},
                 .memory_bandwidth_bytes_per_s = 1008e9,
                 .source = kAdaWhitepaper,
                 .notes = ada_geforce_notes},
       .nvml_names = {"NVIDIA GeForce RTX 4090"},
       .memory_gib = 24},
      {.rates = {.model = "GeForce RTX 4080 16GB",
                 .flops_per_s = {{P::fp64, 48.7e12 / 64},
                                 {P::fp32, 48.7e12},
                                 {P::tf32, 48.7e12},
                                 {P::fp16, 97.5e12},
                                 {P::bf16, 97.5e12},
                                 {P::fp8, 194.9e12},
                                 {P::int8, 389.9e12}},
                 .memory_bandwidth_bytes_per_s = 716.8e9,
                 .source = kAdaWhitepaper,
                 .notes = ada_geforce_notes},
       .nvml_names = {"NVIDIA GeForce RTX 4080"},
       .memory_gib = 16},

      // --- Ampere GA100 (8.0) ---
      {.rates = {.model = "A100 SXM4 80GB",
                 .flops_per_s = a100_rates(),
                 .memory_bandwidth_bytes_per_s = 2039e9,
                 .source = kA100Datasheet,
                 .notes = kA100Notes},
       .nvml_names = {"NVIDIA A100-SXM4-80GB", "NVIDIA A100-SXM-80GB"},
       .memory_gib = 80},
      {.rates = {.model = "A100 SXM4 40GB",
                 .flops_per_s = a100_rates(),
                 .memory_bandwidth_bytes_per_s = 1555e9,
                 .source = kA100Datasheet,
                 .notes = kA100Notes},
       .nvml_names = {"NVIDIA A100-SXM4-40GB"},
       .memory_gib = 40},
      {.rates = {.model = "A100 PCIe 80GB",
                 .flops_per_s = a100_rates(),
                 .memory_bandwidth_bytes_per_s = 1935e9,
                 .source = kA100Datasheet,
                 .notes = kA100Notes},
       .nvml_names = {"NVIDIA A100 80GB PCIe"},
       .memory_gib = 80},
      {.rates = {.model = "A100 PCIe 40GB",
                 .flops_per_s = a100_rates(),
                 .memory_bandwidth_bytes_per_s = 1555e9,
                 .source = kA100Datasheet,
                 .notes = kA100Notes},
       .nvml_names = {"NVIDIA A100-PCIE-40GB"},
       .memory_gib = 40},
      {.rates = {.model = "A30",
                 .flops_per_s = {{P::fp64, 10.3e12},
                                 {P::fp32, 10.3e12},
                                 {P::tf32, 82e12},
                                 {P::fp16, 165e12},
                                 {P::bf16, 165e12},
                                 {P::int8, 330e12}},
                 .memory_bandwidth_bytes_per_s = 933e9,
                 .source = kA30Datasheet,
                 .notes = "fp64 = FP64 Tensor Core (vector FP64 is 5.2e12)"},
       .nvml_names = {"NVIDIA A30"},
       .memory_gib = 24},

      // --- Ampere GA10x (8.6) ---
      {.rates = {.model = "RTX A6000",
                 .flops_per_s = {{P::fp64, 38.7e12 / 64},
                                 {P::fp32, 38.7e12},
                                 {P::tf32, 77.4e12},
                                 {P::fp16, 154.8e12},
                                 {P::bf16, 154.8e12},
                                 {P::int8, 309.7e12}},
                 .memory_bandwidth_bytes_per_s = 768e9,
                 .source = join(kGA102Whitepaper, "Appendix C (RTX A6000)"),
                 .notes = kGA10xFp64Note},
       .nvml_names = {"NVIDIA RTX A6000"},
       .memory_gib = 48},
      {.rates = {.model = "A40",
                 .flops_per_s = {{P::fp64, 37.4e12 / 64},
                                 {P::fp32, 37.4e12},
                                 {P::tf32, 74.8e12},
                                 {P::fp16, 149.7e12},
                                 {P::bf16, 149.7e12},
                                 {P::int8, 299.3e12}},
                 .memory_bandwidth_bytes_per_s = 696e9,
                 .source = kA40Datasheet,
                 .notes = kGA10xFp64Note},
       .nvml_names = {"NVIDIA A40"},
       .memory_gib = 48},
      {.rates = {.model = "A10",
                 .flops_per_s = {{P::fp64, 31.2e12 / 64},
                                 {P::fp32, 31.2e12},
                                 {P::tf32, 62.5e12},
                                 {P::fp16, 125e12},
                                 {P::bf16, 125e12},
                                 {P::int8, 250e12}},
                 .memory_bandwidth_bytes_per_s = 600e9,
                 .source = kA10Datasheet,
                 .notes = kGA10xFp64Note},
       .nvml_names = {"NVIDIA A10"},
       .memory_gib = 24},
      {.rates = {.model = "GeForce RTX 3090 Ti",
                 .flops_per_s = {{P::fp64, 40e12 / 64},
                                 {P::fp32, 40e12},
                                 {P::tf32, 40e12},
                                 {P::fp16, 80e12},
                                 {P::bf16, 80e12},
                                 {P::int8, 320e12}},
                 .memory_bandwidth_bytes_per_s = 1008e9,
                 .source = join(kAdaWhitepaper, "RTX 3090 Ti column of the RTX 4090 comparison"),
                 .notes = ga10x_geforce_notes},
       .nvml_names = {"NVIDIA GeForce RTX 3090 Ti"},
       .memory_gib = 24},
      {.rates = {.model = "GeForce RTX 3090",
                 .flops_per_s = {{P::fp64, 35.6e12 / 64},
                                 {P::fp32, 35.6e12},
                                 {P::tf32, 35.6e12},
                                 {P::fp16, 71e12},
                                 {P::bf16, 71e12},
                                 {P::int8, 284e12}},
                 .memory_bandwidth_bytes_per_s = 936e9,
                 .source = join(kGA102Whitepaper, "Appendix A (GeForce RTX 3090)"),
                 .notes = ga10x_geforce_notes},
       .nvml_names = {"NVIDIA GeForce RTX 3090"},
       .memory_gib = 24},
      {.rates = {.model = "GeForce RTX 3080 10GB",
                 .flops_per_s = {{P::fp64, 29.8e12 / 64},
                                 {P::fp32, 29.8e12},
                                 {P::tf32, 29.8e12},
                                 {P::fp16, 59.5e12},
                                 {P::bf16, 59.5e12},
                                 {P::int8, 238e12}},
                 .memory_bandwidth_bytes_per_s = 760e9,
                 .source = join(kGA102Whitepaper, "Table 1 (GeForce RTX 3080)"),
                 .notes = join(ga10x_geforce_notes,
                               "the 12GB RTX 3080 (70 SMs, 912 GB/s) shares the NVML name and is "
                               "not this entry")},
       .nvml_names = {"NVIDIA GeForce RTX 3080"},
       .memory_gib = 10},

      // --- Turing (7.5) ---
      {.rates = {.model = "T4",
                 .flops_per_s = {{P::fp64, 8.1e12 / 32},
                                 {P::fp32, 8.1e12},
                                 {P::fp16, 65e12},
                                 {P::int8, 130e12}},
                 .memory_bandwidth_bytes_per_s = 320e9,
                 .source = kT4Datasheet,
                 .notes = "fp64 not on the datasheet: FP32/32 (Turing has 2 FP64 units per SM); "
                          "fp16 = tensor cores, FP16/FP32 mixed precision; no tf32/bf16"},
       .nvml_names = {"Tesla T4"},
       .memory_gib = 16},

      // --- Volta (7.0) ---
      {.rates = {.model = "V100S PCIe 32GB",
                 .flops_per_s = {{P::fp64, 8.2e12}, {P::fp32, 16.4e12}, {P::fp16, 130e12}},
                 .memory_bandwidth_bytes_per_s = 1134e9,
                 .source = kV100Datasheet,
                 .notes = kV100Notes},
       .nvml_names = {"Tesla V100S-PCIE-32GB"},
       .memory_gib = 32},
      {.rates = {.model = "V100 SXM2 32GB",
                 .flops_per_s = v100_sxm2_rates(),
                 .memory_bandwidth_bytes_per_s = 900e9,
                 .source = kV100Datasheet,
                 .notes = kV100Notes},
       .nvml_names = {"Tesla V100-SXM2-32GB"},
       .memory_gib = 32},
      {.rates = {.model = "V100 SXM2 16GB",
                 .flops_per_s = v100_sxm2_rates(),
                 .memory_bandwidth_bytes_per_s = 900e9,
                 .source = kV100Datasheet,
                 .notes = kV100Notes},
       .nvml_names = {"Tesla V100-SXM2-16GB"},
       .memory_gib = 16},
      {.rates = {.model = "V100 PCIe 32GB",
                 .flops_per_s = v100_pcie_rates(),
                 .memory_bandwidth_bytes_per_s = 900e9,
                 .source = kV100Datasheet,
                 .notes = kV100Notes},
       .nvml_names = {"Tesla V100-PCIE-32GB"},
       .memory_gib = 32},
      {.rates = {.model = "V100 PCIe 16GB",
                 .flops_per_s = v100_pcie_rates(),
                 .memory_bandwidth_bytes_per_s = 900e9,
                 .source = kV100Datasheet,
                 .notes = kV100Notes},
       .nvml_names = {"Tesla V100-PCIE-16GB"},
       .memory_gib = 16},
  };
}

}  // namespace

const std::vector<DatasheetRow>& datasheet_rows() {
  static const std::vector<DatasheetRow> rows = make_rows();
  return rows;
}

}  // namespace gpuscope::detail
