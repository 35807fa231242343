// CUPTI activity records -> record-file lines (docs/trace-records.md): kernels, copies, memsets,
// runtime and driver API calls, synchronizations, CUPTI overheads.
#pragma once

#include <cupti_activity.h>

#include <string>

#include "inject/record_writer.h"

namespace gpuscope::inject {

// Writes the line of one CUPTI record; kinds the format does not know are skipped (false).
// `api_name` names a runtime or driver call (api_callback_name, looked up outside the lock).
// `shift` is added to every timestamp (modulo 2^64): CUPTI's own clock to the file's, when CUPTI
// is not handed the file's clock (GPUSCOPE_TRACE_CUPTI_CLOCK=1).
// REQUIRES: writer.mutex() held. `scratch` is any string the caller lends for formatting.
bool write_activity(RecordWriter& writer, const CUpti_Activity& record, std::string& scratch,
                    const char* api_name = nullptr, uint64_t shift = 0);

// Whether the record is of work a CUDA graph launched (kernels, copies and memsets carry the id).
bool from_cuda_graph(const CUpti_Activity& record);

// Stable names the file uses for CUPTI's enumerations.
const char* memcpy_kind_name(uint32_t kind);    // "HtoD", "DtoH", "DtoD", "HtoH", "PtoP", ...
const char* memory_kind_name(uint32_t kind);    // "pageable", "pinned", "device", "managed", ...
const char* sync_type_name(uint32_t type);      // "stream_synchronize", "event_synchronize", ...
const char* overhead_kind_name(uint32_t kind);  // "command_buffer_full", "cupti_buffer_flush", ...

}  // namespace gpuscope::inject
