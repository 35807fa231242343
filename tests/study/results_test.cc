// The study's results: gpuscope.db and report.html built from the shipped sample study.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "gpuscope/store.h"
#include "gpuscope/study.h"
#include "support/cli_run.h"
#include "support/matchers.h"
#include "support/stored_runs.h"

namespace gpuscope::study {
namespace {

namespace fs = std::filesystem;
using gpuscope::testing::HasAllSubstrs;
using ::testing::HasSubstr;

TEST(StudyResults, ReportAndStoreFromTheSample) {
  auto sample = locate_sample();
  ASSERT_TRUE(sample.ok()) << sample.status().to_string();
  fs::path dir = fs::path(::testing::TempDir()) / ("study_results_" + std::to_string(getpid()));
  fs::remove_all(dir);
  auto state = copy_sample(*sample, dir);
  ASSERT_TRUE(state.ok()) << state.status().to_string();
  EXPECT_TRUE(fs::exists(dir / "steps/burn-gpu0.json"));
  Headlines h = compute_headlines(*state, dir);
  Status written = write_results(*state, h, dir);
  if (written.code() == Code::not_supported) GTEST_SKIP() << "built without plotly.js";
  ASSERT_TRUE(written.ok()) << written.to_string();

  EXPECT_EQ(testing::stored_runs((dir / "gpuscope.db").string()).size(), 3u);  // info, burn, bench

  std::string html = testing::slurp((dir / "report.html").string());
  EXPECT_THAT(
      html, HasAllSubstrs({"gpuscope study", "Compute achieved vs datasheet", "Best mode per model",
                           "not built yet; needs --allow-power-changes",
                           "Recorded on a lent NVIDIA H100 80GB HBM3",
                           "ran on this machine (default level)", "vit_b16"}));
  // Reading the bench step's store (WAL mode) left no -wal or -shm beside it.
  EXPECT_FALSE(fs::exists(dir / "steps/bench-gpu0.db-wal"));
  EXPECT_FALSE(fs::exists(dir / "steps/bench-gpu0.db-shm"));

  // Built again (a resumed study finishing twice): the store is rebuilt, never doubled.
  ASSERT_TRUE(write_results(*state, h, dir).ok());
  EXPECT_EQ(testing::stored_runs((dir / "gpuscope.db").string()).size(), 3u);
}

TEST(StudyResults, SampleDirOverride) {
  ::setenv("GPUSCOPE_SAMPLE_DIR", "/nonexistent/sample", 1);
  auto missing = locate_sample();
  ::unsetenv("GPUSCOPE_SAMPLE_DIR");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.code(), Code::not_found);
  EXPECT_THAT(missing.status().message(), HasSubstr("/nonexistent/sample"));
  EXPECT_THAT(missing.status().message(), HasSubstr("GPUSCOPE_SAMPLE_DIR"));
}

}  // namespace
}  // namespace gpuscope::study
