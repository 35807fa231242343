// A study's study.json (load_state reads it as state_from_json does here) and the `gpuscope
// info --json` output a study reads its machine from.
#include <nlohmann/json.hpp>

#include "fuzz/fuzz_input.h"
#include "gpuscope/study.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscope;
  const nlohmann::json document =
      nlohmann::json::parse(fuzz::as_text(data, size), nullptr, /*allow_exceptions=*/false);
  if (document.is_discarded()) return 0;
  auto state = study::state_from_json(document);
  if (state.ok()) (void)study::state_to_json(*state);
  (void)study::machine_from_info(document);
  return 0;
}
