// gpuscope's own NVTX injection: NVTX_INJECTION64_PATH names this library, and every module that
// uses the NVTX v3 headers (PyTorch's torch.cuda.nvtx, a user's own code) hands its function
// table to InitializeInjectionNvtx2. Marks, push/pop and start/end ranges, thread and category
// names become record lines; the step mark ("gpuscope.step") moves the recording window.
//
// Push/pop ranges are written when they end, complete (start, end, depth in their thread's stack
// of the same domain); ranges still open when the process dies are not in the file.
#define NVTX_NO_IMPL
#include <nvtx3/nvToolsExt.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <atomic>
#include <deque>
#include <map>
#include <mutex>
#include <string>
#include <unordered_map>

#include "inject/clock.h"
#include "inject/json_line.h"
#include "inject/session.h"

namespace gpuscope::inject {
namespace {

constexpr uint32_t kMaxDepth = 256;           // deeper pushes are counted, not recorded
constexpr size_t kMaxOpenStartEnd = 1 << 16;  // start/end ranges waiting for their end

// Handles given out to NVTX callers: they live as long as the process.
struct Domain {
  uint32_t id;
  std::string name;
};
struct RegisteredString {
  std::string text;
};

struct Frame {
  uint64_t start;
  uint32_t name;
  uint32_t domain;
};
struct ThreadStack {
  Frame frames[kMaxDepth];
  uint32_t depth = 0;
  uint32_t overflow = 0;  // pushes beyond kMaxDepth still waiting for their pop
  pid_t pid = 0;          // the process whose thread announced itself ("thread" line)
};
thread_local ThreadStack t_stack;

struct OpenRange {
  uint64_t start;
  uint32_t name;
  uint32_t domain;
  uint32_t tid;
};

struct Registry {
  std::mutex mutex;
  std::map<std::string, Domain*, std::less<>> domains;
  std::map<std::string, RegisteredString*, std::less<>> strings;
  std::unordered_map<uint64_t, OpenRange> open;  // start/end ranges by id
  uint32_t next_domain = 1;
};
Registry& registry() {
  static auto* r = new Registry;  // never destroyed: NVTX calls may come during exit
  return *r;
}
std::atomic<uint64_t> g_next_range_id{1};

uint32_t domain_id(nvtxDomainHandle_t domain) {
  return domain == nullptr ? 0 : reinterpret_cast<const Domain*>(domain)->id;
}

// The message of an event, in UTF-8. `wide` holds a converted wide string.
std::string_view message_of(const nvtxEventAttributes_t* attr, std::string& wide) {
  if (attr == nullptr) return {};
  switch (attr->messageType) {
    case NVTX_MESSAGE_TYPE_ASCII:
      return attr->message.ascii != nullptr ? attr->message.ascii : "";
    case NVTX_MESSAGE_TYPE_UNICODE:
      wide = wide_to_utf8(attr->message.unicode);
      return wide;
    case NVTX_MESSAGE_TYPE_REGISTERED:
      if (attr->message.registered == nullptr) return {};
      return reinterpret_cast<const RegisteredString*>(attr->message.registered)->text;
    default:
      return {};
  }
}

void payload_field(JsonLine& line, const nvtxEventAttributes_t* attr) {
  if (attr == nullptr) return;
  switch (attr->payloadType) {
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT64:
      line.u("payload", attr->payload.ullValue);
      break;
    case NVTX_PAYLOAD_TYPE_INT64:
      line.i("payload", attr->payload.llValue);
      break;
    case NVTX_PAYLOAD_TYPE_DOUBLE:
      line.d("payload", attr->payload.dValue);
      break;
    case NVTX_PAYLOAD_TYPE_UNSIGNED_INT32:
      line.u("payload", attr->payload.uiValue);
      break;
    case NVTX_PAYLOAD_TYPE_INT32:
      line.i("payload", attr->payload.iValue);
      break;
    case NVTX_PAYLOAD_TYPE_FLOAT:
      line.d("payload", attr->payload.fValue);
      break;
    default:
      break;
  }
}

// The session, and the first line of a thread new to this process ("thread", with its name).
Session* session_for_thread() {
  Session* session = Session::existing();
  if (session == nullptr) return nullptr;
  session->ensure_open();
  const pid_t pid = session->pid();
  if (t_stack.pid != pid) {
    t_stack.pid = pid;
    char name[17] = {};
    prctl(PR_GET_NAME, name, 0, 0, 0);
    const uint32_t tid = current_tid();
    session->with_writer([&](RecordWriter& writer, std::string& scratch) {
      writer.append(JsonLine(scratch, "thread").u("tid", tid).s("comm", name).end(),
                    RecordKind::other);
    });
  }
  return session;
}

void mark(nvtxDomainHandle_t domain, std::string_view text, const nvtxEventAttributes_t* attr) {
  Session* session = session_for_thread();
  if (session == nullptr) return;
  const uint64_t ts = now_ns();
  const uint32_t tid = current_tid();
  if (text == session->config().step_mark) {
    session->on_step(ts, tid);
    return;
  }
  if (text == kStepsExpectedMark) session->on_steps_expected();  // and recorded as a mark
  session->with_writer([&](RecordWriter& writer, std::string& scratch) {
    const uint32_t name = writer.intern(text);
    JsonLine line(scratch, "mark");
    line.u("ts", ts).u("tid", tid).u("name", name);
    if (domain != nullptr) line.u("dom", domain_id(domain));
    if (attr != nullptr && attr->category != 0) line.u("cat", attr->category);
    payload_field(line, attr);
    writer.append(line.end(), RecordKind::mark);
  });
}

int push(nvtxDomainHandle_t domain, std::string_view text) {
  Session* session = session_for_thread();
  if (session == nullptr) return -1;
  uint32_t name = 0;
  session->with_writer([&](RecordWriter& writer, std::string&) { name = writer.intern(text); });
  ThreadStack& stack = t_stack;
  const uint32_t level = stack.depth + stack.overflow;
  if (stack.depth < kMaxDepth) {
    stack.frames[stack.depth++] = Frame{now_ns(), name, domain_id(domain)};
  } else {
    ++stack.overflow;
  }
  return static_cast<int>(level);
}

int pop(nvtxDomainHandle_t domain) {
  const uint64_t end = now_ns();
  Session* session = session_for_thread();
  if (session == nullptr) return -1;
  ThreadStack& stack = t_stack;
  if (stack.overflow > 0) {  // a range deeper than kMaxDepth: not recorded
    --stack.overflow;
    return static_cast<int>(stack.depth + stack.overflow);
  }
  // The latest range of this domain: stacks are per thread and per domain.
  const uint32_t dom = domain_id(domain);
  int found = -1;
  uint32_t same_domain_depth = 0;
  for (int i = static_cast<int>(stack.depth) - 1; i >= 0; --i) {
    if (stack.frames[i].domain != dom) continue;
    if (found < 0) {
      found = i;
    } else {
      ++same_domain_depth;
    }
  }
  if (found < 0) return -1;
  const Frame frame = stack.frames[found];
  for (uint32_t i = static_cast<uint32_t>(found); i + 1 < stack.depth; ++i) {
    stack.frames[i] = stack.frames[i + 1];
  }
  --stack.depth;
  const uint32_t tid = current_tid();
  session->with_writer([&](RecordWriter& writer, std::string& scratch) {
    JsonLine line(scratch, "range");
    line.u("start", frame.start).u("end", end).u("tid", tid).u("name", frame.name);
    line.u("depth", same_domain_depth);
    if (dom != 0) line.u("dom", dom);
    writer.append(line.end(), RecordKind::range);
  });
  return static_cast<int>(same_domain_depth);
}

nvtxRangeId_t range_start(nvtxDomainHandle_t domain, std::string_view text) {
  Session* session = session_for_thread();
  if (session == nullptr) return 0;
  uint32_t name = 0;
  session->with_writer([&](RecordWriter& writer, std::string&) { name = writer.intern(text); });
  const uint64_t id = g_next_range_id.fetch_add(1);
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (r.open.size() < kMaxOpenStartEnd) {
    r.open.emplace(id, OpenRange{now_ns(), name, domain_id(domain), current_tid()});
  }
  return id;
}

void range_end(nvtxRangeId_t id) {
  const uint64_t end = now_ns();
  Session* session = session_for_thread();
  if (session == nullptr) return;
  OpenRange range{};
  {
    Registry& r = registry();
    std::lock_guard lock(r.mutex);
    const auto found = r.open.find(id);
    if (found == r.open.end()) return;
    range = found->second;
    r.open.erase(found);
  }
  const uint32_t tid = current_tid();
  session->with_writer([&](RecordWriter& writer, std::string& scratch) {
    JsonLine line(scratch, "range");
    line.u("start", range.start).u("end", end).u("tid", range.tid).u("name", range.name);
    if (tid != range.tid) line.u("end_tid", tid);
    if (range.domain != 0) line.u("dom", range.domain);
    line.u("id", id);
    writer.append(line.end(), RecordKind::range);
  });
}

void name_thread(uint32_t tid, std::string_view name) {
  Session* session = session_for_thread();
  if (session == nullptr) return;
  session->with_writer([&](RecordWriter& writer, std::string& scratch) {
    const uint32_t id = writer.intern(name);
    writer.append(JsonLine(scratch, "thread_name").u("tid", tid).u("name", id).end(),
                  RecordKind::other);
  });
}

void name_category(nvtxDomainHandle_t domain, uint32_t category, std::string_view name) {
  Session* session = session_for_thread();
  if (session == nullptr) return;
  session->with_writer([&](RecordWriter& writer, std::string& scratch) {
    const uint32_t id = writer.intern(name);
    JsonLine line(scratch, "category");
    line.u("cat", category).u("name", id);
    if (domain != nullptr) line.u("dom", domain_id(domain));
    writer.append(line.end(), RecordKind::other);
  });
}

nvtxDomainHandle_t create_domain(std::string_view name) {
  Registry& r = registry();
  Domain* domain = nullptr;
  bool created = false;
  {
    std::lock_guard lock(r.mutex);
    if (const auto found = r.domains.find(name); found != r.domains.end()) {
      domain = found->second;
    } else {
      domain = new Domain{r.next_domain++, std::string(name)};
      r.domains.emplace(domain->name, domain);
      created = true;
    }
  }
  if (created) {
    if (Session* session = session_for_thread()) {
      session->with_writer([&](RecordWriter& writer, std::string& scratch) {
        const uint32_t id = writer.intern(name);
        writer.append(JsonLine(scratch, "domain").u("dom", domain->id).u("name", id).end(),
                      RecordKind::other);
      });
    }
  }
  return reinterpret_cast<nvtxDomainHandle_t>(domain);
}

nvtxStringHandle_t register_string(std::string_view text) {
  Registry& r = registry();
  std::lock_guard lock(r.mutex);
  if (const auto found = r.strings.find(text); found != r.strings.end()) {
    return reinterpret_cast<nvtxStringHandle_t>(found->second);
  }
  auto* handle = new RegisteredString{std::string(text)};
  r.strings.emplace(handle->text, handle);
  return reinterpret_cast<nvtxStringHandle_t>(handle);
}

std::string_view ascii(const char* text) {
  return text != nullptr ? text : "";
}

// The table entries: C linkage types, every one guarded so nothing escapes into the host.
template <typename F>
auto guarded(F&& body, decltype(body()) fallback) noexcept -> decltype(body()) {
  try {
    return body();
  } catch (...) {
    return fallback;
  }
}

// The same for an entry point that returns nothing.
template <class F>
void guarded(F&& body) noexcept {
  try {
    body();
  } catch (...) {
  }
}

void NVTX_API MarkEx(const nvtxEventAttributes_t* a) {
  guarded([&] {
    std::string w;
    mark(nullptr, message_of(a, w), a);
  });
}
void NVTX_API MarkA(const char* m) {
  guarded([&] { mark(nullptr, ascii(m), nullptr); });
}
void NVTX_API MarkW(const wchar_t* m) {
  guarded([&] { mark(nullptr, wide_to_utf8(m), nullptr); });
}
nvtxRangeId_t NVTX_API RangeStartEx(const nvtxEventAttributes_t* a) {
  return guarded(
      [&] {
        std::string w;
        return range_start(nullptr, message_of(a, w));
      },
      nvtxRangeId_t{0});
}
nvtxRangeId_t NVTX_API RangeStartA(const char* m) {
  return guarded([&] { return range_start(nullptr, ascii(m)); }, nvtxRangeId_t{0});
}
nvtxRangeId_t NVTX_API RangeStartW(const wchar_t* m) {
  return guarded([&] { return range_start(nullptr, wide_to_utf8(m)); }, nvtxRangeId_t{0});
}
void NVTX_API RangeEnd(nvtxRangeId_t id) {
  guarded([&] { range_end(id); });
}
int NVTX_API RangePushEx(const nvtxEventAttributes_t* a) {
  return guarded(
      [&] {
        std::string w;
        return push(nullptr, message_of(a, w));
      },
      -1);
}
int NVTX_API RangePushA(const char* m) {
  return guarded([&] { return push(nullptr, ascii(m)); }, -1);
}
int NVTX_API RangePushW(const wchar_t* m) {
  return guarded([&] { return push(nullptr, wide_to_utf8(m)); }, -1);
}
int NVTX_API RangePop() {
  return guarded([&] { return pop(nullptr); }, -1);
}
void NVTX_API NameCategoryA(uint32_t c, const char* n) {
  guarded([&] { name_category(nullptr, c, ascii(n)); });
}
void NVTX_API NameCategoryW(uint32_t c, const wchar_t* n) {
  guarded([&] { name_category(nullptr, c, wide_to_utf8(n)); });
}
void NVTX_API NameOsThreadA(uint32_t t, const char* n) {
  guarded([&] { name_thread(t, ascii(n)); });
}
void NVTX_API NameOsThreadW(uint32_t t, const wchar_t* n) {
  guarded([&] { name_thread(t, wide_to_utf8(n)); });
}

void NVTX_API DomainMarkEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  guarded([&] {
    std::string w;
    mark(d, message_of(a, w), a);
  });
}
nvtxRangeId_t NVTX_API DomainRangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return guarded(
      [&] {
        std::string w;
        return range_start(d, message_of(a, w));
      },
      nvtxRangeId_t{0});
}
void NVTX_API DomainRangeEnd(nvtxDomainHandle_t, nvtxRangeId_t id) {
  guarded([&] { range_end(id); });
}
int NVTX_API DomainRangePushEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  return guarded(
      [&] {
        std::string w;
        return push(d, message_of(a, w));
      },
      -1);
}
int NVTX_API DomainRangePop(nvtxDomainHandle_t d) {
  return guarded([&] { return pop(d); }, -1);
}
void NVTX_API DomainNameCategoryA(nvtxDomainHandle_t d, uint32_t c, const char* n) {
  guarded([&] { name_category(d, c, ascii(n)); });
}
void NVTX_API DomainNameCategoryW(nvtxDomainHandle_t d, uint32_t c, const wchar_t* n) {
  guarded([&] { name_category(d, c, wide_to_utf8(n)); });
}
nvtxStringHandle_t NVTX_API DomainRegisterStringA(nvtxDomainHandle_t, const char* s) {
  return guarded([&] { return register_string(ascii(s)); }, nvtxStringHandle_t{nullptr});
}
nvtxStringHandle_t NVTX_API DomainRegisterStringW(nvtxDomainHandle_t, const wchar_t* s) {
  return guarded([&] { return register_string(wide_to_utf8(s)); }, nvtxStringHandle_t{nullptr});
}
nvtxDomainHandle_t NVTX_API DomainCreateA(const char* n) {
  return guarded([&] { return create_domain(ascii(n)); }, nvtxDomainHandle_t{nullptr});
}
nvtxDomainHandle_t NVTX_API DomainCreateW(const wchar_t* n) {
  return guarded([&] { return create_domain(wide_to_utf8(n)); }, nvtxDomainHandle_t{nullptr});
}
void NVTX_API DomainDestroy(nvtxDomainHandle_t) {}  // handles stay valid: records refer to them
void NVTX_API Initialize(const void*) {}

