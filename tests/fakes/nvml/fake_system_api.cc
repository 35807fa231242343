// Library life cycle, error strings, system queries and device enumeration.
#include <cstdio>
#include <cstdlib>
#include <string_view>

#include "api_call.h"
#include "device_handles.h"
#include "return_codes.h"

using gpuscope::fake_nvml::ApiCall;

namespace {

// Loads the scenario nvmlInit_v2 runs on when no test loaded one: the file named by
// GPUSCOPE_FAKE_NVML_SCENARIO, or a machine with a driver and no GPU.
nvmlReturn_t ensure_scenario(gpuscope::fake_nvml::State& state) {
  namespace fake = gpuscope::fake_nvml;
  if (state.scenario) return NVML_SUCCESS;
  const char* path = std::getenv(fake::kScenarioEnvVar);
  if (path == nullptr || *path == '\0') {
    fake::install_scenario(state, fake::Scenario{});
    return NVML_SUCCESS;
  }
  try {
    fake::install_scenario(state, fake::load_scenario_file(path));
    return NVML_SUCCESS;
  } catch (const fake::ScenarioError& e) {
    // Said on stderr too: a broken fixture should not look like a machine without a driver.
    state.last_error = e.what();
    std::fprintf(stderr, "fake NVML: %s=%s: %s\n", fake::kScenarioEnvVar, path, e.what());
    return NVML_ERROR_UNKNOWN;
  }
}

}  // namespace

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlInit_v2(void) {
  ApiCall call(__func__);
  auto& state = call.state();
  if (const nvmlReturn_t loaded = ensure_scenario(state); loaded != NVML_SUCCESS) return loaded;
  if (state.scenario->init_error) return *state.scenario->init_error;
  if (state.init_refcount == 0 && !state.clock_origin) {
    state.clock_origin = std::chrono::steady_clock::now();
  }
  ++state.init_refcount;
  ++state.init_count;
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlShutdown(void) {
  ApiCall call(__func__);
  auto& state = call.state();
  if (state.init_refcount == 0) return NVML_ERROR_UNINITIALIZED;
  --state.init_refcount;
  ++state.shutdown_count;
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT const char* nvmlErrorString(nvmlReturn_t result) {
  ApiCall call(__func__);
  return gpuscope::fake_nvml::return_code_message(result);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlSystemGetDriverVersion(char* version,
                                                                  unsigned int length) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_system(); rc != NVML_SUCCESS) return rc;
  return gpuscope::fake_nvml::copy_string(call.scenario().driver_version, version, length);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlSystemGetNVMLVersion(char* version,
                                                                unsigned int length) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_system(); rc != NVML_SUCCESS) return rc;
  return gpuscope::fake_nvml::copy_string(call.scenario().nvml_version, version, length);
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlSystemGetCudaDriverVersion_v2(int* cudaDriverVersion) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_system(); rc != NVML_SUCCESS) return rc;
  if (cudaDriverVersion == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *cudaDriverVersion = call.scenario().cuda_driver_version;
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int* deviceCount) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_system(); rc != NVML_SUCCESS) return rc;
  if (deviceCount == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *deviceCount = static_cast<unsigned>(call.scenario().devices.size());
  return NVML_SUCCESS;
}

GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index,
                                                                     nvmlDevice_t* device) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_index(index); rc != NVML_SUCCESS) return rc;
  if (device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  *device = gpuscope::fake_nvml::gpu_handle(index);
  return NVML_SUCCESS;
}

// GPU UUIDs only: a MIG UUID, like any unknown one, is NVML_ERROR_NOT_FOUND (MIG handles come
// from nvmlDeviceGetMigDeviceHandleByIndex).
GPUSCOPE_FAKE_NVML_EXPORT nvmlReturn_t nvmlDeviceGetHandleByUUID(const char* uuid,
                                                                 nvmlDevice_t* device) {
  ApiCall call(__func__);
  if (const nvmlReturn_t rc = call.check_system(); rc != NVML_SUCCESS) return rc;
  if (uuid == nullptr || device == nullptr) return NVML_ERROR_INVALID_ARGUMENT;
  const auto& devices = call.scenario().devices;
  for (unsigned i = 0; i < devices.size(); ++i) {
    if (devices[i].uuid != std::string_view(uuid)) continue;
    if (const nvmlReturn_t rc = call.check_index(i); rc != NVML_SUCCESS) return rc;
    *device = gpuscope::fake_nvml::gpu_handle(i);
    return NVML_SUCCESS;
  }
  return NVML_ERROR_NOT_FOUND;
}
