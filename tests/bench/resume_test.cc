// `bench --resume`: which earlier rows are kept, and an earlier attempt at another matrix (or
// with other guard settings, or on another GPU) refused saying what differs.
#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include "gpuscope/bench.h"

namespace gpuscope::bench {
namespace {

using ::testing::HasSubstr;

std::vector<RowSpec> matrix() {
  MatrixOptions o;
  o.models = {"vit_b16"};
  o.tasks = {"train"};
  o.modes = {"fp32", "bf16", "fp8"};
  o.windows = 3;
  return expand_matrix(o).value();
}

// An attempt that finished the first `rows` rows of matrix().
BenchResult earlier(std::size_t rows) {
  BenchResult r;
  r.planned = matrix().size();
  for (std::size_t i = 0; i < rows; ++i) {
    Row row;
    row.spec = matrix()[i];
    row.samples_per_second = 100;
    r.rows.push_back(row);
  }
  return r;
}

TEST(BenchResume, RowsThatEndedOnTheirOwnAreKept) {
  Row measured;
  EXPECT_TRUE(row_is_final(measured));
  Row skipped;
  skipped.skipped = true;
  for (const char* code : {"out_of_memory", "not_supported", "crashed", "malformed", "failed"}) {
    skipped.skip_code = code;
    EXPECT_TRUE(row_is_final(skipped)) << code;
  }
  for (const char* code : {"interrupted", "timeout"}) {
    skipped.skip_code = code;
    EXPECT_FALSE(row_is_final(skipped)) << code;
  }
}

TEST(BenchResume, TheSameMatrixResumes) {
  RunOptions o;
  EXPECT_TRUE(check_resumable(earlier(0), matrix(), o).ok());
  EXPECT_TRUE(check_resumable(earlier(2), matrix(), o).ok());
  EXPECT_TRUE(check_resumable(earlier(3), matrix(), o).ok());
}

TEST(BenchResume, AScalingMatrixResumesFromItsJsonFile) {
  // The GPU count and the twin without gradient sync are part of each row's label: the file
  // must give them back, or its rows would not be this matrix's.
  MatrixOptions m;
  m.models = {"vit_b16"};
  m.tasks = {"train"};
  m.modes = {"amp_bf16"};
  m.gpus = {1, 2};
  m.no_sync_ceiling = true;
  const std::vector<RowSpec> rows = expand_matrix(m).value();
  ASSERT_EQ(rows.size(), 3u);
  BenchResult then;
  then.planned = rows.size();
  for (std::size_t i = 0; i < 2; ++i) {
    Row row;
    row.spec = rows[i];
    row.samples_per_second = 100;
    then.rows.push_back(row);
  }
  const auto read = bench_from_json(bench_to_json(then));
  ASSERT_TRUE(read.ok()) << read.status().to_string();
  EXPECT_EQ(read->rows[1].spec.gpus, 2);
  EXPECT_TRUE(check_resumable(*read, rows, RunOptions{}).ok());
}

TEST(BenchResume, AnotherMatrixIsRefusedSayingWhatDiffers) {
  RunOptions o;
  std::vector<RowSpec> fewer = matrix();
  fewer.pop_back();
  Status size = check_resumable(earlier(1), fewer, o);
  EXPECT_EQ(size.code(), Code::invalid_argument);
  EXPECT_THAT(size.message(), HasSubstr("a matrix of 3 rows; this one has 2"));

  std::vector<RowSpec> reordered = matrix();
  std::swap(reordered[0], reordered[1]);
  Status order = check_resumable(earlier(2), reordered, o);
  EXPECT_THAT(order.message(), HasSubstr("row 1 is 'vit_b16 train fp32' in the file to resume but "
                                         "'vit_b16 train bf16' in this matrix"));

  std::vector<RowSpec> longer = matrix();
  for (RowSpec& r : longer) r.windows = 5;
  Status windows = check_resumable(earlier(1), longer, o);
  EXPECT_THAT(windows.message(), HasSubstr("--windows 3'; this matrix has '"));
  EXPECT_THAT(windows.message(), HasSubstr("--windows 5'"));

  std::vector<RowSpec> guard_steps = matrix();
  guard_steps[0].guard_steps = 30;
  EXPECT_THAT(check_resumable(earlier(1), guard_steps, o).message(),
              HasSubstr("--guard-steps default; this matrix has 30"));
}

TEST(BenchResume, OtherGuardSettingsOrGpuAreRefused) {
  RunOptions off;
  off.guard = false;
  EXPECT_THAT(check_resumable(earlier(1), matrix(), off).message(),
              HasSubstr("ran with --guard on; this run has --guard off"));
  RunOptions seed;
  seed.guard_seed = 3;
  EXPECT_THAT(check_resumable(earlier(1), matrix(), seed).message(),
              HasSubstr("--guard-seed 0; this run has 3"));
  RunOptions gpu;
  gpu.gpu = 2;
  Status other = check_resumable(earlier(1), matrix(), gpu);
  EXPECT_EQ(other.code(), Code::invalid_argument);
  EXPECT_THAT(other.message(), HasSubstr("measured on GPU 0; this run is on GPU 2"));
}

}  // namespace
}  // namespace gpuscope::bench
