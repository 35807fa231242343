// The one clock of a trace file: CLOCK_MONOTONIC in nanoseconds, the clock behind
// std::chrono::steady_clock, which gpuscope's sampler uses. CUPTI is handed the same clock
// (cuptiActivityRegisterTimestampCallback), so kernels, API calls and NVTX marks compare directly.
#pragma once

#include <cstdint>

namespace gpuscope::inject {

inline constexpr const char* kClockName = "CLOCK_MONOTONIC";

uint64_t now_ns();           // CLOCK_MONOTONIC
uint64_t realtime_now_ns();  // CLOCK_REALTIME, for the header's pair of readings

// The calling thread's kernel thread id (gettid), cached per thread.
uint32_t current_tid();

}  // namespace gpuscope::inject
