// The console view of `gpuscope info`, rendered from the fake GPUs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "../support/fake_nvml_fixture.h"
#include "gpuscope/info.h"
#include "gpuscope/info_report.h"
#include "support/matchers.h"

namespace gpuscope {
namespace {

using gpuscope::testing::HasAllSubstrs;
using ::testing::HasSubstr;
using ::testing::Not;

class InfoConsoleTest : public testing::FakeNvmlTest {
 protected:
  // The console view of tests/fixtures/nvml/SCENARIO's GPUs, on a machine whose CUDA driver is
  // too old; "", with the test failed, where it cannot be collected.
  std::string render(const std::string& scenario) {
    nvml::Session* session = open_scenario(scenario);
    if (session == nullptr) return "";
    CudaInventory cuda;
    cuda.status = Status(Code::no_driver, "CUDA driver version is insufficient");
    auto info = collect_info(*session, cuda, {});
    EXPECT_TRUE(info.ok()) << info.status().to_string();
    std::ostringstream out;
    if (info.ok()) print_info(*info, out);
    return out.str();
  }
};

TEST_F(InfoConsoleTest, H100ShowsLimitsLinkAndPeak) {
  const std::string text = render("h100_sxm.json");
  EXPECT_THAT(text, HasAllSubstrs({"GPU 0  NVIDIA H100 80GB HBM3",
                                   "limit 700 W (default 700 W, range 200 W-700 W", "PCIe Gen5 x16",
                                   "GPM yes", "MIG           disabled", "datasheet peak",
                                   "CUDA runtime sees no GPU"}));
}

TEST_F(InfoConsoleTest, MissingReadingsShowAsNotAvailable) {
  const std::string text = render("rtx3090.json");
  EXPECT_THAT(text, HasSubstr("ECC n/a"));
  EXPECT_THAT(text, HasSubstr("MIG           not supported"));
  EXPECT_THAT(text, Not(HasSubstr("memory 0 °C")));
}

TEST_F(InfoConsoleTest, MigInstancesAreTabulatedWithTheirUuids) {
  const std::string text = render("a100_mig.json");
  EXPECT_THAT(text, HasAllSubstrs({"enabled, 3 instances", "UUID (for CUDA_VISIBLE_DEVICES)",
                                   "3g.20gb", "MIG-"}));
}

}  // namespace
}  // namespace gpuscope
