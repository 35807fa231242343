// The measurement names of a "trace" run (`gpuscope trace --store`, a trace folder's
// summary.json read by store::read_result_file), beside gpuscope/store.h's `names`: written by
// store/import_trace.cc, drawn by report/report_trace.cc.
#pragma once

namespace gpuscope::store::names {

// trace (`gpuscope trace --store`), about the run (no GPU). The window: step time (+ "stat":
// median, p10, p90, marked_median, untraced_median), GPU busy share, kernels and syncs per step,
// mean kernel duration, data-wait share, kernel time (+ "kind", "precision", "tensor_cores",
// "count"), bytes copied (+ "copy": "host_to_device pageable", ..., "count"). Per traced step
// (+ "step"): wall, GPU busy, data wait, sync time, kernels, bytes copied. The timeline sample
// of a few steps: its steps (+ "step", "start_s") and intervals (+ "track", "kind", "class",
// "name", "start_s"), each valued by its duration; start_s from the sample's first step.
inline constexpr char kTraceStepTime[] = "trace_step_time_s";                // s
inline constexpr char kTraceGpuBusyShare[] = "trace_gpu_busy_share";         // 1
inline constexpr char kTraceKernelsPerStep[] = "trace_kernels_per_step";     // 1
inline constexpr char kTraceMeanKernel[] = "trace_mean_kernel_s";            // s
inline constexpr char kTraceSyncsPerStep[] = "trace_syncs_per_step";         // 1
inline constexpr char kTraceDataWaitShare[] = "trace_data_wait_share";       // 1
inline constexpr char kTraceKernelTime[] = "trace_kernel_time_s";            // s
inline constexpr char kTraceCopyBytes[] = "trace_copy_bytes";                // B
inline constexpr char kTraceStepWall[] = "trace_step_wall_s";                // s
inline constexpr char kTraceStepGpuBusy[] = "trace_step_gpu_busy_s";         // s
inline constexpr char kTraceStepDataWait[] = "trace_step_data_wait_s";       // s
inline constexpr char kTraceStepSync[] = "trace_step_sync_s";                // s
inline constexpr char kTraceStepKernels[] = "trace_step_kernels";            // 1
inline constexpr char kTraceStepCopyBytes[] = "trace_step_copy_bytes";       // B
inline constexpr char kTraceTimelineStep[] = "trace_timeline_step";          // s
inline constexpr char kTraceTimelineInterval[] = "trace_timeline_interval";  // s

}  // namespace gpuscope::store::names
