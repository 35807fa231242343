#include "inject/cupti_activity.h"

#include <cupti.h>
#include <dlfcn.h>
#include <unistd.h>

#include <atomic>
#include <cstdlib>
#include <vector>

#include "inject/activity_records.h"
#include "inject/api_calls.h"
#include "inject/buffer_pool.h"
#include "inject/clock.h"
#include "inject/json_line.h"
#include "inject/session.h"

namespace gpuscope::inject {
namespace {

constexpr size_t kBufferBytes = 4 << 20;  // one CUPTI activity buffer (kineto's size too)
constexpr size_t kMaxBuffers = 16;        // at most 64 MiB held for CUPTI; beyond, CUPTI drops
constexpr size_t kKeptFree = 2;           // buffers kept for reuse after formatting

struct KindMap {
  uint32_t bit;
  CUpti_ActivityKind kind;
  const char* name;
};
constexpr KindMap kKinds[] = {
    {kKernelBit, CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, "kernel"},
    {kMemcpyBit, CUPTI_ACTIVITY_KIND_MEMCPY, "memcpy"},
    {kMemcpyBit, CUPTI_ACTIVITY_KIND_MEMCPY2, "memcpy_peer"},
    {kMemsetBit, CUPTI_ACTIVITY_KIND_MEMSET, "memset"},
    {kRuntimeBit, CUPTI_ACTIVITY_KIND_RUNTIME, "runtime"},
    {kDriverBit, CUPTI_ACTIVITY_KIND_DRIVER, "driver"},
    {kSyncBit, CUPTI_ACTIVITY_KIND_SYNCHRONIZATION, "sync"},
    {kOverheadBit, CUPTI_ACTIVITY_KIND_OVERHEAD, "overhead"},
};

uint64_t CUPTIAPI session_clock() {
  return now_ns();
}

// Added to CUPTI's timestamps when CUPTI keeps its own clock (Config::cupti_clock), else 0.
std::atomic<uint64_t> g_clock_shift{0};

// Teardown: cuptiFinalize runs at the exit of the next CUDA call after it is armed (NVIDIA's
// advice: from an API callback), once; afterwards CUPTI costs the program nothing.
std::atomic<bool> g_finalize_armed{false};
std::atomic<uint64_t> g_finalized_ts{0};
std::atomic<int> g_finalize_result{CUPTI_SUCCESS};

void CUPTIAPI finalize_callback(void*, CUpti_CallbackDomain domain, CUpti_CallbackId,
                                const void* data) {
  if (domain != CUPTI_CB_DOMAIN_RUNTIME_API && domain != CUPTI_CB_DOMAIN_DRIVER_API) return;
  if (static_cast<const CUpti_CallbackData*>(data)->callbackSite != CUPTI_API_EXIT) return;
  if (!g_finalize_armed.exchange(false)) return;
  g_finalize_result.store(cuptiFinalize());
  g_finalized_ts.store(now_ns());
}

// The callback ids of one API domain whose calls get no record (api_calls.h).
std::vector<CUpti_CallbackId> unrecorded_calls(CUpti_CallbackDomain domain, uint32_t size) {
  std::vector<CUpti_CallbackId> ids;
  for (uint32_t id = 1; id < size; ++id) {
    const char* name = nullptr;
    if (cuptiGetCallbackName(domain, id, &name) == CUPTI_SUCCESS && name != nullptr &&
        !api_call_recorded(name)) {
      ids.push_back(id);
    }
  }
  return ids;
}

// Markers behind the GPU work queued so far: an event recorded on the legacy default stream of
// each active primary context (the runtime API's, PyTorch's), which waits for every blocking
// stream of that context. Work on non-blocking streams is not waited for. Driver calls are
// looked up at run time (the library links only CUPTI) and made from the flusher thread.
class GpuMarkers {
 public:
  // Queues the markers; false when the driver's functions cannot be found.
  bool place() {
    if (!load()) return false;
    int count = 0;
    if (device_get_count_(&count) != CUDA_SUCCESS) return false;
    for (int ordinal = 0; ordinal < count; ++ordinal) {
      CUdevice device = 0;
      unsigned flags = 0;
      int active = 0;
      if (device_get_(&device, ordinal) != CUDA_SUCCESS ||
          primary_state_(device, &flags, &active) != CUDA_SUCCESS || active == 0) {
        continue;
      }
      Marker marker{device, nullptr, nullptr};
      if (primary_retain_(&marker.context, device) != CUDA_SUCCESS) continue;
      if (push_(marker.context) == CUDA_SUCCESS) {
        if (event_create_(&marker.event, CU_EVENT_DISABLE_TIMING) == CUDA_SUCCESS &&
            event_record_(marker.event, nullptr) != CUDA_SUCCESS) {
          event_destroy_(marker.event);
          marker.event = nullptr;
        }
        CUcontext popped = nullptr;
        pop_(&popped);
      }
      if (marker.event != nullptr) {
        markers_.push_back(marker);
      } else {
        primary_release_(device);
      }
    }
    return true;
  }

