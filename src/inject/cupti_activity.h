// The CUPTI side of the injection: timestamps on the session's clock, activity buffers from a
// bounded pool, the configured kinds enabled only while the recording window is open.
#pragma once

#include <cupti_activity.h>

#include <string>

namespace gpuscope::inject {

class Session;

// Sets CUPTI up for `session` and attaches it; writes a "cupti" record saying whether CUPTI is
// usable ("ok"), missing or failing ("unavailable", with the reason) or already used by another
// tool ("taken_by_another_subscriber"). Never throws; on failure NVTX recording goes on.
void start_cupti(Session& session) noexcept;

// The name of a runtime or driver API record's function ("cudaLaunchKernel_v7000"), or nullptr.
const char* api_callback_name(const CUpti_Activity& record) noexcept;

// "CUPTI_ERROR_UNKNOWN" for a CUPTI result code.
std::string cupti_error_name(CUptiResult result);

}  // namespace gpuscope::inject
