// The parent's parser of the worker protocol (PROTOCOL.md beside the worker).
#include "burn/worker_stream.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "burn_test_util.h"

namespace gpuscope::burn::detail {
namespace {

using testing::burn_fixture;
using ::testing::HasSubstr;
using testing::read_script;

TEST(WorkerStream, ReadsAWholeRun) {
  const WorkerStream s = read_script(burn_fixture("h100_worker_handmade.jsonl"));
  EXPECT_EQ(s.bad_lines, 0) << (s.problems.empty() ? "" : s.problems.front());
  ASSERT_TRUE(s.device);
  EXPECT_EQ(s.device->name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(s.device->compute_capability, "9.0");
  EXPECT_EQ(s.device->sm_count, 132);
  EXPECT_EQ(s.windows.size(), 9u);
  ASSERT_EQ(s.results.size(), 3u);
  EXPECT_EQ(s.results[1].precision, Precision::bf16);
  EXPECT_EQ(s.results[1].n, 8192);
  EXPECT_TRUE(s.results[1].verification_ok);
  EXPECT_DOUBLE_EQ(*s.results[1].median, 767.2e12);
  EXPECT_EQ(s.results[1].algorithm, "algo 66 tile 18 stages 20 NN CUBLAS_COMPUTE_32F");
  EXPECT_EQ(s.memory.size(), 4u);
  EXPECT_EQ(s.memory[0].kernel, "copy");
  EXPECT_EQ(s.memory[0].bytes_counted, 2 * s.memory[0].buffer_bytes);
  EXPECT_EQ(s.host_link.size(), 18u);
  EXPECT_EQ(s.overlap.size(), 2u);
  ASSERT_TRUE(s.done);
  EXPECT_TRUE(s.done->ok);
  EXPECT_EQ(s.last_type, "done");
}

TEST(WorkerStream, StampsLinesWithTheirArrivalTime) {
  const WorkerStream s = read_script(burn_fixture("h100_worker_handmade.jsonl"), 10.0);
  ASSERT_FALSE(s.windows.empty());
  EXPECT_DOUBLE_EQ(s.windows[0].received_at, 11.5);  // '#sleep 0.5', '#sleep 1'
  EXPECT_DOUBLE_EQ(s.windows[1].received_at, 12.5);
}

TEST(WorkerStream, CountsLinesThatAreNotProtocolObjects) {
  WorkerStream s;
  EXPECT_EQ(add_line(s, "CUDA warning: something", 0).code(), Code::data_error);
  EXPECT_EQ(add_line(s, "[1,2]", 0).code(), Code::data_error);
  EXPECT_EQ(
      add_line(s, R"({"v":2,"type":"done","ok":true,"interrupted":false,"exit_code":0})", 0).code(),
      Code::data_error);
  EXPECT_EQ(add_line(s, R"({"type":"done"})", 0).code(), Code::data_error);
  const Status missing = add_line(s, R"({"v":1,"type":"gemm_window","precision":"bf16"})", 0);
  EXPECT_EQ(missing.code(), Code::data_error);
  EXPECT_THAT(missing.message(), HasSubstr("'window'"));
  EXPECT_EQ(add_line(s,
                     R"({"v":1,"type":"progress","precision":"fp7","elapsed_seconds":1,)"
                     R"("fraction":0.1})",
                     0)
                .code(),
            Code::data_error);
  EXPECT_EQ(s.bad_lines, 6);
  EXPECT_EQ(s.problems.size(), 5u);  // the first few are kept
  EXPECT_THAT(s.problems[0], HasSubstr("not JSON: 'CUDA warning"));
  EXPECT_TRUE(s.windows.empty());
  EXPECT_FALSE(s.done);
  EXPECT_EQ(s.last_type, "");
}

// A field of the wrong type is a bad line, said and left out, even where the field is optional:
// never read as zero (or as a rate made up from other fields).
TEST(WorkerStream, RefusesMistypedOptionalFieldsRatherThanReadingZeros) {
  WorkerStream s;
  const Status device = add_line(s,
                                 R"({"v":1,"type":"device","name":"NVIDIA H100 80GB HBM3",)"
                                 R"("uuid":"GPU-1","sm_count":"132","total_memory_bytes":-1})",
                                 0);
  EXPECT_EQ(device.code(), Code::data_error);
  EXPECT_THAT(device.message(), HasSubstr("'device' line without a valid 'sm_count'"));
  EXPECT_FALSE(s.device);
  const Status window =
      add_line(s,
               R"({"v":1,"type":"gemm_window","precision":"bf16","window":0,"gemms":2,)"
               R"("flop":4.0e12,"seconds":0.5,"elapsed_seconds":0.6,"flop_per_second":"fast",)"
               R"("mismatches":0,"nan_count":0,"inf_count":0})",
               0);
  EXPECT_EQ(window.code(), Code::data_error);
  EXPECT_THAT(window.message(), HasSubstr("'gemm_window' line without a valid 'flop_per_second'"));
  EXPECT_TRUE(s.windows.empty());
  const Status result =
      add_line(s,
               R"({"v":1,"type":"gemm_result","precision":"bf16","n":8192,"partial":false,)"
               R"("windows":3,"flop_per_second":{"median":7.6e14},"verification":)"
               R"({"gemms_checked":150,"mismatches":0,"nan_count":0,"inf_count":0,)"
               R"("reference_tiles_checked":"4","reference_tiles_failed":0,"ok":true}})",
               0);
  EXPECT_EQ(result.code(), Code::data_error);
  EXPECT_THAT(result.message(), HasSubstr("verification.reference_tiles_checked"));
  EXPECT_TRUE(s.results.empty());
  EXPECT_EQ(s.bad_lines, 3);
}

TEST(WorkerStream, IgnoresUnknownTypesAndEmptyLines) {
  WorkerStream s;
  EXPECT_TRUE(add_line(s, R"({"v":1,"type":"something_new","x":1})", 0).ok());
  EXPECT_TRUE(add_line(s, "", 0).ok());
  EXPECT_EQ(s.bad_lines, 0);
}

TEST(WorkerStream, ReadsErrorsSkipsAndNulls) {
  WorkerStream s;
  ASSERT_TRUE(add_line(s,
                       R"({"v":1,"type":"skipped","what":"fp8","code":"not_supported",)"
                       R"("reason":"fp8 needs compute capability 8.9"})",
                       0)
                  .ok());
  ASSERT_TRUE(add_line(s,
                       R"({"v":1,"type":"error","code":"verification_failed","message":"bf16 )"
                       R"(GEMM verification failed on NVIDIA H100","precision":"bf16","device":)"
                       R"({"name":"NVIDIA H100"}})",
                       0)
                  .ok());
  ASSERT_TRUE(add_line(s, R"({"v":1,"type":"error","code":"gpu_lost","message":"lost"})", 0).ok());
  // flop_per_second may be null (missing data): the parser derives it from flop / seconds.
  ASSERT_TRUE(add_line(s,
                       R"({"v":1,"type":"gemm_window","precision":"bf16","window":0,"gemms":2,)"
                       R"("flop":4.0e12,"seconds":0.5,"elapsed_seconds":0.6,)"
                       R"("flop_per_second":null,"mismatches":3,"nan_count":0,"inf_count":1})",
                       1.0)
                  .ok());
  ASSERT_EQ(s.skipped.size(), 1u);
  EXPECT_EQ(s.skipped[0].what, "fp8");
  ASSERT_EQ(s.errors.size(), 2u);
  EXPECT_EQ(s.errors[0].precision, Precision::bf16);
  EXPECT_FALSE(s.errors[1].precision);
  ASSERT_EQ(s.windows.size(), 1u);
  EXPECT_DOUBLE_EQ(s.windows[0].flop_per_second, 8.0e12);
  EXPECT_EQ(s.windows[0].mismatches, 3u);
  EXPECT_EQ(s.last_precision, Precision::bf16);
}

TEST(WorkerStream, ReadsTheRecordedH100Stream) {
  const std::string path = burn_fixture("h100_worker_recorded_2026-11-22.jsonl");
  if (!std::ifstream(path)) GTEST_SKIP() << "no recorded stream yet";
  const WorkerStream s = read_script(path);
  EXPECT_EQ(s.bad_lines, 0) << (s.problems.empty() ? "" : s.problems.front());
  ASSERT_TRUE(s.device);
  EXPECT_THAT(s.device->name, HasSubstr("H100"));
  EXPECT_FALSE(s.results.empty());
  ASSERT_TRUE(s.done);
}

}  // namespace
}  // namespace gpuscope::burn::detail
