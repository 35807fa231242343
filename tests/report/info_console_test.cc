// The console view of `gpuscope info`, rendered from the fake GPUs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <sstream>

#include "../support/fake_nvml_fixture.h"
#include "gpuscope/info.h"
#include "gpuscope/info_report.h"

namespace gpuscope {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;
using InfoConsoleTest = gpuscope::testing::FakeNvmlTest;

std::string render(const std::unique_ptr<nvml::Session>& session) {
  CudaInventory cuda;
  cuda.status = Status(Code::no_driver, "CUDA driver version is insufficient");
  auto info = collect_info(*session, cuda, {});
  EXPECT_TRUE(info.ok()) << info.status().to_string();
  std::ostringstream out;
  if (info.ok()) print_info(*info, out);
  return out.str();
}

TEST_F(InfoConsoleTest, H100ShowsLimitsLinkAndPeak) {
  load("h100_sxm.json");
  auto session = open();
  ASSERT_NE(session, nullptr);
  std::string text = render(session);
  EXPECT_THAT(text, HasSubstr("GPU 0  NVIDIA H100 80GB HBM3"));
  EXPECT_THAT(text, HasSubstr("limit 700 W (default 700 W, range 200 W-700 W"));
  EXPECT_THAT(text, HasSubstr("PCIe Gen5 x16"));
  EXPECT_THAT(text, HasSubstr("GPM yes"));
  EXPECT_THAT(text, HasSubstr("MIG           disabled"));
  EXPECT_THAT(text, HasSubstr("datasheet peak"));
  EXPECT_THAT(text, HasSubstr("CUDA runtime sees no GPU"));
}

TEST_F(InfoConsoleTest, MissingReadingsShowAsNotAvailable) {
  load("rtx3090.json");
  auto session = open();
  ASSERT_NE(session, nullptr);
  std::string text = render(session);
  EXPECT_THAT(text, HasSubstr("ECC n/a"));
  EXPECT_THAT(text, HasSubstr("MIG           not supported"));
  EXPECT_THAT(text, Not(HasSubstr("memory 0 °C")));
}

TEST_F(InfoConsoleTest, MigInstancesAreTabulatedWithTheirUuids) {
  load("a100_mig.json");
  auto session = open();
  ASSERT_NE(session, nullptr);
  std::string text = render(session);
  EXPECT_THAT(text, HasSubstr("enabled, 3 instances"));
  EXPECT_THAT(text, HasSubstr("UUID (for CUDA_VISIBLE_DEVICES)"));
  EXPECT_THAT(text, HasSubstr("3g.20gb"));
  EXPECT_THAT(text, HasSubstr("MIG-"));
}

}  // namespace
}  // namespace gpuscope
