// How `gpuscope info` is shown: a console table for people and versioned JSON for programs.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "gpuscope/info.h"
#include "gpuscope/status.h"

namespace gpuscope {

// Bumped whenever a field is renamed, removed or changes meaning (adding fields does not).
inline constexpr int kInfoSchemaVersion = 1;

// {"schema_version": 1, "kind": "gpuscope.info", "host": ..., "gpus": [...], "failures": [...]}.
// Absent readings are omitted (never 0 or null); units are SI and named in the key (_bytes, _w,
// _c, _mhz, _flops_per_s).
nlohmann::json info_to_json(const SystemInfo& info);

// The one reader of that document: info_from_json(info_to_json(x)) writes back as x.
// data_error naming the first missing or mistyped field ("info.gpus[0].memory.total_bytes:
// expected a non-negative integer"), for a document of another kind or a newer schema, and for
// an error document (saying what `info` reported).
Result<SystemInfo> info_from_json(const nlohmann::json& document);

// {"schema_version": 1, "kind": "gpuscope.info", "error": {"code", "message"}}.
nlohmann::json info_error_json(const Status& status);

void print_info(const SystemInfo& info, std::ostream& out);

}  // namespace gpuscope
