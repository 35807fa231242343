#include "inject/activity_records.h"

#include "inject/json_line.h"

namespace gpuscope::inject {
namespace {

// Graph ids are 0 for work not launched from a CUDA graph: written only when set.
void graph_fields(JsonLine& line, uint32_t graph_id, uint64_t graph_node_id) {
  if (graph_id != 0) line.u("graph", graph_id);
  if (graph_node_id != 0) line.u("graph_node", graph_node_id);
}

// The fields of every record of work on the GPU (kernels, copies, memsets), times shifted onto
// the file's clock.
template <class GpuWork>
void gpu_work_fields(JsonLine& line, const GpuWork& w, uint64_t shift) {
  line.u("start", w.start + shift).u("end", w.end + shift).u("dev", w.deviceId);
  line.u("ctx", w.contextId).u("stream", w.streamId).u("corr", w.correlationId);
}

// What a copy moved, between which kinds of memory (plain and peer copies).
template <class Copy>
void copy_fields(JsonLine& line, const Copy& m) {
  line.s("kind", memcpy_kind_name(m.copyKind)).s("src", memory_kind_name(m.srcKind));
  line.s("dst", memory_kind_name(m.dstKind));
  line.b("async", (m.flags & CUPTI_ACTIVITY_FLAG_MEMCPY_ASYNC) != 0);
}

bool write_kernel(RecordWriter& writer, const CUpti_ActivityKernel10& k, std::string& scratch,
                  uint64_t shift) {
  const uint32_t name = writer.intern(k.name != nullptr ? k.name : "?");
  JsonLine line(scratch, "kernel");
  gpu_work_fields(line, k, shift);
  line.u("name", name);
  line.u3("grid", static_cast<uint32_t>(k.gridX), static_cast<uint32_t>(k.gridY),
          static_cast<uint32_t>(k.gridZ));
  line.u3("block", static_cast<uint32_t>(k.blockX), static_cast<uint32_t>(k.blockY),
          static_cast<uint32_t>(k.blockZ));
  line.u("regs", k.registersPerThread);
  line.u("smem_static", static_cast<uint32_t>(k.staticSharedMemory));
  line.u("smem_dynamic", static_cast<uint32_t>(k.dynamicSharedMemory));
  graph_fields(line, k.graphId, k.graphNodeId);
  return writer.append(line.end(), RecordKind::kernel);
}

bool write_memcpy(RecordWriter& writer, const CUpti_ActivityMemcpy6& m, std::string& scratch,
                  uint64_t shift) {
  JsonLine line(scratch, "memcpy");
  gpu_work_fields(line, m, shift);
  line.u("bytes", m.bytes);
  copy_fields(line, m);
  graph_fields(line, m.graphId, m.graphNodeId);
  return writer.append(line.end(), RecordKind::memcpy);
}

bool write_peer_copy(RecordWriter& writer, const CUpti_ActivityMemcpyPtoP4& m, std::string& scratch,
                     uint64_t shift) {
  JsonLine line(scratch, "memcpy");
  gpu_work_fields(line, m, shift);
  line.u("bytes", m.bytes);
  copy_fields(line, m);
  line.u("src_dev", m.srcDeviceId).u("dst_dev", m.dstDeviceId);
  graph_fields(line, m.graphId, m.graphNodeId);
  return writer.append(line.end(), RecordKind::memcpy);
}

bool write_memset(RecordWriter& writer, const CUpti_ActivityMemset4& m, std::string& scratch,
                  uint64_t shift) {
  JsonLine line(scratch, "memset");
  gpu_work_fields(line, m, shift);
  line.u("bytes", m.bytes);
  line.s("mem", memory_kind_name(m.memoryKind));
  graph_fields(line, m.graphId, m.graphNodeId);
  return writer.append(line.end(), RecordKind::memset);
}

bool write_api(RecordWriter& writer, const CUpti_ActivityAPI& a, bool runtime, const char* name,
               std::string& scratch, uint64_t shift) {
  const uint32_t name_id = writer.intern(name != nullptr ? name : "?");
  JsonLine line(scratch, runtime ? "runtime" : "driver");
  line.u("start", a.start + shift)
      .u("end", a.end + shift)
      .u("tid", a.threadId)
      .u("corr", a.correlationId);
  line.u("name", name_id).u("cbid", a.cbid);
  if (a.returnValue != 0) line.u("ret", a.returnValue);
  return writer.append(line.end(), runtime ? RecordKind::runtime : RecordKind::driver);
}

bool write_sync(RecordWriter& writer, const CUpti_ActivitySynchronization2& s, std::string& scratch,
                uint64_t shift) {
  JsonLine line(scratch, "sync");
  line.u("start", s.start + shift).u("end", s.end + shift).s("type", sync_type_name(s.type));
  line.u("corr", s.correlationId);
  if (s.contextId != CUPTI_SYNCHRONIZATION_INVALID_VALUE) line.u("ctx", s.contextId);
  if (s.streamId != CUPTI_SYNCHRONIZATION_INVALID_VALUE) line.u("stream", s.streamId);
  if (s.cudaEventId != CUPTI_SYNCHRONIZATION_INVALID_VALUE) line.u("event", s.cudaEventId);
  return writer.append(line.end(), RecordKind::sync);
}

bool write_overhead(RecordWriter& writer, const CUpti_ActivityOverhead3& o, std::string& scratch,
                    uint64_t shift) {
  JsonLine line(scratch, "overhead");
  line.u("start", o.start + shift)
      .u("end", o.end + shift)
      .s("kind", overhead_kind_name(o.overheadKind));
  switch (o.objectKind) {
    case CUPTI_ACTIVITY_OBJECT_PROCESS:
    case CUPTI_ACTIVITY_OBJECT_THREAD:
      line.u("tid", o.objectId.pt.threadId);
      break;
    case CUPTI_ACTIVITY_OBJECT_DEVICE:
    case CUPTI_ACTIVITY_OBJECT_CONTEXT:
    case CUPTI_ACTIVITY_OBJECT_STREAM:
      line.u("dev", o.objectId.dcs.deviceId).u("ctx", o.objectId.dcs.contextId);
      line.u("stream", o.objectId.dcs.streamId);
      break;
    default:
      break;
  }
  if (o.correlationId != 0) line.u("corr", o.correlationId);
  if (o.overheadKind == CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL && o.overheadData != nullptr) {
    const auto* full =
        static_cast<const CUpti_ActivityOverheadCommandBufferFullData*>(o.overheadData);
    line.u("queue_length", full->commandBufferLength);
  }
  return writer.append(line.end(), RecordKind::overhead);
}

}  // namespace

bool write_activity(RecordWriter& writer, const CUpti_Activity& record, std::string& scratch,
                    const char* api_name, uint64_t shift) {
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return write_kernel(writer, reinterpret_cast<const CUpti_ActivityKernel10&>(record), scratch,
                          shift);
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return write_memcpy(writer, reinterpret_cast<const CUpti_ActivityMemcpy6&>(record), scratch,
                          shift);
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      return write_peer_copy(writer, reinterpret_cast<const CUpti_ActivityMemcpyPtoP4&>(record),
                             scratch, shift);
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return write_memset(writer, reinterpret_cast<const CUpti_ActivityMemset4&>(record), scratch,
                          shift);
    case CUPTI_ACTIVITY_KIND_RUNTIME:
    case CUPTI_ACTIVITY_KIND_DRIVER:
      return write_api(writer, reinterpret_cast<const CUpti_ActivityAPI&>(record),
                       record.kind == CUPTI_ACTIVITY_KIND_RUNTIME, api_name, scratch, shift);
    case CUPTI_ACTIVITY_KIND_SYNCHRONIZATION:
      return write_sync(writer, reinterpret_cast<const CUpti_ActivitySynchronization2&>(record),
                        scratch, shift);
    case CUPTI_ACTIVITY_KIND_OVERHEAD:
      return write_overhead(writer, reinterpret_cast<const CUpti_ActivityOverhead3&>(record),
                            scratch, shift);
    default:
      return false;
  }
}

