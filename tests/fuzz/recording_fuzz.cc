// read_recording: a `gpuscope monitor --jsonl` file read back as samples.
#include "fuzz/fuzz_input.h"
#include "gpuscope/monitor.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace gpuscope;
  const std::string& path = fuzz::write_input_file(fuzz::as_text(data, size));
  (void)telemetry::read_recording(path);
  return 0;
}
