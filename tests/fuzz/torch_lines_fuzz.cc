// gpuscope-torch's stdout as bench reads it: the lines, then the row and the guard's loss curve
// made from them.
#include "bench/torch_protocol.h"
#include "fuzz/fuzz_input.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscope::bench;
  detail::TorchLineReader reader;
  double t = 0;
  for (std::string_view line : gpuscope::fuzz::split_lines(gpuscope::fuzz::as_text(data, size))) {
    reader.add(line, t);
    t += 0.5;
  }
  Row row;
  detail::fill_row(reader.output(), /*exit_code=*/0, /*signal=*/std::nullopt,
                   /*timed_out=*/false, /*interrupted=*/false, row);
  (void)detail::guard_curve(reader.output());
  return 0;
}
