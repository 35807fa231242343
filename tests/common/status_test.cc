#include "gpuscope/status.h"

#include <gtest/gtest.h>

#include "common/api_check.h"
#include "gpuscope/exit_codes.h"

// A vendor status type for the one check macro.
enum class FakeVendorStatus { success, busy };

template <>
struct gpuscope::detail::ApiErrorTraits<FakeVendorStatus> {
  static ApiError describe(FakeVendorStatus status) {
    return {status == FakeVendorStatus::success, Code::io_error, "the device is busy"};
  }
};

namespace gpuscope {
namespace {

Result<int> parse_positive(int x) {
  if (x <= 0) return Status(Code::invalid_argument, "not positive");
  return x;
}

Status doubled_is_small(int x, int& out) {
  GPUSCOPE_ASSIGN_OR_RETURN(int value, parse_positive(x));
  out = value * 2;
  if (out > 10) return Status(Code::not_supported, "too big");
  return {};
}

TEST(Status, OkByDefaultAndPrintsCodeName) {
  EXPECT_TRUE(Status().ok());
  EXPECT_EQ(Status().to_string(), "ok");
  Status lost(Code::gpu_lost, "fell off the bus");
  EXPECT_FALSE(lost.ok());
  EXPECT_EQ(lost.to_string(), "gpu_lost: fell off the bus");
  EXPECT_EQ(lost.with_context("GPU 1").message(), "GPU 1: fell off the bus");
  EXPECT_EQ(lost.with_context("GPU 1").code(), Code::gpu_lost);
}

// A user reads the library's words; the call's text and file:line are the detail (--verbose,
// logs), kept through added context.
TEST(Status, EachCodeNameReadsBackAsItsCode) {
  for (int c = static_cast<int>(Code::ok); c <= static_cast<int>(Code::internal); ++c) {
    const Code code = static_cast<Code>(c);
    EXPECT_NE(code_name(code), "unknown");
    EXPECT_EQ(code_named(code_name(code)), code) << code_name(code);
  }
  EXPECT_EQ(code_name(Code::permission_denied), "permission_denied");
  EXPECT_FALSE(code_named("lost").has_value());
}

TEST(Status, ApiCheckKeepsTheCallAndPlaceOutOfTheMessage) {
  EXPECT_TRUE(GPUSCOPE_API_CHECK(FakeVendorStatus::success).ok());
  Status busy = GPUSCOPE_API_CHECK((FakeVendorStatus{FakeVendorStatus::busy}));
  EXPECT_EQ(busy.code(), Code::io_error);
  EXPECT_EQ(busy.message(), "the device is busy");
  EXPECT_NE(busy.detail().find("FakeVendorStatus{FakeVendorStatus::busy}"), std::string::npos)
      << busy.detail();
  EXPECT_NE(busy.detail().find("status_test.cc:"), std::string::npos) << busy.detail();
  Status in_context = busy.with_context("results store a.db");
  EXPECT_EQ(in_context.message(), "results store a.db: the device is busy");
  EXPECT_EQ(in_context.detail(), busy.detail());
  EXPECT_NE(in_context.to_string().find("status_test.cc:"), std::string::npos);
  EXPECT_EQ(Status(Code::io_error, "plain").detail(), "");
}

TEST(Result, HoldsValueOrStatus) {
  Result<int> good = parse_positive(3);
  ASSERT_TRUE(good.ok());
  EXPECT_EQ(*good, 3);
  Result<int> bad = parse_positive(-1);
  EXPECT_FALSE(bad.ok());
  EXPECT_EQ(bad.code(), Code::invalid_argument);
  EXPECT_EQ(bad.value_or(7), 7);
}

TEST(Result, AssignOrReturnPropagates) {
  int out = 0;
  EXPECT_EQ(doubled_is_small(-2, out).code(), Code::invalid_argument);
  EXPECT_EQ(out, 0);
  EXPECT_TRUE(doubled_is_small(4, out).ok());
  EXPECT_EQ(out, 8);
  EXPECT_EQ(doubled_is_small(6, out).code(), Code::not_supported);
}

TEST(ExitCodes, EachFailureKindHasItsOwnCode) {
  EXPECT_EQ(exit_code_for(Code::ok), 0);
  EXPECT_EQ(exit_code_for(Code::not_found), kExitUsage);
  EXPECT_EQ(exit_code_for(Code::no_driver), kExitNoGpu);
  EXPECT_EQ(exit_code_for(Code::no_device), kExitNoGpu);
  EXPECT_EQ(exit_code_for(Code::permission_denied), kExitPermission);
  EXPECT_EQ(exit_code_for(Code::gpu_lost), kExitGpuLost);
  EXPECT_EQ(exit_code_for(Code::io_error), kExitError);
}

}  // namespace
}  // namespace gpuscope
