// summary.json of a trace ("kind": "gpuscope.trace", "schema_version": kTraceSchemaVersion),
// and the console text drawn from it. SI units; key names carry them (_s, _bytes).
#pragma once

#include <nlohmann/json.hpp>
#include <ostream>
#include <vector>

#include "gpuscope/trace.h"
#include "trace/summary.h"

namespace gpuscope::trace::detail {

// The summary, the window and the traced processes. The caller adds the command and its exit.
nlohmann::json summary_to_json(const TraceSummary& summary, const Timeline& timeline,
                               const std::vector<ProcessTrace>& processes);

// Notes a reader must see (CUPTI taken or unavailable, a process killed, records dropped, the
// program ending before the window opened), from the processes and the summary.
std::vector<std::string> trace_notes(const TraceSummary& summary,
                                     const std::vector<ProcessTrace>& processes);

// The console report drawn from summary.json's content.
void print_summary_json(const nlohmann::json& summary, std::ostream& out);

}  // namespace gpuscope::trace::detail
