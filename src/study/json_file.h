// Reading a step's JSON output: the study's one place for it.
#pragma once

#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "gpuscope/files.h"

namespace gpuscope::study::detail {

// The document in `path`; nullopt when the file cannot be opened or is not JSON (a step that
// crashed halfway leaves a truncated file: that is "no output", not an error). Read through
// files::read_file, so a step output that is not a file, or is absurdly large, is no output too.
inline std::optional<nlohmann::json> read_json(const std::filesystem::path& path) {
  auto text = files::read_file(path.string(), files::kMaxResultFileBytes);
  if (!text.ok()) return std::nullopt;
  nlohmann::json doc = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) return std::nullopt;
  return doc;
}

}  // namespace gpuscope::study::detail
