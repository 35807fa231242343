// load_bench_json: a `gpuscope bench --json` file (resume, report) read back.
#include "fuzz/fuzz_input.h"
#include "gpuscope/bench.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscope;
  const std::string& path = fuzz::write_input_file(fuzz::as_text(data, size));
  auto result = bench::load_bench_json(path);
  if (result.ok()) (void)bench::bench_to_json(*result);
  return 0;
}