  // Whether every marker has been reached (an error counts as reached: nothing to wait on).
  bool reached() {
    bool all = true;
    for (Marker& marker : markers_) {
      if (marker.done) continue;
      if (push_(marker.context) != CUDA_SUCCESS) {
        marker.done = true;
        continue;
      }
      marker.done = event_query_(marker.event) != CUDA_ERROR_NOT_READY;
      CUcontext popped = nullptr;
      pop_(&popped);
      all = all && marker.done;
    }
    return all;
  }

  // Lets go of the events and contexts (an event still pending is freed when reached).
  void release() {
    for (Marker& marker : markers_) {
      if (push_(marker.context) == CUDA_SUCCESS) {
        event_destroy_(marker.event);
        CUcontext popped = nullptr;
        pop_(&popped);
      }
      primary_release_(marker.device);
    }
    markers_.clear();
  }

 private:
  struct Marker {
    CUdevice device;
    CUcontext context;
    CUevent event;
    bool done = false;
  };

  template <typename F>
  bool find(void* library, const char* name, F& function) {
    function = reinterpret_cast<F>(dlsym(library, name));
    return function != nullptr;
  }

  bool load() {
    void* cuda = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD);
    if (cuda == nullptr) return false;
    return find(cuda, "cuDeviceGetCount", device_get_count_) &&
           find(cuda, "cuDeviceGet", device_get_) &&
           find(cuda, "cuDevicePrimaryCtxGetState", primary_state_) &&
           find(cuda, "cuDevicePrimaryCtxRetain", primary_retain_) &&
           find(cuda, "cuDevicePrimaryCtxRelease_v2", primary_release_) &&
           find(cuda, "cuCtxPushCurrent_v2", push_) && find(cuda, "cuCtxPopCurrent_v2", pop_) &&
           find(cuda, "cuEventCreate", event_create_) &&
           find(cuda, "cuEventRecord", event_record_) && find(cuda, "cuEventQuery", event_query_) &&
           find(cuda, "cuEventDestroy_v2", event_destroy_);
  }

  CUresult (*device_get_count_)(int*) = nullptr;
  CUresult (*device_get_)(CUdevice*, int) = nullptr;
  CUresult (*primary_state_)(CUdevice, unsigned*, int*) = nullptr;
  CUresult (*primary_retain_)(CUcontext*, CUdevice) = nullptr;
  CUresult (*primary_release_)(CUdevice) = nullptr;
  CUresult (*push_)(CUcontext) = nullptr;
  CUresult (*pop_)(CUcontext*) = nullptr;
  CUresult (*event_create_)(CUevent*, unsigned) = nullptr;
  CUresult (*event_record_)(CUevent, CUstream) = nullptr;
  CUresult (*event_query_)(CUevent) = nullptr;
  CUresult (*event_destroy_)(CUevent) = nullptr;
  std::vector<Marker> markers_;
};

class CuptiBackend final : public ActivityBackend {
 public:
  explicit CuptiBackend(Session& session)
      : session_(session), pid_(getpid()), pool_(kBufferBytes, kMaxBuffers, kKeptFree) {}

  void enable() override {
    if (finalizing_) return;
    for (const auto& kind : kKinds) {
      if ((session_.config().kinds & kind.bit) == 0) continue;
      report_error("cuptiActivityEnable", kind.name, cuptiActivityEnable(kind.kind));
      if (!session_.config().api_all) leave_out_calls(kind.bit);
    }
  }

  void disable() override {
    gpu_markers_.release();
    if (finalizing_) return;
    for (const auto& kind : kKinds) {
      if ((session_.config().kinds & kind.bit) == 0) continue;
      report_error("cuptiActivityDisable", kind.name, cuptiActivityDisable(kind.kind));
    }
  }

  bool gpu_done() override {
    if (forgotten() || finalizing_) return true;
    if (!markers_placed_) {
      markers_placed_ = true;
      if (!gpu_markers_.place()) return true;
    }
    return gpu_markers_.reached();
  }

