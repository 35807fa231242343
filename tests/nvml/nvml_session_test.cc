// The NVML adapter against the fake library: readings, units, scripted errors, lost GPUs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "../support/fake_nvml_fixture.h"
#include "gpuscope/nvml.h"

namespace gpuscope::nvml {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using SessionTest = gpuscope::testing::FakeNvmlTest;

TEST_F(SessionTest, ReadsAnH100LikeNvidiaSmi) {
  nvml::Session* session = open_scenario("h100_sxm.json");
  ASSERT_NE(session, nullptr);
  EXPECT_EQ(session->library_path(), GPUSCOPE_FAKE_NVML_PATH);
  ASSERT_EQ(session->device_count().value_or(0), 1u);
  auto device = session->device_by_index(0);
  ASSERT_TRUE(device.ok()) << device.status().to_string();

  EXPECT_EQ(device->name().value_or(""), "NVIDIA H100 80GB HBM3");
  EXPECT_THAT(device->uuid().value_or(""), ::testing::StartsWith("GPU-"));
  auto cc = device->cuda_compute_capability();
  ASSERT_TRUE(cc.ok());
  EXPECT_EQ(*cc, std::make_pair(9, 0));
  EXPECT_EQ(device->memory()->total_bytes, 81559ull * 1024 * 1024);
  EXPECT_DOUBLE_EQ(device->power_limit_w().value_or(0), 700.0);
  EXPECT_DOUBLE_EQ(device->default_power_limit_w().value_or(0), 700.0);
  EXPECT_EQ(device->power_limit_range_w().value_or(std::pair{0.0, 0.0}),
            std::make_pair(200.0, 700.0));
  EXPECT_EQ(device->pcie_generation(LinkValue::current).value_or(0), 5u);
  EXPECT_EQ(device->pcie_width(LinkValue::max).value_or(0), 16u);
  EXPECT_EQ(device->max_clock_mhz(ClockDomain::sm).value_or(0), 1980u);
  EXPECT_TRUE(device->gpm_supported().value_or(false));
  auto mig = device->mig_mode();
  ASSERT_TRUE(mig.ok());
  EXPECT_FALSE(mig->current);
  EXPECT_TRUE(device->mig_devices()->empty());
}

TEST_F(SessionTest, LinksBetweenGpusDirectThroughNvswitchOrPcie) {
  load_json(R"({"devices": [
      {"name": "a", "uuid": "GPU-a", "pci_bus_id": "00000000:18:00.0",
       "nvlink": {"link_count": 4, "peers": {"1": 3}}, "pcie_topology": {"1": 30, "2": 50}},
      {"name": "b", "uuid": "GPU-b", "pci_bus_id": "00000000:2a:00.0",
       "nvlink": {"link_count": 18, "nvswitch": true}, "pcie_topology": {"2": 20}},
      {"name": "c", "uuid": "GPU-c", "pci_bus_id": "00000000:3b:00.0",
       "nvlink": {"link_count": 18, "nvswitch": true}}]})");
  auto session = open();
  ASSERT_NE(session, nullptr);
  auto a = session->device_by_index(0), b = session->device_by_index(1),
       c = session->device_by_index(2);
  ASSERT_TRUE(a.ok() && b.ok() && c.ok());
  auto direct = a->link_to(*b);
  ASSERT_TRUE(direct.ok()) << direct.status().to_string();
  EXPECT_EQ(direct->nvlinks, 3u);
  EXPECT_FALSE(direct->through_switch);
  EXPECT_EQ(direct->label(), "NV3");
  EXPECT_EQ(direct->pcie_path.value_or(""), "PHB");
  auto switched = b->link_to(*c);
  ASSERT_TRUE(switched.ok());
  EXPECT_EQ(switched->nvlinks, 18u) << "every link ends at a switch: all 18 count, as nvidia-smi";
  EXPECT_TRUE(switched->through_switch);
  EXPECT_EQ(switched->label(), "NV18");
  auto pcie = a->link_to(*c);
  ASSERT_TRUE(pcie.ok());
  EXPECT_EQ(pcie->nvlinks, 0u);
  EXPECT_EQ(pcie->label(), "PCIe SYS");
  auto unnamed = c->link_to(*a);  // c's links all end at switches, a's are not: no NVLink
  ASSERT_TRUE(unnamed.ok());
  EXPECT_EQ(unnamed->nvlinks, 0u);
  EXPECT_FALSE(unnamed->pcie_path.has_value()) << "c names no PCIe path to a";
}

TEST_F(SessionTest, ReadingsFollowTheScriptedTimeline) {
  load_json(R"({"devices": [{"name": "Fake", "uuid": "GPU-1", "energy_counter": true,
      "timeline": [{"t": 0, "power_mw": 100000, "gpu_temp_c": 30, "clock_event_reasons": 1},
                   {"t": 2, "power_mw": 400000, "gpu_temp_c": 70, "clock_event_reasons": 4}]}]})");
  auto session = open();
  ASSERT_NE(session, nullptr);
  auto device = session->device_by_index(0);
  ASSERT_TRUE(device.ok());

  gpuscope_fake_nvml_set_time(1.0);
  EXPECT_DOUBLE_EQ(device->power_w().value_or(-1), 100.0);
  EXPECT_DOUBLE_EQ(device->temperature_c().value_or(-1), 30.0);
  EXPECT_THAT(clock_event_reason_names(device->clock_event_reasons().value_or(0)),
              ElementsAre("gpu_idle"));

  gpuscope_fake_nvml_set_time(3.0);
  EXPECT_DOUBLE_EQ(device->power_w().value_or(-1), 400.0);
  // 2 s at 100 W + 1 s at 400 W, reported by NVML in mJ and by us in J.
  EXPECT_NEAR(device->total_energy_j().value_or(-1), 600.0, 1e-6);
  EXPECT_THAT(clock_event_reason_names(device->clock_event_reasons().value_or(0)),
              ElementsAre("sw_power_cap"));
}

