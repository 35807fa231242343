// gpuscope-torch's lines into a row: the decision table of bench/torch_protocol.h.
#include "bench/torch_protocol.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <signal.h>

namespace gpuscope::bench::detail {
namespace {

using ::testing::HasSubstr;

const char* kStart =
    R"({"v":1,"type":"start","model":"vit_b16","task":"train","mode":"amp_bf16","batch":160,)"
    R"("torch_version":"2.11.0+cu130","device":{"type":"cuda","name":"NVIDIA H100 80GB HBM3"}})";
// A result line as gpuscope-torch printed it on the H100 (2026-11-22), loss values shortened.
const char* kResult =
    R"({"v":1,"type":"result","model":"vit_b16","task":"train","mode":"amp_bf16","batch":160,)"
    R"("batch_searched":false,"samples_per_second":2547.3975343222055,)"
    R"("step_seconds":{"count":50,"median":0.06278167915344238,"relative_spread":0.013849429395065484},)"
    R"("peak_allocated_bytes":12394158080,"peak_reserved_bytes":13121880064,)"
    R"("loss":{"first":6.96,"last":7.03,"values":[6.96,7.07,7.03]},"loss_scale":null,)"
    R"("skipped_steps":null,"partial":false})";

TorchOutput read(const std::vector<std::string>& lines) {
  TorchLineReader reader;
  double t = 10;
  for (const auto& l : lines) reader.add(l, t += 1);
  return reader.output();
}

TEST(TorchProtocol, AResultIsAMeasuredRow) {
  auto out = read({kStart, R"({"v":1,"type":"window","window":0,"samples":1600,"seconds":0.63})",
                   R"({"v":1,"type":"future_line_type","x":1})", kResult,
                   R"({"v":1,"type":"done","ok":true,"exit_code":0})"});
  ASSERT_EQ(out.windows.size(), 1u);
  EXPECT_DOUBLE_EQ(out.windows[0].t1, 12);  // arrived at 12 s
  EXPECT_DOUBLE_EQ(out.windows[0].t0, 12 - 0.63);
  Row row;
  fill_row(out, 0, std::nullopt, false, false, row);
  EXPECT_FALSE(row.skipped) << row.skip_reason;
  EXPECT_EQ(row.batch, 160);
  EXPECT_DOUBLE_EQ(*row.samples_per_second, 2547.3975343222055);
  EXPECT_DOUBLE_EQ(*row.peak_allocated_bytes, 12394158080.0);
  EXPECT_NEAR(*row.step_relative_spread, 0.01385, 1e-5);
  EXPECT_EQ(row.torch_version, "2.11.0+cu130");
  EXPECT_EQ(row.device_name, "NVIDIA H100 80GB HBM3");
}

TEST(TorchProtocol, DataParallelSummaryOfRankZero) {
  auto out =
      read({kStart,
            R"({"v":1,"rank":0,"type":"result","batch":160,"samples_per_second":5105.0,)"
            R"("step_seconds":{"median":0.063},"peak_reserved_bytes":1.3e10,"partial":false,)"
            R"("data_parallel":{"world_size":2,"backend":"nccl","all_reduce":"copy-engine",)"
            R"("all_reduce_fallback":null,"optimizer_sharded":true,)"
            R"("collective_seconds_per_step":0.012,)"
            R"("exposed_seconds_per_step":0.001,"overlap_fraction":0.917,"ranks":[)"
            R"({"rank":0,"peak_reserved_bytes":1.3e10,"samples_per_second":2560.5},)"
            R"({"rank":1,"peak_reserved_bytes":1.4e10,"samples_per_second":2544.5}]}})",
            R"({"v":1,"type":"done","ok":true,"exit_code":0})"});
  Row row;
  fill_row(out, 0, std::nullopt, false, false, row);
  ASSERT_FALSE(row.skipped) << row.skip_reason;
  EXPECT_EQ(row.world_size, 2);
  EXPECT_DOUBLE_EQ(*row.samples_per_second, 5105.0);
  EXPECT_DOUBLE_EQ(*row.collective_seconds_per_step, 0.012);
  EXPECT_DOUBLE_EQ(*row.exposed_seconds_per_step, 0.001);
  EXPECT_DOUBLE_EQ(*row.overlap_fraction, 0.917);
  EXPECT_DOUBLE_EQ(*row.peak_reserved_per_gpu_bytes, 1.4e10);
  EXPECT_DOUBLE_EQ(*row.slowest_rank_samples_per_second, 2544.5);
  EXPECT_EQ(row.all_reduce, "copy-engine");
  EXPECT_FALSE(row.all_reduce_fallback);
  EXPECT_EQ(row.optimizer_sharded, true);
}

TEST(TorchProtocol, ARankThatFailedFailsTheRow) {
  auto out = read({R"({"v":1,"rank":1,"type":"error","code":"rank_failed",)"
                   R"x("message":"rank 1 (pid 7) was killed by signal 9 (Killed)"})x",
                   R"({"v":1,"type":"done","ok":false,"exit_code":6})"});
  Row row;
  fill_row(out, 6, std::nullopt, false, false, row);
  EXPECT_TRUE(row.skipped);
  EXPECT_EQ(row.skip_code, "failed");
  EXPECT_THAT(row.skip_reason, HasSubstr("rank 1"));
}

TEST(TorchProtocol, OutOfMemoryIsSkippedWithItsReason) {
  auto out = read(
      {kStart,
       R"({"v":1,"type":"skipped","code":"out_of_memory","reason":"CUDA out of memory at batch 4096"})",
       R"({"v":1,"type":"done","ok":false,"exit_code":3})"});
  Row row;
  fill_row(out, 3, std::nullopt, false, false, row);
  EXPECT_TRUE(row.skipped);
  EXPECT_EQ(row.skip_code, "out_of_memory");
  EXPECT_EQ(row.skip_reason, "CUDA out of memory at batch 4096");
}

TEST(TorchProtocol, AKilledChildCrashed) {
  auto out = read({kStart, R"({"v":1,"type":"window","window":0,"samples":1600,"seconds":0.6})"});
  Row row;
  fill_row(out, std::nullopt, SIGSEGV, false, false, row);
  EXPECT_TRUE(row.skipped);
  EXPECT_EQ(row.skip_code, "crashed");
  EXPECT_THAT(row.skip_reason, HasSubstr("SIGSEGV"));
  EXPECT_THAT(row.skip_reason, HasSubstr("after 1 timed windows"));
}

// How gpuscope-torch ended (its lines, its process), and the skip code and a part of the reason
// ("" for any) fill_row() must give its row.
struct Ending {
  std::vector<std::string> lines = {};
  std::optional<int> exit_code = std::nullopt;
  std::optional<int> signal = std::nullopt;
  bool timed_out = false;
  bool interrupted = false;
  std::string skip_code = "";
  std::string reason_part = "";
};

void expect_skipped(const std::vector<Ending>& endings) {
  for (std::size_t i = 0; i < endings.size(); ++i) {
    SCOPED_TRACE("ending " + std::to_string(i));
    const Ending& e = endings[i];
    Row row;
    fill_row(read(e.lines), e.exit_code, e.signal, e.timed_out, e.interrupted, row);
    EXPECT_EQ(row.skip_code, e.skip_code);
    EXPECT_THAT(row.skip_reason, HasSubstr(e.reason_part));
  }
}

TEST(TorchProtocol, MalformedOutput) {
  expect_skipped({
      {.lines = {kStart, "Traceback (most recent call last):", kResult},
       .exit_code = 0,
       .skip_code = "malformed",
       .reason_part = "line 2: not a JSON object"},
      {.lines = {R"({"v":2,"type":"start"})"},
       .exit_code = 0,
       .skip_code = "malformed",
       .reason_part = "protocol version 2"},
      {.lines = {kStart}, .exit_code = 0, .skip_code = "malformed", .reason_part = "no result"},
  });
}

TEST(TorchProtocol, ErrorsExitCodesTimeoutsAndInterrupts) {
  std::string partial_result = kResult;
  partial_result.replace(partial_result.find("\"partial\":false"), 15, "\"partial\":true");
  expect_skipped({
      {.lines = {kStart, R"({"v":1,"type":"error","code":"internal","message":"cuDNN failed"})"},
       .exit_code = 6,
       .skip_code = "failed",
       .reason_part = "cuDNN failed"},
      {.lines = {kStart}, .exit_code = 6, .skip_code = "failed", .reason_part = "exit code 6"},
      {.lines = {kStart}, .signal = SIGKILL, .timed_out = true, .skip_code = "timeout"},
      {.lines = {kStart, partial_result}, .exit_code = 130, .skip_code = "interrupted"},
      {.lines = {kStart, kResult},
       .exit_code = 130,
       .interrupted = true,
       .skip_code = "interrupted"},
  });
}

TEST(TorchProtocol, GuardCurveReadsNullAsNonFinite) {
  auto out = read(
      {kStart,
       R"({"v":1,"type":"result","task":"guard","mode":"amp_fp16","loss":{"values":[2.3,1.9,null]},"loss_scale":32768.0,"skipped_steps":2})"});
  auto curve = guard_curve(out);
  ASSERT_TRUE(curve);
  ASSERT_EQ(curve->losses.size(), 3u);
  EXPECT_DOUBLE_EQ(curve->losses[1], 1.9);
  EXPECT_TRUE(std::isnan(curve->losses[2]));
  EXPECT_EQ(curve->loss_scale, 32768.0);
  EXPECT_EQ(curve->skipped_steps, 2);
  EXPECT_FALSE(guard_curve(read({kStart})));
}

}  // namespace
}  // namespace gpuscope::bench::detail
