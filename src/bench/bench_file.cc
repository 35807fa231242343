// The bench JSON file: written whole or not at all (it is rewritten after every row while the
// matrix runs, and a bench may be killed at any moment), and read back for --resume.
#include <fmt/format.h>

#include "gpuscope/bench.h"
#include "gpuscope/files.h"

namespace gpuscope::bench {

Status save_bench_json(const std::string& path, const nlohmann::json& document) {
  return files::write_file_atomically(path, document.dump(2) + "\n");
}

Result<BenchResult> load_bench_json(const std::string& path) {
  GPUSCOPE_ASSIGN_OR_RETURN(std::string text, files::read_file(path, files::kMaxStateFileBytes));
  const nlohmann::json doc = nlohmann::json::parse(text, nullptr, /*allow_exceptions=*/false);
  if (doc.is_discarded()) {
    return Status(Code::data_error, fmt::format("{}: not JSON (truncated or another file?)", path));
  }
  auto result = bench_from_json(doc);
  if (!result.ok()) {
    return Status(result.code(), fmt::format("{}: {}", path, result.status().message()));
  }
  return result;
}

}  // namespace gpuscope::bench