bool from_cuda_graph(const CUpti_Activity& record) {
  switch (record.kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL:
      return reinterpret_cast<const CUpti_ActivityKernel10&>(record).graphId != 0;
    case CUPTI_ACTIVITY_KIND_MEMCPY:
      return reinterpret_cast<const CUpti_ActivityMemcpy6&>(record).graphId != 0;
    case CUPTI_ACTIVITY_KIND_MEMCPY2:
      return reinterpret_cast<const CUpti_ActivityMemcpyPtoP4&>(record).graphId != 0;
    case CUPTI_ACTIVITY_KIND_MEMSET:
      return reinterpret_cast<const CUpti_ActivityMemset4&>(record).graphId != 0;
    default:
      return false;
  }
}

const char* memcpy_kind_name(uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD:
      return "HtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH:
      return "DtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOA:
      return "HtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOH:
      return "AtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOA:
      return "AtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_ATOD:
      return "AtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOA:
      return "DtoA";
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD:
      return "DtoD";
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOH:
      return "HtoH";
    case CUPTI_ACTIVITY_MEMCPY_KIND_PTOP:
      return "PtoP";
    default:
      return "unknown";
  }
}

const char* memory_kind_name(uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_MEMORY_KIND_PAGEABLE:
      return "pageable";
    case CUPTI_ACTIVITY_MEMORY_KIND_PINNED:
      return "pinned";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE:
      return "device";
    case CUPTI_ACTIVITY_MEMORY_KIND_ARRAY:
      return "array";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED:
      return "managed";
    case CUPTI_ACTIVITY_MEMORY_KIND_DEVICE_STATIC:
      return "device_static";
    case CUPTI_ACTIVITY_MEMORY_KIND_MANAGED_STATIC:
      return "managed_static";
    default:
      return "unknown";
  }
}

