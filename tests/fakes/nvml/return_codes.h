// nvmlReturn_t by name and by NVML's own wording.
#pragma once

#include <optional>
#include <string_view>

#include "fake_nvml_export.h"

namespace gpuscope::fake_nvml {

// The code a scenario names with the enum's spelling in nvml.h ("NVML_ERROR_NO_PERMISSION");
// nullopt for any other string.
std::optional<nvmlReturn_t> return_code_from_name(std::string_view name);

// What libnvidia-ml's nvmlErrorString returns for `code` ("Insufficient Permissions");
// "Unknown Error" for codes it does not know, as the real one does.
const char* return_code_message(nvmlReturn_t code);

}  // namespace gpuscope::fake_nvml
