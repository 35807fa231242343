// Store records <-> JSON: the "gpuscope.records" file format (runs_to_json/runs_from_json in
// gpuscope/store.h) and the JSON columns of the SQLite store (peak_json).
#pragma once

#include <nlohmann/json.hpp>

#include "gpuscope/status.h"
#include "gpuscope/store.h"

namespace gpuscope::store::detail {

nlohmann::json peak_to_json(const PeakRecord& peak);
Result<PeakRecord> peak_from_json(const nlohmann::json& json);

std::optional<Severity> parse_severity(std::string_view name);

// Parses a JSON column written by the store; data_error naming `what` when it is not JSON.
Result<nlohmann::json> parse_json_column(const std::string& text, std::string_view what);

}  // namespace gpuscope::store::detail
