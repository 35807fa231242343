#include "inject/cupti_activity.h"

#include <cupti.h>
#include <dlfcn.h>
#include <unistd.h>

#include <cstdlib>
#include <mutex>
#include <vector>

#include "inject/activity_records.h"
#include "inject/clock.h"
#include "inject/json_line.h"
#include "inject/session.h"

namespace gpuscope::inject {
namespace {

constexpr size_t kBufferBytes = 4 << 20;  // one CUPTI activity buffer
constexpr size_t kMaxBuffers = 8;         // at most 32 MiB held for CUPTI; beyond, CUPTI drops
constexpr size_t kBufferAlign = 8;

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

class CuptiBackend final : public ActivityBackend {
 public:
  explicit CuptiBackend(Session& session) : session_(session), pid_(getpid()) {}

  void enable() override {
    for (const auto& kind : kKinds) {
      if ((session_.config().kinds & kind.bit) == 0) continue;
      report_error("cuptiActivityEnable", kind.name, cuptiActivityEnable(kind.kind));
    }
  }

  void disable() override {
    for (const auto& kind : kKinds) {
      if ((session_.config().kinds & kind.bit) == 0) continue;
      report_error("cuptiActivityDisable", kind.name, cuptiActivityDisable(kind.kind));
    }
  }

  void flush(bool forced) override {
    if (forgotten_ || getpid() != pid_) return;
    cuptiActivityFlushAll(forced ? CUPTI_ACTIVITY_FLAG_FLUSH_FORCED : 0);
  }

  void forget_after_fork() override { forgotten_ = true; }

  bool forgotten() const { return forgotten_ || getpid() != pid_; }

  // CUPTI asks for an empty buffer; none beyond kMaxBuffers (CUPTI then counts drops).
  void give_buffer(uint8_t** buffer, size_t* size, size_t* max_records) {
    *buffer = nullptr;
    *size = 0;
    *max_records = 0;
    std::lock_guard lock(pool_mutex_);
    if (outstanding_ >= kMaxBuffers) return;
    void* memory = nullptr;
    if (!free_.empty()) {
      memory = free_.back();
      free_.pop_back();
    } else {
      memory = std::aligned_alloc(kBufferAlign, kBufferBytes);
    }
    if (memory == nullptr) return;
    ++outstanding_;
    *buffer = static_cast<uint8_t*>(memory);
    *size = kBufferBytes;
  }

  // CUPTI hands back a filled buffer: its records go to the file, the buffer to the pool.
  void take_buffer(uint8_t* buffer, size_t valid_size) {
    if (!forgotten()) {
      CUpti_Activity* record = nullptr;
      while (cuptiActivityGetNextRecord(buffer, valid_size, &record) == CUPTI_SUCCESS) {
        const char* api_name = api_callback_name(*record);
        session_.with_writer([&](RecordWriter& writer, std::string& scratch) {
          write_activity(writer, *record, scratch, api_name);
        });
      }
      size_t dropped = 0;
      if (cuptiActivityGetNumDroppedRecords(nullptr, 0, &dropped) == CUPTI_SUCCESS &&
          dropped != 0) {
        session_.with_writer([&](RecordWriter& writer, std::string& scratch) {
          JsonLine line(scratch, "dropped");
          line.s("reason", "cupti_buffers").u("count", dropped).u("ts", now_ns());
          writer.append(line.end(), RecordKind::other, /*forced=*/true);
        });
      }
    }
    std::lock_guard lock(pool_mutex_);
    if (outstanding_ > 0) --outstanding_;
    if (free_.size() < 2) {
      free_.push_back(buffer);
    } else {
      std::free(buffer);
    }
  }

 private:
  void report_error(const char* call, const char* kind, CUptiResult result) {
    if (result == CUPTI_SUCCESS) return;
    session_.with_writer([&](RecordWriter& writer, std::string& scratch) {
      JsonLine line(scratch, "cupti_error");
      line.s("call", call).s("kind", kind).s("error", cupti_error_name(result));
      writer.append(line.end(), RecordKind::other);
    });
  }

  Session& session_;
  pid_t pid_;
  bool forgotten_ = false;
  std::mutex pool_mutex_;
  std::vector<void*> free_;
  size_t outstanding_ = 0;
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
    if (const CUptiResult r = cuptiActivityRegisterTimestampCallback(session_clock);
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
    if (const CUptiResult r = cuptiActivityRegisterCallbacks(buffer_requested, buffer_completed);
        r != CUPTI_SUCCESS) {
      write_status(session, "unavailable",
                   "cuptiActivityRegisterCallbacks: " + cupti_error_name(r));
      return;
    }
    write_status(session, "ok", "");
    session.attach_backend(backend);
  } catch (...) {
  }
}

}  // namespace gpuscope::inject
