// What a trace window holds, in the form the analysis reads: GPU activity (kernels, copies,
// memsets) and host intervals (API calls, synchronizations, NVTX ranges) on one clock, in
// nanoseconds. The record files of every traced process are merged into one Timeline.
#pragma once

#include <sys/types.h>

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

namespace gpuscope::trace::detail {

enum class CopyKind {
  host_to_device,
  device_to_host,
  device_to_device,
  host_to_host,
  peer,
  other,
};
// A copy kind's name in summary.json ("host_to_device", ...).
const char* copy_kind_name(CopyKind kind);
// Its name in CUPTI's records and the Chrome trace ("HtoD", "DtoH", "DtoD", "HtoH", "PtoP"; other
// is "copy"), and the kind such a name is (other for the rest: "HtoA", ...).
const char* cupti_copy_name(CopyKind kind);
CopyKind copy_kind_from_cupti(std::string_view name);

struct GpuActivity {
  enum class Kind { kernel, memcpy, memset };
  Kind kind = Kind::kernel;
  int device = 0;
  std::uint32_t stream = 0;
  std::int64_t start_ns = 0, end_ns = 0;
  pid_t pid = 0;
  std::uint32_t name = 0;   // kernels: index into Timeline::names
  std::uint64_t bytes = 0;  // copies and memsets
  CopyKind copy = CopyKind::other;
  bool pageable = false;  // a copy from or to pageable host memory
  std::uint64_t correlation = 0;
  std::optional<std::uint32_t> graph;  // launched as part of this CUDA graph
};
// " pageable" or " pinned" for a copy between host and device (its host memory sets its
// speed); "" for any other activity.
const char* host_memory_suffix(const GpuActivity& a);

struct HostInterval {
  enum class Kind {
    api,        // a runtime or driver API call
    sync,       // the host blocked on the device (stream/event/context synchronize)
    range,      // an NVTX range
    data_wait,  // the shim's range around DataLoader.__next__
  };
  Kind kind = Kind::api;
  pid_t pid = 0, tid = 0;
  std::int64_t start_ns = 0, end_ns = 0;
  std::uint32_t name = 0;         // index into Timeline::names
  std::uint64_t correlation = 0;  // API calls: links a launch to its kernel
};

struct Mark {
  pid_t pid = 0, tid = 0;
  std::int64_t at_ns = 0;
  std::uint32_t name = 0;
};

struct Timeline {
  std::vector<std::string> names;  // interned strings
  std::vector<GpuActivity> gpu;
  std::vector<HostInterval> host;
  std::vector<Mark> marks;
  // The traced steps' span. CUPTI may have recorded from earlier (recording_start_ns): a window
  // opened on time whose program marked steps later (warm-up, not traced steps).
  std::int64_t window_start_ns = 0, window_end_ns = 0;
  std::int64_t recording_start_ns = 0;
  // Where CUPTI's records begin: the window's start, or the earlier recording start.
  std::int64_t recorded_from() const {
    return recording_start_ns > 0 ? std::min(recording_start_ns, window_start_ns) : window_start_ns;
  }
  pid_t main_pid = 0;  // the observed command's process
  // Whether synchronizations were recorded (the "sync" kind, off in a light trace): else a count
  // of 0 means nothing.
  bool syncs_recorded = true;

  // Interns `s` and returns its index.
  std::uint32_t intern(const std::string& s);
  std::unordered_map<std::string, std::uint32_t> name_index;
};

}  // namespace gpuscope::trace::detail
