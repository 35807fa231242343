// The interconnect worker's lines as burn reads them: rows, problems, and what a malformed line
// becomes (a problem naming the field, never a row of zeros nor a failed burn).
#include "burn/interconnect.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

namespace gpuscope::burn::detail {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kAllReduce[] =
    R"({"v":1,"type":"all_reduce","gpus":2,"bytes":1048576,"iterations":200,"seconds":2.37e-05,)"
    R"("algorithm_bandwidth":4.42e10,"bus_bandwidth":4.42e10})";
constexpr char kPeerCopy[] =
    R"({"v":1,"type":"peer_copy","source":1,"destination":0,"peer_access":false,)"
    R"("bytes":268435456,"seconds":1.0e-02,"bytes_per_second":2.68e10})";

TEST(InterconnectLines, RowsErrorsAndDone) {
  InterconnectReport report;
  add_interconnect_line(R"({"v":1,"type":"device","name":"H100"})", report);
  add_interconnect_line(kAllReduce, report);
  add_interconnect_line(kPeerCopy, report);
  add_interconnect_line(R"({"v":1,"type":"error","message":"NCCL: no peer access"})", report);
  add_interconnect_line(R"({"v":1,"type":"done","ok":true})", report);
  ASSERT_EQ(report.all_reduce.size(), 1u);
  EXPECT_EQ(report.all_reduce[0].bytes, 1048576u);
  EXPECT_EQ(report.all_reduce[0].iterations, 200);
  EXPECT_DOUBLE_EQ(report.all_reduce[0].bus_bandwidth, 4.42e10);
  ASSERT_EQ(report.peer_copies.size(), 1u);
  EXPECT_EQ(report.peer_copies[0].source, 1);
  EXPECT_FALSE(report.peer_copies[0].peer_access);
  EXPECT_DOUBLE_EQ(report.peer_copies[0].bandwidth, 2.68e10);
  EXPECT_THAT(report.problems, ElementsAre("NCCL: no peer access"));
  EXPECT_TRUE(report.ok);
}

TEST(InterconnectLines, AMalformedRowIsAProblemNamingTheFieldNotARow) {
  InterconnectReport report;
  add_interconnect_line(
      R"({"v":1,"type":"all_reduce","gpus":2,"bytes":"many","iterations":200,"seconds":1e-5,)"
      R"("algorithm_bandwidth":4.42e10,"bus_bandwidth":4.42e10})",
      report);
  add_interconnect_line(
      R"({"v":1,"type":"peer_copy","source":0,"destination":1,"peer_access":true,)"
      R"("bytes":268435456,"seconds":6.85e-04})",
      report);
  add_interconnect_line("NCCL INFO ring 0", report);
  add_interconnect_line(kAllReduce, report);  // the rows after a bad one are kept
  EXPECT_EQ(report.all_reduce.size(), 1u);
  EXPECT_TRUE(report.peer_copies.empty());
  ASSERT_EQ(report.problems.size(), 3u);
  EXPECT_EQ(report.problems[0],
            "the interconnect worker printed a malformed line (all_reduce.bytes: expected a "
            "non-negative integer)");
  EXPECT_EQ(report.problems[1],
            "the interconnect worker printed a malformed line (peer_copy.bytes_per_second: "
            "missing)");
  EXPECT_THAT(report.problems[2], HasSubstr("a line the worker should not print: NCCL INFO"));
  EXPECT_FALSE(report.ok);
}

}  // namespace
}  // namespace gpuscope::burn::detail
