// The record-file parser behind gpuscope::trace::read_process_trace, on text in memory.
#pragma once

#include <string_view>

#include "gpuscope/status.h"
#include "gpuscope/trace.h"

namespace gpuscope::trace::detail {

// Parses the whole text of one record file into `trace` (path left as is). A last line without
// its newline is a cut line: counted as malformed if it does not parse. Fails with data_error
// when the first line is not a header of kRecordFormatVersion, and for a record without a field
// the injection library always writes, or with a field of the wrong type, naming the line, the
// record and the field ("line 12: kernel.start: missing"). Fields written only when set (a
// graph id, a sync's stream, ...) are optional.
Status parse_records(std::string_view text, ProcessTrace& trace);

}  // namespace gpuscope::trace::detail