TEST_F(SessionTest, UnsupportedReadingsAreAbsentNotZero) {
  auto device = first_gpu("rtx3090.json");
  ASSERT_TRUE(device);
  EXPECT_EQ(device->ecc_mode().code(), Code::not_supported);
  EXPECT_EQ(device->memory_temperature_c().code(), Code::not_supported);
  EXPECT_EQ(device->mig_mode().code(), Code::not_supported);
  EXPECT_FALSE(device->gpm_supported().value_or(true));
  EXPECT_DOUBLE_EQ(device->default_power_limit_w().value_or(0), 390.0);
  EXPECT_EQ(device->power_limit_range_w().value_or(std::pair{0.0, 0.0}).second, 480.0);
}

TEST_F(SessionTest, PermissionErrorsCarryNvmlsOwnWords) {
  auto device = first_gpu("permission_denied.json");
  ASSERT_TRUE(device);
  auto limit = device->power_limit_w();
  EXPECT_EQ(limit.code(), Code::permission_denied);
  EXPECT_THAT(limit.status().detail(), HasSubstr("nvmlDeviceGetPowerManagementLimit"));
  EXPECT_THAT(limit.status().message(), HasSubstr("Insufficient Permissions"));
  EXPECT_THAT(limit.status().detail(), HasSubstr("nvml_device.cc:"));
  EXPECT_TRUE(device->name().ok());  // the rest still reads
}

TEST_F(SessionTest, AGpuLostMidRunFailsOnlyThatGpu) {
  nvml::Session* session = open_scenario("two_gpus_one_lost.json");
  ASSERT_NE(session, nullptr);
  auto first = session->device_by_index(0);
  auto second = session->device_by_index(1);
  ASSERT_TRUE(first.ok());
  ASSERT_TRUE(second.ok());
  gpuscope_fake_nvml_set_time(0.5);
  EXPECT_TRUE(second->power_w().ok());
  gpuscope_fake_nvml_set_time(2.0);
  auto power = second->power_w();
  EXPECT_EQ(power.code(), Code::gpu_lost);
  EXPECT_THAT(power.status().message(), HasSubstr("GPU is lost"));
  EXPECT_TRUE(first->power_w().ok());
  EXPECT_EQ(session->device_by_index(1).code(), Code::gpu_lost);
}

TEST_F(SessionTest, UnknownIndexOrUuidIsNotFound) {
  nvml::Session* session = open_scenario("h100_sxm.json");
  ASSERT_NE(session, nullptr);
  auto missing = session->device_by_index(3);
  EXPECT_EQ(missing.code(), Code::not_found);
  EXPECT_THAT(missing.status().message(), HasSubstr("there is no GPU 3"));
  EXPECT_EQ(session->device_by_uuid("GPU-00000000-dead-beef-0000-000000000000").code(),
            Code::not_found);
  std::string uuid = session->device_by_index(0)->uuid().value_or("");
  auto by_uuid = session->device_by_uuid(uuid);
  ASSERT_TRUE(by_uuid.ok());
  EXPECT_EQ(by_uuid->index(), 0u);
}

TEST_F(SessionTest, DriverNotLoadedIsNoDriver) {
  load("no_driver.json");
  auto session = Session::open({{GPUSCOPE_FAKE_NVML_PATH}});
  EXPECT_EQ(session.code(), Code::no_driver);
  EXPECT_THAT(session.status().message(), HasSubstr("Driver Not Loaded"));
}

TEST_F(SessionTest, InitRefusedIsPermissionDenied) {
  load_json(R"({"init_error": "NVML_ERROR_NO_PERMISSION", "devices": []})");
  EXPECT_EQ(Session::open({{GPUSCOPE_FAKE_NVML_PATH}}).code(), Code::permission_denied);
}

TEST_F(SessionTest, SessionShutsNvmlDownWhenDestroyed) {
  load("h100_sxm.json");
  {
    auto session = open();
    ASSERT_NE(session, nullptr);
    EXPECT_EQ(gpuscope_fake_nvml_init_count(), 1u);
    EXPECT_EQ(gpuscope_fake_nvml_shutdown_count(), 0u);
  }
  EXPECT_EQ(gpuscope_fake_nvml_shutdown_count(), 1u);
}

TEST(ClockEventReasons, DecodesKnownAndUnknownBits) {
  EXPECT_THAT(clock_event_reason_names(0), ElementsAre());
  EXPECT_THAT(clock_event_reason_names(0x4 | 0x40),
              ElementsAre("sw_power_cap", "hw_thermal_slowdown"));
  EXPECT_THAT(clock_event_reason_names(std::uint64_t{1} << 20), ElementsAre("bit_20"));
}

}  // namespace
}  // namespace gpuscope::nvml
