// The fake NVML's scenario files (tests/fixtures/nvml): every test that uses the fake reads
// one. A bad scenario must be a ScenarioError, never a crash.
#include "fuzz/fuzz_input.h"
#include "scenario.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  try {
    (void)gpuscope::fake_nvml::parse_scenario(gpuscope::fuzz::as_text(data, size));
  } catch (const gpuscope::fake_nvml::ScenarioError&) {
  }
  return 0;
}
