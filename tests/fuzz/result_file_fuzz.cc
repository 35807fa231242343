// read_result_file: whatever JSON a gpuscope command wrote (records, `info --json`,
// `burn --json`, `monitor --jsonl`, gpuscope-burn-worker lines), read as runs.
#include "fuzz/fuzz_input.h"
#include "gpuscope/store.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscope;
  const std::string& path = fuzz::write_input_file(fuzz::as_text(data, size));
  auto runs = store::read_result_file(path);
  if (runs.ok()) {
    for (const store::RunData& run : *runs) (void)store::runs_to_json({run});
  }
  return 0;
}
