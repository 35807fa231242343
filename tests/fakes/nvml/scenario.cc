#include "scenario.h"

#include <algorithm>
#include <array>
#include <string>

#include "json_reader.h"
#include "return_codes.h"
#include "scenario_parse.h"

namespace gpuscope::fake_nvml {
namespace {

// The table of entry points gpuscope's adapter resolves is the list the fake implements.
#define GPUSCOPE_NVML_REQUIRED(name, ...) #name,
#define GPUSCOPE_NVML_OPTIONAL(name, ...) #name,
constexpr std::array kFunctionNames = {
#include "nvml/nvml_symbols.inc"
};
#undef GPUSCOPE_NVML_REQUIRED
#undef GPUSCOPE_NVML_OPTIONAL

nvmlReturn_t parse_return_code(const nlohmann::json& json, const std::string& path) {
  const auto name = json_as<std::string>(json, path);
  const auto code = return_code_from_name(name);
  if (!code) throw ScenarioError(path + ": unknown nvmlReturn_t name '" + name + "'");
  return *code;
}

ScriptedError parse_error(const nlohmann::json& json, const std::string& path,
                          std::size_t device_count) {
  ObjectReader reader(json, path);
  ScriptedError error;
  error.function = reader.required<std::string>("function");
  if (!is_fake_nvml_function(error.function)) {
    throw ScenarioError(reader.path_of("function") + ": '" + error.function +
                        "' is not an NVML function the fake implements");
  }
  error.device = reader.optional<unsigned>("device");
  if (error.device && *error.device >= device_count) {
    throw ScenarioError(reader.path_of("device") + ": no such device");
  }
  error.from_t = reader.value_or<double>("from_t", 0.0);
  error.until_t = reader.optional<double>("until_t");
  const nlohmann::json* result = reader.child("return");
  if (result == nullptr) throw ScenarioError(reader.path_of("return") + ": required");
  error.result = parse_return_code(*result, reader.path_of("return"));
  if (error.result == NVML_SUCCESS) {
    throw ScenarioError(reader.path_of("return") + ": a scripted error cannot be NVML_SUCCESS");
  }
  reader.finish();
  return error;
}

void check_unique_uuids(const std::vector<Device>& devices) {
  std::set<std::string, std::less<>> seen;
  for (const Device& device : devices) {
    if (!seen.insert(device.uuid).second) throw ScenarioError("duplicate uuid " + device.uuid);
    if (!device.mig) continue;
    for (const MigInstance& instance : device.mig->instances) {
      if (!seen.insert(instance.uuid).second) {
        throw ScenarioError("duplicate uuid " + instance.uuid);
      }
    }
  }
}

}  // namespace

bool is_fake_nvml_function(std::string_view name) {
  return std::find(kFunctionNames.begin(), kFunctionNames.end(), name) != kFunctionNames.end();
}

Scenario parse_scenario(std::string_view json_text) {
  nlohmann::json json;
  try {
    json = nlohmann::json::parse(json_text);
  } catch (const nlohmann::json::exception& e) {
    throw ScenarioError(std::string("not valid JSON: ") + e.what());
  }
  ObjectReader reader(json, "");
  Scenario scenario;
  scenario.description = reader.value_or<std::string>("description", "");
  scenario.driver_version = reader.value_or("driver_version", scenario.driver_version);
  scenario.nvml_version = reader.value_or("nvml_version", scenario.nvml_version);
  scenario.cuda_driver_version =
      reader.value_or("cuda_driver_version", scenario.cuda_driver_version);
  if (const nlohmann::json* init_error = reader.child("init_error")) {
    scenario.init_error = parse_return_code(*init_error, "init_error");
    if (*scenario.init_error == NVML_SUCCESS) {
      throw ScenarioError("init_error: NVML_SUCCESS is not an error (leave the key out)");
    }
  }
  if (const nlohmann::json* devices = reader.child("devices")) {
    if (!devices->is_array()) throw ScenarioError("devices: expected an array");
    if (devices->size() > kMaxDevices) throw ScenarioError("devices: too many for the fake");
    for (std::size_t i = 0; i < devices->size(); ++i) {
      scenario.devices.push_back(parse_device((*devices)[i], "devices[" + std::to_string(i) + "]",
                                              static_cast<unsigned>(i)));
    }
  }
  check_unique_uuids(scenario.devices);
  if (const nlohmann::json* errors = reader.child("errors")) {
    if (!errors->is_array()) throw ScenarioError("errors: expected an array");
    for (std::size_t i = 0; i < errors->size(); ++i) {
      scenario.errors.push_back(
          parse_error((*errors)[i], "errors[" + std::to_string(i) + "]", scenario.devices.size()));
    }
  }
  reader.finish();
  return scenario;
}

}  // namespace gpuscope::fake_nvml
