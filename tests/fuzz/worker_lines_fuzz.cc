// gpuscope-burn-worker's stdout as burn's parent reads it, line by line.
#include "burn/worker_stream.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscope;
  burn::detail::WorkerStream stream;
  double t = 0;
  for (std::string_view line : fuzz::split_lines(fuzz::as_text(data, size))) {
    (void)burn::detail::add_line(stream, line, t);
    t += 0.25;
  }
  return 0;
}
