// How `gpuscope info` is shown: a console table for people and versioned JSON for programs.
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>

#include "gpuscope/info.h"

namespace gpuscope {

// Bumped whenever a field is renamed, removed or changes meaning (adding fields does not).
inline constexpr int kInfoSchemaVersion = 1;

// {"schema_version": 1, "kind": "gpuscope.info", "host": ..., "gpus": [...], "failures": [...]}.
// Absent readings are omitted (never 0 or null); units are SI and named in the key (_bytes, _w,
// _c, _mhz, _flops_per_s).
nlohmann::json info_to_json(const SystemInfo& info);

void print_info(const SystemInfo& info, std::ostream& out);

}  // namespace gpuscope
