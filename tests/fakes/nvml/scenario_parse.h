// Pieces of parse_scenario, one file per part of the format.
#pragma once

#include <string>

#include <nlohmann/json.hpp>

#include "scenario.h"

namespace gpuscope::fake_nvml {

// devices[index] at `path`, timeline included. Throws ScenarioError.
Device parse_device(const nlohmann::json& json, const std::string& path, unsigned index);

// A device's "timeline" array at `path`. Throws ScenarioError.
Timeline parse_timeline(const nlohmann::json& json, const std::string& path);

}  // namespace gpuscope::fake_nvml
