// The device burn runs on: the first one CUDA_VISIBLE_DEVICES leaves visible.
#include <cuda_runtime_api.h>
#include <fmt/format.h>

#include <cstdlib>
#include <string>

#include "capability/gemm_spec.h"
#include "cuda/cuda_error.h"
#include "gpuscope/capability.h"

namespace gpuscope::capability {

namespace {

std::string format_uuid(const cudaUUID_t& uuid, bool mig) {
  std::string text = mig ? "MIG-" : "GPU-";
  for (int i = 0; i < 16; ++i) {
    if (i == 4 || i == 6 || i == 8 || i == 10) text += '-';
    text += fmt::format("{:02x}", static_cast<unsigned char>(uuid.bytes[i]));
  }
  return text;
}

std::optional<double> attribute_khz_as_hz(cudaDeviceAttr attribute) {
  int khz = 0;
  if (cudaDeviceGetAttribute(&khz, attribute, 0) != cudaSuccess || khz <= 0) {
    cudaGetLastError();  // not sticky; clear it
    return std::nullopt;
  }
  return static_cast<double>(khz) * 1e3;
}

}  // namespace

Result<DeviceInfo> query_device() {
  DeviceInfo info;
  const char* visible = std::getenv("CUDA_VISIBLE_DEVICES");
  if (visible) info.visible_devices = visible;
  const std::string where = visible ? fmt::format("CUDA_VISIBLE_DEVICES='{}'", visible)
                                    : std::string("CUDA_VISIBLE_DEVICES unset");

  int count = 0;
  Status status = GPUSCOPE_API_CHECK(cudaGetDeviceCount(&count));
  if (!status.ok()) return status.with_context(fmt::format("no usable CUDA device ({})", where));
  if (count == 0) return Status(Code::no_device, fmt::format("no CUDA device visible ({})", where));

  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaSetDevice(0)));
  cudaDeviceProp prop{};
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaGetDeviceProperties(&prop, 0)));
  info.name = prop.name;
  info.uuid = format_uuid(prop.uuid, info.visible_devices.rfind("MIG-", 0) == 0);
  char bus_id[32] = {};
  if (cudaDeviceGetPCIBusId(bus_id, sizeof bus_id, 0) == cudaSuccess) {
    info.pci_bus_id = bus_id;
  } else {
    cudaGetLastError();
  }
  info.cc_major = prop.major;
  info.cc_minor = prop.minor;
  info.sm_count = prop.multiProcessorCount;
  info.l2_cache_bytes = static_cast<std::uint64_t>(prop.l2CacheSize);
  info.memory_bus_width_bits = prop.memoryBusWidth;
  info.sm_clock_max_hz = attribute_khz_as_hz(cudaDevAttrClockRate);
  info.memory_clock_max_hz = attribute_khz_as_hz(cudaDevAttrMemoryClockRate);
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaDriverGetVersion(&info.driver_version)));
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaRuntimeGetVersion(&info.runtime_version)));
  std::size_t free_bytes = 0;
  std::size_t total_bytes = 0;
  GPUSCOPE_RETURN_IF_ERROR(GPUSCOPE_API_CHECK(cudaMemGetInfo(&free_bytes, &total_bytes)));
  info.free_memory_bytes = free_bytes;
  info.total_memory_bytes = total_bytes;
  return info;
}

std::vector<PrecisionSupport> precision_support(const DeviceInfo& device) {
  std::vector<PrecisionSupport> rows;
  for (Precision p : kAllPrecisions) {
    rows.push_back(detail::precision_support_for(p, device.cc_major, device.cc_minor));
  }
  return rows;
}

}  // namespace gpuscope::capability