  void flush(bool forced) override {
    if (forgotten() || finalizing_) return;
    cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
  }

  bool wants_draining() override { return pool_.wants_draining(); }

  void drain() override {
    for (const BufferPool::Filled& filled : pool_.take_filled()) {
      if (!forgotten()) format(filled.buffer, filled.valid_bytes);
      pool_.release(filled.buffer);
    }
    if (const uint64_t ts = g_finalized_ts.load(); ts != 0 && !teardown_reported_.exchange(true)) {
      session_.with_writer([&](RecordWriter& writer, std::string& scratch) {
        JsonLine line(scratch, "cupti_teardown");
        line.u("ts", ts).s("status", g_finalize_result.load() == CUPTI_SUCCESS ? "ok" : "failed");
        if (g_finalize_result.load() != CUPTI_SUCCESS) {
          line.s("error", cupti_error_name(static_cast<CUptiResult>(g_finalize_result.load())));
        }
        writer.append(line.end(), RecordKind::other, /*forced=*/true);
      });
    }
  }

  void teardown() override {
    if (!session_.config().teardown || forgotten() || finalizing_) return;
    if (graphs_seen_) {
      // Detaching CUPTI from a process that replays CUDA graphs crashed it in the driver's
      // cuGraphLaunch (gpuscope-torch --graphs on, H200, driver 580): CUPTI stays, its
      // activity kinds off since the window closed.
      session_.with_writer([&](RecordWriter& writer, std::string& scratch) {
        JsonLine line(scratch, "cupti_teardown");
        line.u("ts", now_ns()).s("status", "skipped").s("reason", "cuda_graphs");
        writer.append(line.end(), RecordKind::other, /*forced=*/true);
      });
      return;
    }
    // A subscriber of our own for the API callbacks; refused while another tool (a
    // torch.profiler started meanwhile) holds CUPTI: then CUPTI stays.
    CUpti_SubscriberHandle subscriber = nullptr;
    const CUptiResult subscribed = cuptiSubscribe(&subscriber, finalize_callback, nullptr);
    const bool enabled =
        subscribed == CUPTI_SUCCESS &&
        cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_RUNTIME_API) == CUPTI_SUCCESS &&
        cuptiEnableDomain(1, subscriber, CUPTI_CB_DOMAIN_DRIVER_API) == CUPTI_SUCCESS;
    if (!enabled) {
      if (subscribed == CUPTI_SUCCESS) cuptiUnsubscribe(subscriber);
      report_error("cuptiSubscribe", "teardown",
                   subscribed != CUPTI_SUCCESS ? subscribed : CUPTI_ERROR_NOT_INITIALIZED);
      return;
    }
    finalizing_ = true;  // from here on nothing of ours calls CUPTI
    session_.with_writer([&](RecordWriter& writer, std::string& scratch) {
      JsonLine line(scratch, "cupti_teardown");
      line.u("ts", now_ns()).s("status", "requested");
      writer.append(line.end(), RecordKind::other, /*forced=*/true);
    });
    g_finalize_armed.store(true);
  }

  void forget_after_fork() override { forgotten_ = true; }

  bool forgotten() const { return forgotten_ || getpid() != pid_; }

  // CUPTI asks for an empty buffer; none beyond the pool's bound (CUPTI then counts drops).
  void give_buffer(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = pool_.acquire();
    *size = *buffer != nullptr ? pool_.buffer_bytes() : 0;
    *max_records = 0;
  }

  // CUPTI hands back a filled buffer: queued for the flusher thread (which formats it after the
  // window, or within a tick once half the pool waits), or formatted now without defer.
  void take_buffer(uint8_t* buffer, size_t valid_size) {
    pool_.fill(buffer, valid_size);
    if (!session_.config().defer) drain();
  }

  void report_error(const char* call, const char* kind, CUptiResult result) {
    if (result == CUPTI_SUCCESS) return;
    session_.with_writer([&](RecordWriter& writer, std::string& scratch) {
      JsonLine line(scratch, "cupti_error");
      line.s("call", call).s("kind", kind).s("error", cupti_error_name(result));
      writer.append(line.end(), RecordKind::other);
    });
  }

