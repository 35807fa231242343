// A hand-made burn report with every kind of row and outcome, for the reporter tests.
#pragma once

#include <signal.h>

#include "gpuscope/burn.h"

namespace gpuscope::burn::testing {

inline Report sample_report() {
  Report report;
  report.gpuscope_version = "0.1.0";
  report.hostname = "node1";
  report.driver_version = "580.159.04";
  report.cuda_driver_version = 13000;
  report.options.precisions = {Precision::bf16, Precision::fp8, Precision::int8};
  report.options.duration_seconds = 3;
  report.options.size = 8192;
  report.worker = "/opt/gpuscope/bin/gpuscope-burn-worker";
  report.wall_seconds = 42.5;

  TargetResult h100;
  Target& t = h100.target;
  t.gpu_index = 0;
  t.gpu_name = "NVIDIA H100 80GB HBM3";
  t.name = t.gpu_name;
  t.gpu_uuid = "GPU-3f6b2c1d-8a4e-4f1b-9c2d-5e7a8b9c0d1e";
  t.pci_bus_id = "00000000:18:00.0";
  PeakRates peak;
  peak.model = "H100 SXM5 80GB";
  peak.flops_per_s = {{Precision::bf16, 989.4e12}};
  t.peak = peak;
  t.gpm_supported = true;
  t.energy_counter = true;
  h100.outcome = Outcome::passed;
  h100.worker_exit_code = 0;
  h100.device =
      WorkerDevice{"NVIDIA H100 80GB HBM3", t.gpu_uuid, "0000:18:00.0", "9.0", 132, 84929216512ull};
  PrecisionRow bf16;
  bf16.precision = Precision::bf16;
  bf16.status = RowStatus::measured;
  bf16.n = 8192;
  bf16.windows = 3;
  bf16.flop_per_second_median = 767.25e12;
  bf16.flop_per_second_min = 765.5e12;
  bf16.flop_per_second_max = 768.5e12;
  bf16.fraction_of_peak = 0.775;
  bf16.errors.gemms_checked = 2093;
  bf16.errors.reference_tiles_checked = 4;
  bf16.verified = true;
  bf16.span_seconds = 3.0625;
  bf16.temperature_max_c = 61;
  bf16.power_average_w = 650.5;
  bf16.energy_j = 1992.15625;
  bf16.energy_source = "energy_counter";
  bf16.flop_per_joule = 1.15e12;
  bf16.sm_clock_average_hz = 1755e6;
  bf16.sm_activity = 0.98;
  bf16.tensor_activity = 0.875;
  bf16.throttle = {{"sw_power_cap", 1.25, false}, {"hw_slowdown", 0, true}};
  bf16.algorithm = "algo 66 tile 18 stages 20 NN CUBLAS_COMPUTE_32F";
  PrecisionRow fp8;
  fp8.precision = Precision::fp8;
  fp8.status = RowStatus::skipped;
  fp8.note = "no cuBLASLt kernel for this layout";
  PrecisionRow int8;
  int8.precision = Precision::int8;
  int8.status = RowStatus::not_run;
  int8.note = "interrupted before it ran";
  h100.gemm = {bf16, fp8, int8};
  h100.memory = {{"copy", 17179869184ull, 17179869184ull, 17179869184ull, 34359738368ull, 0.0114,
                  3.014e12, 0.9}};
  h100.host_link = {{"pinned", "h2d", 1073741824ull, 1073741824ull, 0.0196, 54.7e9, "cuda_events"},
                    {"pageable", "h2d", 1073741824ull, 1073741824ull, 0.151, 7.1e9, "host_clock"}};
  h100.overlap = {{"pinned", 268435456ull, 0.00491, 0.0062, 0.00631, 0.98}};
  h100.skipped = {{"host_link", "out_of_memory", "pinned buffer of 1 GiB refused"}};
  h100.warnings = {"int8: span too short"};

  TargetResult mig;
  Target& m = mig.target;
  m.gpu_index = 1;
  m.gpu_name = "NVIDIA A100-SXM4-40GB";
  m.gpu_uuid = "GPU-a1b2c3d4-e5f6-4a7b-8c9d-0e1f2a3b4c5d";
  m.mig = MigPlacement{1, 0, "MIG-1f2e3d4c-5b6a-5978-8695-a4b3c2d1e0f9", "3g.20gb"};
  m.name = "NVIDIA A100-SXM4-40GB MIG 3g.20gb";
  m.sm_count = 42u;
  m.memory_total_bytes = 20937965568ull;
  m.peak_note = "no peak for a MIG instance without SM counts";
  mig.outcome = Outcome::verification_failed;
  mig.failure = "bf16 GEMM verification failed on NVIDIA A100-SXM4-40GB MIG 3g.20gb";
  mig.worker_exit_code = 1;
  PrecisionRow bad = bf16;
  bad.fraction_of_peak.reset();
  bad.energy_j.reset();
  bad.energy_source.clear();
  bad.flop_per_joule.reset();
  bad.sm_activity.reset();
  bad.tensor_activity.reset();
  bad.flop_per_second_median = 140.5e12;
  bad.flop_per_second_min = 140e12;
  bad.flop_per_second_max = 141e12;
  bad.errors.mismatches = 1;
  bad.verified = false;
  bad.throttle.clear();
  mig.gemm = {bad};
  mig.errors = {{"verification_failed", mig.failure, Precision::bf16}};
  mig.warnings = {"power, temperature and throttling are the whole GPU's"};

  TargetResult killed;
  killed.target = m;
  killed.target.mig->gpu_instance_id = 13;
  killed.target.mig->profile = "1g.5gb";
  killed.target.mig->uuid = "MIG-3c4d5e6f-7a8b-5c9d-0e1f-2a3b4c5d6e7f";
  killed.outcome = Outcome::failed;
  killed.failure = "the worker crashed (killed by signal 11 (SIGSEGV))";
  killed.worker_signal = SIGSEGV;
  killed.stderr_tail = {"gpuscope-burn-worker: bf16 n=8192 for 3 s ..."};
  PrecisionRow not_run;
  not_run.precision = Precision::bf16;
  not_run.note = "the worker did not get to it";
  killed.gemm = {not_run};

  report.targets = {h100, mig, killed};
  return report;
}

}  // namespace gpuscope::burn::testing
