// What gpuscope asks of the injection library, read once from the environment.
//
//   GPUSCOPE_TRACE_DIR          the run folder (required: without it the library records nothing)
//   GPUSCOPE_TRACE_SKIP_STEPS   steps before the recording window opens
//   GPUSCOPE_TRACE_STEPS        steps the window covers
//   GPUSCOPE_TRACE_SKIP_S       seconds (after the library started in the process) before it opens
//   GPUSCOPE_TRACE_DURATION_S   seconds the window stays open
//   GPUSCOPE_TRACE_STEP_MARK    the NVTX mark message that ends a step ("gpuscope.step")
//   GPUSCOPE_TRACE_MAX_BYTES    cap on one process's record file (0 or unset: none)
//   GPUSCOPE_TRACE_FLUSH_MS     how often buffered records reach the file (500)
//   GPUSCOPE_TRACE_KINDS        CUPTI activity kinds recorded in the window, comma-separated, of
//                               kernel,memcpy,memset,runtime,driver,sync,overhead (all)
//   GPUSCOPE_TRACE_API          "calls": runtime/driver records only for launches, copies,
//                               memsets, synchronizations and allocations (api_calls.h);
//                               "all": every call ("calls")
//   GPUSCOPE_TRACE_DEFER        1: CUPTI's filled buffers are formatted after the window (or when
//                               half the pool waits); 0: as they arrive (1)
//   GPUSCOPE_TRACE_TEARDOWN     1: CUPTI is detached (cuptiFinalize) once the window's records
//                               are in, so the steps after the window run as without it (1)
//   GPUSCOPE_TRACE_GPU_WAIT_S   after the window closes, how long CUPTI keeps recording while the
//                               GPU finishes the work queued inside it (30; 0: stop at once)
//   GPUSCOPE_TRACE_CUPTI_CLOCK  1: CUPTI keeps its own clock and records are moved onto the file's
//                               clock by the offset read when CUPTI starts; 0: CUPTI is handed
//                               the file's clock (cuptiActivityRegisterTimestampCallback) (0)
//   GPUSCOPE_TRACE_CUPTI_ZEROED_BUFFERS  1: the activity buffers are zeroed by the library off the
//                               program's threads and CUPTI is told so; 0: CUPTI zeroes each
//                               one itself, on whichever thread asked for it (1)
// docs/trace-records.md describes how the window settings combine.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace gpuscope::inject {

enum ActivityKindBit : uint32_t {
  kKernelBit = 1u << 0,
  kMemcpyBit = 1u << 1,
  kMemsetBit = 1u << 2,
  kRuntimeBit = 1u << 3,
  kDriverBit = 1u << 4,
  kSyncBit = 1u << 5,
  kOverheadBit = 1u << 6,
  kAllKindBits = (1u << 7) - 1,
};

// The NVTX mark the Python shim emits when the program makes its first optimizer: step marks
// will come (the window then waits for them, not for the time warm-up).
inline constexpr std::string_view kStepsExpectedMark = "gpuscope.steps_expected";

struct Config {
  std::string dir;
  std::optional<uint64_t> skip_steps;
  std::optional<uint64_t> steps;
  std::optional<double> skip_s;
  std::optional<double> duration_s;
  std::string step_mark = "gpuscope.step";
  uint64_t max_bytes = 0;  // 0: no cap
  uint32_t flush_ms = 500;
  uint32_t kinds = kAllKindBits;
  bool api_all = false;
  bool defer = true;
  bool teardown = true;
  double gpu_wait_s = 30;
  bool cupti_clock = false;
  bool zeroed_buffers = true;  // CUPTI told our activity buffers come zeroed
  // CUPTI's own settings, for measuring what tracing costs: its worker thread's flush period
  // (0: CUPTI's heuristics) and the device buffer for kernel/copy/memset timestamps, per buffer
  // (0: CUPTI's default, 3.2 MB, about 100,000 records).
  uint32_t cupti_flush_period_ms = 0;
  uint64_t cupti_device_buffer_bytes = 0;
  std::vector<std::string> errors;  // "GPUSCOPE_TRACE_STEPS: not a number" (the value is ignored)
};

// `getenv` is a parameter so tests can hand in their own environment.
Config read_config(const char* (*getenv_fn)(const char*));

// "kernel,memcpy,..." for the header.
std::string kind_list(uint32_t kinds);

}  // namespace gpuscope::inject