 private:
  void format(uint8_t* buffer, size_t valid_size) {
    CUpti_Activity* record = nullptr;
    while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
      const char* api_name = api_callback_name(*record);
      if (from_cuda_graph(*record)) graphs_seen_ = true;
      session_.with_writer([&](RecordWriter& writer, std::string& scratch) {
        write_activity(writer, *record, scratch, api_name,
                       g_clock_shift.load(std::memory_order_relaxed));
      });
    }
    size_t dropped = 0;
    if (!finalizing_ && cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS &&
        dropped != 0) {
      session_.with_writer([&](RecordWriter& writer, std::string& scratch) {
        JsonLine line(scratch, "dropped");
        line.s("reason", "cupti_buffers").u("count", dropped).u("ts", now_ns());
        writer.append(line.end(), RecordKind::other, /*forced=*/true);
      });
    }
  }

  // With a runtime or driver kind enabled, turns off the records of the calls not in
  // api_calls.h, as kineto does for cudaGetDevice (CUPTI's documented way; enabling single calls
  // without the kind recorded nothing on the H100). On a CUPTI that refuses, every call stays
  // recorded.
  void leave_out_calls(uint32_t bit) {
    if (bit != kRuntimeBit && bit != kDriverBit) return;
    const bool runtime = bit == kRuntimeBit;
    auto& ids = runtime ? runtime_unrecorded_ : driver_unrecorded_;
    if (ids.empty()) {
      ids = runtime ? unrecorded_calls(CUPTI_CB_DOMAIN_RUNTIME_API, CUPTI_RUNTIME_TRACE_CBID_SIZE)
                    : unrecorded_calls(CUPTI_CB_DOMAIN_DRIVER_API, CUPTI_DRIVER_TRACE_CBID_SIZE);
    }
    for (const CUpti_CallbackId id : ids) {
      const CUptiResult r =
          runtime ? cuptiActivityEnableRuntimeApi(id, 0) : cuptiActivityEnableDriverApi(id, 0);
      if (r != CUPTI_SUCCESS) {
        report_error(runtime ? "cuptiActivityEnableRuntimeApi" : "cuptiActivityEnableDriverApi",
                     runtime ? "runtime" : "driver", r);
        return;
      }
    }
  }

  Session& session_;
  pid_t pid_;
  bool forgotten_ = false;
  std::atomic<bool> finalizing_{false};
  std::atomic<bool> teardown_reported_{false};
  std::atomic<bool> graphs_seen_{
      false};  // a record of CUDA-graph work was formatted (flusher thread)
  BufferPool pool_;
  GpuMarkers gpu_markers_;  // the flusher's
  bool markers_placed_ = false;
  std::vector<CUpti_CallbackId> runtime_unrecorded_;
  std::vector<CUpti_CallbackId> driver_unrecorded_;
};

CuptiBackend* g_backend = nullptr;

void CUPTIAPI buffer_requested(uint8_t** buffer, size_t* size, size_t* max_records) {
  try {
    if (g_backend != nullptr) {
      g_backend->give_buffer(buffer, size, max_records);
      return;
    }
  } catch (...) {
  }
  *buffer = nullptr;
  *size = 0;
  *max_records = 0;
}

void CUPTIAPI buffer_completed(CUcontext, uint32_t, uint8_t* buffer, size_t, size_t valid) {
  try {
    if (g_backend != nullptr) {
      g_backend->take_buffer(buffer, valid);
      return;
    }
  } catch (...) {
  }
  std::free(buffer);
}

void CUPTIAPI ignore_callback(void*, CUpti_CallbackDomain, CUpti_CallbackId, const void*) {}

void write_status(Session& session, const char* status, const std::string& reason) {
  uint32_t version = 0;
  cuptiGetVersion(&version);
  session.with_writer([&](RecordWriter& writer, std::string& scratch) {
    JsonLine line(scratch, "cupti");
    line.s("status", status).u("ts", now_ns()).u("version", version);
    line.u("header_version", CUPTI_API_VERSION);
    if (!reason.empty()) line.s("reason", reason);
    writer.append(line.end(), RecordKind::other, /*forced=*/true);
    writer.flush();
  });
}

}  // namespace

std::string cupti_error_name(CUptiResult result) {
  const char* text = nullptr;
  if (cuptiGetResultString(result, &text) != CUPTI_SUCCESS || text == nullptr) {
    return "CUPTI error " + std::to_string(static_cast<int>(result));
  }
  return text;
}

