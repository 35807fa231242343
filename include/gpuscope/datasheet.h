// Peak rates of NVIDIA GPUs: a table of datasheet numbers, and an estimate for GPUs the table
// lacks. Commands use them to print a measurement as "% of peak".
//
// Conventions (every number in the table and in an estimate follows them):
//   - Units are SI: FLOP/s (OP/s for int8), bytes/s. 989.4e12, never 989.4.
//   - Dense rates only. Datasheets print 2:4-sparsity rates ("with sparsity", "*"); the table
//     holds half of those.
//   - fp64: the rate DGEMM can reach: FP64 Tensor Core on A100/A30/H100/H200, vector FP64
//     elsewhere. On GPUs with slow FP64 (GA10x, AD10x, Turing) the datasheets print no FP64
//     number; the table then holds the architecture's FP32/64 (FP32/32 on Turing) and says so in
//     notes.
//   - fp32: non-tensor FP32 (SGEMM with TF32 off).
//   - tf32, fp16, bf16, fp8: tensor cores with FP32 accumulate (fp8 = e4m3/e5m2 inputs, Ada and
//     Hopper only). GeForce Ampere/Ada (and the L40) run FP32 accumulate at HALF the FP16
//     accumulate rate that marketing pages quote; the table holds the FP32-accumulate rate and
//     the notes say so.
//   - int8: tensor-core IMMA with int32 accumulate. V100 has no IMMA: its int8 is absent (DP4A
//     on CUDA cores is not a tensor rate and is not listed).
//   - A precision absent from flops_per_s means the hardware has no such path.
//
// Thread safety: everything here is const data or a pure function; safe from any thread.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "gpuscope/precision.h"
#include "gpuscope/status.h"

namespace gpuscope {

// What we know of a GPU; everything optional except the NVML name.
struct GpuDescription {
  std::string nvml_name;  // e.g. "NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-32GB"
  std::optional<std::uint64_t> memory_total_bytes;
  std::optional<int> cc_major, cc_minor;  // CUDA compute capability
  std::optional<int> sm_count;
  std::optional<unsigned> max_sm_clock_mhz;  // NVML max SM clock
  // NVML max memory clock as NVML reports it: 2619 on H100 SXM5 (HBM3), 9751 on RTX 3090
  // (GDDR6X): half the per-pin data rate in MT/s.
  std::optional<unsigned> max_mem_clock_mhz;
  std::optional<unsigned> memory_bus_width_bits;
};

struct PeakRates {
  std::string model;  // marketing name, e.g. "H100 SXM5 80GB"
  // Dense peak per precision, FLOP/s (int8: OP/s). Absent = not supported by the hardware.
  std::map<Precision, double> flops_per_s;
  std::optional<double> memory_bandwidth_bytes_per_s;
  std::string source;      // where the numbers come from: document title and URL, or the formula
  std::string notes;       // caveats: which fp64 path, GeForce half-rate FP32 accumulate, ...
  bool estimated = false;  // true: SM count x clock x per-architecture rate, not a datasheet
};

// Every datasheet entry, in table order (newest architecture first). The reference stays valid
// for the life of the program.
const std::vector<PeakRates>& datasheet_table();

// The table entry for this GPU, or nullopt when the table has none.
//
// Names are compared whole after normalization (case, '-'/'_' as spaces, a leading "NVIDIA " or
// "Tesla " dropped), so "GeForce RTX 3090 Ti" never matches the RTX 3090 entry, "A10G" never
// matches A10, "L40" never matches L40S. When memory_total_bytes is given it must agree with the
// entry's memory size (0.85x..1.08x of nominal GiB, allowing for ECC and driver reservations);
// this separates models that share a name (RTX 3080 10GB vs 12GB). A MIG instance name
// ("... MIG 3g.20gb") never matches: a slice does not have the whole GPU's peak.
std::optional<PeakRates> find_datasheet(const GpuDescription& gpu);

// Estimates peak rates from the hardware: sm_count x max_sm_clock_mhz x the architecture's
// dense FLOP per clock per SM, and bandwidth = 2 x max_mem_clock_mhz x bus_width_bits / 8.
// The result has estimated = true, source naming the formula and notes naming the caveats.
// memory_bandwidth_bytes_per_s is absent when the memory clock or bus width is.
//
// Returns not_supported when cc_major/cc_minor, sm_count or max_sm_clock_mhz is missing, or the
// compute capability is not one this table knows (Volta 7.0, Turing 7.5, Ampere 8.0/8.6, Ada
// 8.9, Hopper 9.0).
//
// Caveats the notes repeat: a name containing "GeForce" gets the half-rate FP32-accumulate
// tensor path; other names get the full rate (not true of every professional card: the L40 is
// half-rate). NVML's max SM clock on GeForce cards is the top of the boost curve (e.g. 2100 MHz
// on an RTX 3090 rated 1695 MHz), so GeForce estimates can run ~20-25% above the rated peak.
Result<PeakRates> estimate_peak(const GpuDescription& gpu);

// find_datasheet(), else estimate_peak(). Fails only when both do (with estimate_peak's status).
Result<PeakRates> peak_rates_for(const GpuDescription& gpu);

// The dense peak for one precision, or nullopt when the GPU has no such path.
std::optional<double> peak_flops(const PeakRates& rates, Precision precision);

namespace detail {

// One table row: the rates, and how NVML names that GPU.
struct DatasheetRow {
  PeakRates rates;
  std::vector<std::string_view> nvml_names;  // as NVML reports them; compared normalized
  double memory_gib = 0;                     // nominal size; 0 = do not check
};

// The rows behind datasheet_table(), defined in datasheet_table.cc.
const std::vector<DatasheetRow>& datasheet_rows();

// "NVIDIA GeForce RTX 3090 Ti" -> "GEFORCE RTX 3090 TI"; "Tesla V100-SXM2-32GB" ->
// "V100 SXM2 32GB": upper case, '-' and '_' as spaces, runs of spaces collapsed, a leading
// "NVIDIA " and/or "TESLA " dropped.
std::string normalize_gpu_name(std::string_view nvml_name);

}  // namespace detail
}  // namespace gpuscope