const char* sync_type_name(uint32_t type) {
  switch (type) {
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_EVENT_SYNCHRONIZE:
      return "event_synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_WAIT_EVENT:
      return "stream_wait_event";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_STREAM_SYNCHRONIZE:
      return "stream_synchronize";
    case CUPTI_ACTIVITY_SYNCHRONIZATION_TYPE_CONTEXT_SYNCHRONIZE:
      return "context_synchronize";
    default:
      return "unknown";
  }
}

const char* overhead_kind_name(uint32_t kind) {
  switch (kind) {
    case CUPTI_ACTIVITY_OVERHEAD_DRIVER_COMPILER:
      return "driver_compiler";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_BUFFER_FLUSH:
      return "cupti_buffer_flush";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_INSTRUMENTATION:
      return "cupti_instrumentation";
    case CUPTI_ACTIVITY_OVERHEAD_CUPTI_RESOURCE:
      return "cupti_resource";
    case CUPTI_ACTIVITY_OVERHEAD_RUNTIME_TRIGGERED_MODULE_LOADING:
      return "module_loading";
    case CUPTI_ACTIVITY_OVERHEAD_LAZY_FUNCTION_LOADING:
      return "lazy_function_loading";
    case CUPTI_ACTIVITY_OVERHEAD_COMMAND_BUFFER_FULL:
      return "command_buffer_full";
    case CUPTI_ACTIVITY_OVERHEAD_ACTIVITY_BUFFER_REQUEST:
      return "activity_buffer_request";
    case CUPTI_ACTIVITY_OVERHEAD_UVM_ACTIVITY_INIT:
      return "uvm_activity_init";
    default:
      return "unknown";
  }
}

}  // namespace gpuscope::inject
