// MIG: mode, enumeration of MIG devices, and what identifies one.
//
// A GPU without "mig" in its scenario does not support MIG: these calls return
// NVML_ERROR_NOT_SUPPORTED on it. MIG handles come only from
// nvmlDeviceGetMigDeviceHandleByIndex.
#include "api_call.h"
#include "device_handles.h"

using gpuscope::fake_nvml::ApiCall;
using gpuscope::fake_nvml::HandleUse;

namespace {

// A MIG device's instance id `id_of` (the entry point `function`); for a GPU handle
// INVALID_ARGUMENT (not a MIG device) or NOT_SUPPORTED (no MIG at all).
nvmlReturn_t instance_id(const char* function, nvmlDevice_t device,
                         unsigned gpuscope::fake_nvml::MigInstance::*id_of, unsigned* id) {
  ApiCall call(function);
  if (const nvmlReturn_t rc = call.check_device(device, HandleUse::kGpuOrMig); rc != NVML_SUCCESS) {
    return rc;
  }
  if (call.mig() == nullptr) {
    return call.device().mig ? NVML_ERROR_INVALID_ARGUMENT : NVML_ERROR_NOT_SUPPORTED;
  }
  return gpuscope::fake_nvml::write_value(call.mig()->*id_of, id);
}

unsigned max_mig_devices(const gpuscope::fake_nvml::Mig& mig) {
  return mig.current ? mig.max_device_count : 0;
}

}  // namespace

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMigMode(nvmlDevice_t device,
                                                            unsigned int* currentMode,
                                                            unsigned int* pendingMode) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  const auto& mig = call.device().mig;
  if (!mig) return NVML_ERROR_NOT_SUPPORTED;
  if (currentMode == nullptr || pendingMode == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *currentMode = mig->current ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
  *pendingMode = mig->pending ? NVML_DEVICE_MIG_ENABLE : NVML_DEVICE_MIG_DISABLE;
  return NVML_SUCCESS;
}

// Zero while MIG mode is off, as documented.
GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMaxMigDeviceCount(nvmlDevice_t device,
                                                                      unsigned int* count) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  const auto& mig = call.device().mig;
  if (!mig) return NVML_ERROR_NOT_SUPPORTED;
  return gpuscope::fake_nvml::write_value(max_mig_devices(*mig), count);
}

// Indexes below the maximum but past the existing instances are NVML_ERROR_NOT_FOUND (a slot
// with no MIG device), indexes at or past the maximum NVML_ERROR_INVALID_ARGUMENT.
GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetMigDeviceHandleByIndex(
    nvmlDevice_t device, unsigned int index, nvmlDevice_t* migDevice) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device); rc != NVML_SUCCESS) return rc;
  const auto& mig = call.device().mig;
  if (!mig) return NVML_ERROR_NOT_SUPPORTED;
  if (migDevice == nullptr || index >= max_mig_devices(*mig)) return NVML_ERROR_INVALID_ARGUMENT;
  if (index >= mig->instances.size()) return NVML_ERROR_NOT_FOUND;
  *migDevice = gpuscope::fake_nvml::mig_handle(call.device_index(), index);
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceIsMigDeviceHandle(nvmlDevice_t device,
                                                                   unsigned int* isMigDevice) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device, HandleUse::kGpuOrMig); rc != NVML_SUCCESS) {
    return rc;
  }
  if (call.mig() == nullptr && !call.device().mig) return NVML_ERROR_NOT_SUPPORTED;
  return gpuscope::fake_nvml::write_value(call.mig() != nullptr ? 1U : 0U, isMigDevice);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetGpuInstanceId(nvmlDevice_t device,
                                                                  unsigned int* id) {
  return instance_id(__func__, device, &gpuscope::fake_nvml::MigInstance::gpu_instance_id, id);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetComputeInstanceId(nvmlDevice_t device,
                                                                      unsigned int* id) {
  return instance_id(__func__, device, &gpuscope::fake_nvml::MigInstance::compute_instance_id, id);
}

// Only MIG handles, as the header notes for the real API.
GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t
nvmlDeviceGetAttributes_v2(nvmlDevice_t device, nvmlDeviceAttributes_t* attributes) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_device(device, HandleUse::kGpuOrMig); rc != NVML_SUCCESS) {
    return rc;
  }
  const auto* mig = call.mig();
  if (mig == nullptr) return NVML_ERROR_NOT_SUPPORTED;
  if (attributes == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *attributes = nvmlDeviceAttributes_t{};
  attributes->multiprocessorCount = mig->sm_count;
  attributes->sharedCopyEngineCount = mig->shared_copy_engine_count;
  attributes->sharedDecoderCount = mig->shared_decoder_count;
  attributes->sharedEncoderCount = mig->shared_encoder_count;
  attributes->sharedJpegCount = mig->shared_jpeg_count;
  attributes->sharedOfaCount = mig->shared_ofa_count;
  attributes->gpuInstanceSliceCount = mig->gpu_instance_slice_count;
  attributes->computeInstanceSliceCount = mig->compute_instance_slice_count;
  attributes->memorySizeMB = mig->memory_total_bytes / (1024 * 1024);
  return NVML_SUCCESS;
}
