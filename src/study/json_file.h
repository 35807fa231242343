// Reading a step's JSON output: the study's one place for it.
#pragma once

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>

namespace gpuscope::study::detail {

// The document in `path`; nullopt when the file cannot be opened or is not JSON (a step that
// crashed halfway leaves a truncated file: that is "no output", not an error).
inline std::optional<nlohmann::json> read_json(const std::filesystem::path& path) {
  std::ifstream in(path);
  if (!in) return std::nullopt;
  nlohmann::json doc = nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return std::nullopt;
  return doc;
}

}  // namespace gpuscope::study::detail