const char* api_callback_name(const CUpti_Activity& record) noexcept {
  if (record.kind != CUPTI_ACTIVITY_KIND_RUNTIME && record.kind != CUPTI_ACTIVITY_KIND_DRIVER) {
    return nullptr;
  }
  const auto& api = reinterpret_cast<const CUpti_ActivityAPI&>(record);
  const char* name = nullptr;
  const CUptiResult result =
      cuptiGetCallbackName(record.kind == CUPTI_ACTIVITY_KIND_RUNTIME ? CUPTI_CB_DOMAIN_RUNTIME_API
                                                                      : CUPTI_CB_DOMAIN_DRIVER_API,
                           api.cbid, &name);
  return result == CUPTI_SUCCESS ? name : nullptr;
}

void start_cupti(Session& session) noexcept {
  try {
    if (g_backend != nullptr) return;
    if (dlopen("libcuda.so.1", RTLD_LAZY | RTLD_NOLOAD) == nullptr) {
      write_status(session, "unavailable", "the CUDA driver (libcuda.so.1) is not loaded");
      return;
    }
    // Probe for another CUPTI client (nsys, a profiler already running): CUPTI takes one
    // subscriber. Let go at once, so a torch.profiler started later can still subscribe.
    CUpti_SubscriberHandle probe = nullptr;
    const CUptiResult subscribed = cuptiSubscribe(&probe, ignore_callback, nullptr);
    if (subscribed == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED) {
      write_status(session, "taken_by_another_subscriber",
                   "another tool already uses CUPTI (nsys, ncu, a running profiler)");
      return;
    }
    if (subscribed != CUPTI_SUCCESS) {
      write_status(session, "unavailable", "cuptiSubscribe: " + cupti_error_name(subscribed));
      return;
    }
    cuptiUnsubscribe(probe);
    if (session.config().cupti_clock) {
      // Both clocks read back to back: the offset is good to about a microsecond.
      uint64_t cupti_ts = 0;
      if (const CUptiResult r = cuptiGetTimestamp(&cupti_ts); r != CUPTI_SUCCESS) {
        write_status(session, "unavailable", "cuptiGetTimestamp: " + cupti_error_name(r));
        return;
      }
      g_clock_shift.store(now_ns() - cupti_ts, std::memory_order_relaxed);
    } else if (const CUptiResult r = cuptiActivityRegisterTimestampCallback(session_clock);
               r != CUPTI_SUCCESS) {
      write_status(session, "unavailable",
                   "cuptiActivityRegisterTimestampCallback: " + cupti_error_name(r));
      return;
    }
    // API records name their thread by the kernel's thread id, as NVTX records and /proc do
    // (CUPTI's default is pthread_self(), which matches nothing else; seen on the H100).
    if (const CUptiResult r = cuptiSetThreadIdType(CUPTI_ACTIVITY_THREAD_ID_TYPE_SYSTEM);
        r != CUPTI_SUCCESS) {
      session.with_writer([&](RecordWriter& writer, std::string& scratch) {
        JsonLine line(scratch, "cupti_error");
        line.s("call", "cuptiSetThreadIdType").s("kind", "").s("error", cupti_error_name(r));
        writer.append(line.end(), RecordKind::other);
      });
    }
    auto* backend = new CuptiBackend(session);  // lives as long as the process
    g_backend = backend;
    // Before any context exists (cuInit is running): the device buffer applies to every one.
    if (size_t bytes = session.config().cupti_device_buffer_bytes; bytes != 0) {
      size_t size = sizeof bytes;
      backend->report_error(
          "cuptiActivitySetAttribute", "device_buffer_size",
          cuptiActivitySetAttribute(CUPTI_ACTIVITY_ATTR_DEVICE_BUFFER_SIZE, &size, &bytes));
    }
    // Our buffers come zeroed (BufferPool): else CUPTI zeroes each on the program's thread.
    if (session.config().zeroed_buffers) {
      uint8_t zeroed = 1;
      size_t size = sizeof zeroed;
      backend->report_error("cuptiActivitySetAttribute", "zeroed_out_activity_buffer",
                            cuptiActivitySetAttribute(
                                CUPTI_ACTIVITY_ATTR_ZEROED_OUT_ACTIVITY_BUFFER, &size, &zeroed));
    }
    if (const CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
        r != CUPTI_SUCCESS) {
      write_status(session, "unavailable",
                   "cuptiActivityRegisterCallbacks: " + cupti_error_name(r));
      return;
    }
    if (const uint32_t period = session.config().cupti_flush_period_ms; period != 0) {
      backend->report_error("cuptiActivityFlushPeriod", "", cuptiActivityFlushPeriod(period));
    }
    write_status(session, "ok", "");
    session.attach_backend(backend);
  } catch (...) {
  }
}

}  // namespace gpuscope::inject
