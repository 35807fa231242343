// JSON forms of the telemetry records: the JSON-lines sink writes them, read_recording reads
// them back, and the summary JSON reuses the per-GPU parts.
#pragma once

#include <nlohmann/json.hpp>

#include "common/json_fields.h"
#include "gpuscope/monitor.h"
#include "gpuscope/telemetry.h"

namespace gpuscope::telemetry::detail {

nlohmann::json identity_to_json(const SampledGpu& gpu);
// Problems (a field of the wrong type) are left in `fields`.
SampledGpu identity_from_json(gpuscope::detail::JsonFields& fields);

// {"type": "sample", "t_s", "unix_s", "gpu", metrics by name (absent = not read),
//  "gpm_interval_s", "processes": [...] when read, "problems": [...] when any}.
nlohmann::json sample_to_json(const GpuSample& sample);
// data_error naming the field when a line does not follow the format.
Result<GpuSample> sample_from_json(const nlohmann::json& j);

// The session-independent part of the summary (no command, sinks or endpoint).
nlohmann::json summary_core_to_json(const Summary& summary);

}  // namespace gpuscope::telemetry::detail
