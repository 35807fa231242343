// Shared by the store tests: a scratch directory, a sample run, and file bytes.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "gpuscope/store.h"
#include "support/scratch_dir.h"

namespace gpuscope::store::testing {

// A fresh directory under the system's temporary directory, removed with everything in it.
using ::gpuscope::testing::ScratchDir;

inline std::string read_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

inline void write_bytes(const std::string& path, const std::string& bytes) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << bytes;
}

// A burn-like run of two GPUs with every kind of record.
inline RunData sample_run() {
  RunData data;
  RunRecord& run = data.run;
  run.kind = "burn";
  run.started_unix_s = 1795850000.25;
  run.ended_unix_s = 1795850123.5;
  run.host = "node7";
  run.command_line = "gpuscope burn --duration 10 --store results.db";
  run.gpuscope_version = "0.1.0";
  run.driver_version = "580.159.04";
  run.cuda_driver_version = "13.0";
  run.cuda_runtime_version = "13.0";
  run.label = "before the fan swap";
  GpuRecord g0;
  g0.gpu = 0;
  g0.name = "NVIDIA H100 80GB HBM3";
  g0.uuid = "GPU-d57df324-956d-e245-79f7-9af168147882";
  g0.pci_bus_id = "00000000:00:06.0";
  g0.compute_capability = "9.0";
  g0.sm_count = 132;
  g0.memory_total_bytes = 85520809984ull;
  g0.power_limit_w = 700;
  g0.power_min_limit_w = 200;
  g0.power_max_limit_w = 700;
  g0.sm_clock_max_hz = 1.98e9;
  g0.temperature_slowdown_c = 89;
  g0.pcie_generation_max = 5;
  g0.pcie_width_max = 16;
  PeakRecord peak;
  peak.model = "H100 SXM5 80GB";
  peak.flops_per_s = {{"bf16", 989.4e12}, {"fp64", 66.9e12}};
  peak.memory_bytes_per_s = 3.35e12;
  peak.source = "NVIDIA H100 datasheet";
  g0.peak = peak;
  g0.details = {{"ecc", {{"current", true}}}};
  GpuRecord g1;
  g1.gpu = 1;
  g1.name = "NVIDIA H100 80GB HBM3";
  g1.uuid = "GPU-11111111-2222-3333-4444-555555555555";
  run.gpus = {g0, g1};
  run.configurations = {{"n8192", {{"n", 8192}, {"duration_s", 10}}}};

  data.measurements = {
      {0,
       "n8192",
       names::kGemmFlopPerS,
       711.5e12,
       "FLOP/s",
       {{"precision", "bf16"}, {"stat", "median"}, {"windows", 10}}},
      {1,
       "n8192",
       names::kGemmFlopPerS,
       std::nullopt,
       "FLOP/s",
       {{"precision", "fp8"}, {"skipped", "not supported before compute capability 8.9"}}},
      {std::nullopt, "", "host_memory_bytes", 1.5e12, "B", nlohmann::json::object()},
  };
  data.telemetry = {
      {0, names::kPowerW, "W", {0, 0.5, 1.0}, {75.5, 690.25, 700}},
      {1, names::kTemperatureC, "degC", {0.1, 0.6}, {44, 61}},
  };
  data.findings = {
      {.id = "throttled",
       .severity = Severity::warning,
       .title = "bf16 was throttled for 3 s",
       .evidence = {{"sw_thermal_slowdown", 3, "s"}, {"temperature reached", 86, "degC"}},
       .fix = "check cooling and airflow",
       .expected_speedup = analysis::GainRange{1.02, 1.1},
       .confidence = analysis::Confidence::high,
       .subjects = {"bf16", "fp8"},
       .gpu = 0},
      {.severity = Severity::info, .title = "a note about the whole run"}};
  return data;
}

}  // namespace gpuscope::store::testing
