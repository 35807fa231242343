// Store records <-> JSON: the "gpuscope.records" file format (runs_to_json/runs_from_json in
// gpuscope/store.h) and the JSON columns of the SQLite store (peak_json).
#pragma once

#include <nlohmann/json.hpp>

#include "gpuscope/status.h"
#include "gpuscope/store.h"

namespace gpuscope::store::detail {

nlohmann::json peak_to_json(const PeakRecord& peak);
Result<PeakRecord> peak_from_json(const nlohmann::json& json);

using analysis::parse_severity;

// What a finding holds beyond its id, severity, title and GPU (evidence, fix, expected gain,
// confidence, subjects), as analysis::to_json writes those fields; the store keeps it in one
// column and the records format beside "code" and "text".
nlohmann::json finding_details(const Finding& finding);
// Fills those fields of `finding` from `details`; false (finding unchanged) when malformed.
bool read_finding_details(const nlohmann::json& details, Finding& finding);

// Parses a JSON column written by the store; data_error naming `what` when it is not JSON.
Result<nlohmann::json> parse_json_column(const std::string& text, std::string_view what);

}  // namespace gpuscope::store::detail