struct Slot {
  uint32_t id;
  NvtxFunctionPointer function;
};

template <typename F>
NvtxFunctionPointer fn(F* function) {
  return reinterpret_cast<NvtxFunctionPointer>(function);
}

bool fill(const NvtxExportTableCallbacks* callbacks, NvtxCallbackModule module,
          std::initializer_list<Slot> slots) {
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (callbacks->GetModuleFunctionTable(module, &table, &size) == 0 || table == nullptr) {
    return false;
  }
  for (const Slot& slot : slots) {
    if (slot.id <= size && table[slot.id] != nullptr) *table[slot.id] = slot.function;
  }
  return true;
}

}  // namespace
}  // namespace gpuscope::inject

extern "C" __attribute__((visibility("default"))) int InitializeInjectionNvtx2(
    NvtxGetExportTableFunc_t get_export_table) {
  using namespace gpuscope::inject;
  try {
    // Without a run folder there is nothing to record: 0 makes NVTX turn every call into a no-op.
    if (get_export_table == nullptr || Session::get("nvtx") == nullptr) return 0;
    const auto* callbacks =
        static_cast<const NvtxExportTableCallbacks*>(get_export_table(NVTX_ETID_CALLBACKS));
    if (callbacks == nullptr) return 0;
    if (const auto* version =
            static_cast<const NvtxExportTableVersionInfo*>(get_export_table(NVTX_ETID_VERSIONINFO));
        version != nullptr && version->SetInjectionNvtxVersion != nullptr) {
      version->SetInjectionNvtxVersion(NVTX_VERSION);
    }
    const bool core = fill(callbacks, NVTX_CB_MODULE_CORE,
                           {{NVTX_CBID_CORE_MarkEx, fn(MarkEx)},
                            {NVTX_CBID_CORE_MarkA, fn(MarkA)},
                            {NVTX_CBID_CORE_MarkW, fn(MarkW)},
                            {NVTX_CBID_CORE_RangeStartEx, fn(RangeStartEx)},
                            {NVTX_CBID_CORE_RangeStartA, fn(RangeStartA)},
                            {NVTX_CBID_CORE_RangeStartW, fn(RangeStartW)},
                            {NVTX_CBID_CORE_RangeEnd, fn(RangeEnd)},
                            {NVTX_CBID_CORE_RangePushEx, fn(RangePushEx)},
                            {NVTX_CBID_CORE_RangePushA, fn(RangePushA)},
                            {NVTX_CBID_CORE_RangePushW, fn(RangePushW)},
                            {NVTX_CBID_CORE_RangePop, fn(RangePop)},
                            {NVTX_CBID_CORE_NameCategoryA, fn(NameCategoryA)},
                            {NVTX_CBID_CORE_NameCategoryW, fn(NameCategoryW)},
                            {NVTX_CBID_CORE_NameOsThreadA, fn(NameOsThreadA)},
                            {NVTX_CBID_CORE_NameOsThreadW, fn(NameOsThreadW)}});
    fill(callbacks, NVTX_CB_MODULE_CORE2,
         {{NVTX_CBID_CORE2_DomainMarkEx, fn(DomainMarkEx)},
          {NVTX_CBID_CORE2_DomainRangeStartEx, fn(DomainRangeStartEx)},
          {NVTX_CBID_CORE2_DomainRangeEnd, fn(DomainRangeEnd)},
          {NVTX_CBID_CORE2_DomainRangePushEx, fn(DomainRangePushEx)},
          {NVTX_CBID_CORE2_DomainRangePop, fn(DomainRangePop)},
          {NVTX_CBID_CORE2_DomainNameCategoryA, fn(DomainNameCategoryA)},
          {NVTX_CBID_CORE2_DomainNameCategoryW, fn(DomainNameCategoryW)},
          {NVTX_CBID_CORE2_DomainRegisterStringA, fn(DomainRegisterStringA)},
          {NVTX_CBID_CORE2_DomainRegisterStringW, fn(DomainRegisterStringW)},
          {NVTX_CBID_CORE2_DomainCreateA, fn(DomainCreateA)},
          {NVTX_CBID_CORE2_DomainCreateW, fn(DomainCreateW)},
          {NVTX_CBID_CORE2_DomainDestroy, fn(DomainDestroy)},
          {NVTX_CBID_CORE2_Initialize, fn(Initialize)}});
    return core ? 1 : 0;
  } catch (...) {
    return 0;
  }
}
