// The files a user points gpuscope at, end to end through the real binary (NVML replaced by the
// fake library, gpuscope-torch by the scripted fake): every command refuses two paths that are
// the same file, an output over one of its inputs or over a file it did not write (without
// --force); temporary files never follow a planted symlink; a failed write keeps the old file;
// inputs that are no regular file are refused; stores on read-only media are read; `study -o`
// names a folder.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>

#include "gpuscope/exit_codes.h"
#include "gpuscope/store.h"
#include "support/cli_run.h"

namespace gpuscope {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

using testing::CliRun;
using testing::run_captured;
using testing::slurp;

std::string scratch() {
  return testing::test_scratch_dir("gpuscope_paths");
}

// Runs `gpuscope ARGS` with the fake NVML and the fake gpuscope-torch.
CliRun gpuscope(const std::string& dir, const std::string& args) {
  return testing::run_gpuscope(dir,
                               testing::fake_nvml_env("telemetry/two_gpus.json") +
                                   " GPUSCOPE_TORCH_BIN=" + GPUSCOPE_FAKE_TORCH,
                               args);
}

std::string fixtures() {
  std::string f = GPUSCOPE_TEST_FIXTURES;
  return f + "/report/h100_burn_worker_2026-11-22.jsonl " + f +
         "/info/h100_recorded_2026-11-22.json " + f + "/report/bench_handmade.records.json";
}

// --- report ---------------------------------------------------------------------------------

// A store with one run, written the way `--store` writes it (WAL mode).
std::string make_store(const std::string& path) {
  auto store = store::Store::open(path);
  EXPECT_TRUE(store.ok()) << store.status().to_string();
  auto runs = store::read_result_file(std::string(GPUSCOPE_TEST_FIXTURES) +
                                      "/report/bench_handmade.records.json");
  EXPECT_TRUE(runs.ok());
  EXPECT_TRUE((*store)->write((*runs)[0]).ok());
  return path;
}

TEST(CliReportPaths, AnOutputThatIsTheInputStoreIsRefused) {
  std::string dir = scratch();
  const std::string db = make_store(dir + "/in.db");
  const std::string before = slurp(db);
  for (const std::string& out : {db, dir + "/./in.db"}) {
    CliRun run = gpuscope(dir, "report " + db + " -o " + out);
    EXPECT_EQ(run.exit_code, kExitUsage) << run.err;
    EXPECT_THAT(run.err, HasSubstr("-o " + out));
    EXPECT_THAT(run.err, HasSubstr("same file"));
    EXPECT_EQ(slurp(db), before);
  }
}

TEST(CliReportPaths, AnOutputThatIsAnInputFileIsRefused) {
  std::string dir = scratch();
  const std::string burn = dir + "/burn.json";
  std::filesystem::copy_file(std::string(GPUSCOPE_TEST_FIXTURES) + "/burn/burn_schema_v1.json",
                             burn);
  const std::string before = slurp(burn);
  std::filesystem::create_symlink(burn, dir + "/link.json");
  for (const std::string& out : {burn, dir + "/link.json"}) {
    CliRun run = gpuscope(dir, "report " + burn + " --json " + out);
    EXPECT_EQ(run.exit_code, kExitUsage) << run.err;
    EXPECT_THAT(run.err, HasSubstr("--json " + out));
    EXPECT_EQ(slurp(burn), before);
  }
  CliRun two = gpuscope(dir, "report " + burn + " --md " + dir + "/r.md --html " + dir + "/r.md");
  EXPECT_EQ(two.exit_code, kExitUsage) << two.err;
  EXPECT_THAT(two.err, HasSubstr("--md"));
  EXPECT_THAT(two.err, HasSubstr("--html"));
}

TEST(CliReportPaths, AFileGpuscopeDidNotWriteIsReplacedOnlyWithForce) {
  std::string dir = scratch();
  const std::string notes = dir + "/notes.md";
  std::ofstream(notes) << "# my notes\n";
  CliRun refused = gpuscope(dir, "report " + fixtures() + " -o " + notes);
  EXPECT_EQ(refused.exit_code, kExitUsage) << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("--force"));
  EXPECT_EQ(slurp(notes), "# my notes\n");
  CliRun forced = gpuscope(dir, "report " + fixtures() + " -o " + notes + " --force");
  ASSERT_EQ(forced.exit_code, kExitOk) << forced.err;
  EXPECT_THAT(slurp(notes), HasSubstr("## Summary"));
  // Its own output, of every format, is rewritten without --force.
  const std::string outputs = " -o " + dir + "/r.html --json " + dir + "/r.json --csv " + dir +
                              "/r.csv --md " + notes + " --html " + dir + "/r2.html";
  ASSERT_EQ(gpuscope(dir, "report " + fixtures() + outputs).exit_code, kExitOk);
  CliRun again = gpuscope(dir, "report " + fixtures() + outputs);
  EXPECT_EQ(again.exit_code, kExitOk) << again.err;
  // A store is never taken for an output to replace.
  const std::string db = make_store(dir + "/s.db");
  CliRun over_store = gpuscope(dir, "report " + fixtures() + " -o " + db);
  EXPECT_EQ(over_store.exit_code, kExitUsage) << over_store.err;
  EXPECT_THAT(over_store.err, HasSubstr("a gpuscope results store"));
}

// `report /dev/zero` used to read it until memory ran out.
TEST(CliReportPaths, AnInputThatIsNoRegularFileIsRefused) {
  std::string dir = scratch();
  CliRun run = gpuscope(dir, "report /dev/zero");
  EXPECT_EQ(run.exit_code, kExitUsage) << run.err;
  EXPECT_THAT(run.err, HasSubstr("not a regular file"));
}

// The old temporary name, F.tmp-PID, was opened through whatever was there. `exec` keeps the
// shell's PID, so the symlink sits exactly where the old gpuscope would have written.
TEST(CliReportPaths, ASymlinkAtTheTemporaryNameIsNeverFollowed) {
  std::string dir = scratch();
  const std::string victim = dir + "/victim", out = dir + "/r.html";
  std::ofstream(victim) << "precious";
  CliRun run = run_captured("sh -c 'ln -s " + victim + " " + out + ".tmp-$$ && exec " +
                                GPUSCOPE_BIN + " report " + fixtures() + " -o " + out + "'",
                            dir + "/std");
  EXPECT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_EQ(slurp(victim), "precious");
  EXPECT_THAT(slurp(out), HasSubstr("<!DOCTYPE html>"));
}

// A write that fails part-way (here a file-size limit; a full disk is the same) is a clear
// error and leaves the report that was there.
TEST(CliReportPaths, AFailedWriteKeepsTheOldReport) {
  std::string dir = scratch();
  const std::string out = dir + "/r.html";
  ASSERT_EQ(gpuscope(dir, "report " + fixtures() + " -o " + out).exit_code, kExitOk);
  const std::string before = slurp(out);
  CliRun run = run_captured("sh -c 'ulimit -f 64; exec " + std::string(GPUSCOPE_BIN) + " report " +
                                fixtures() + " --title other -o " + out + "'",
                            dir + "/std");
  EXPECT_EQ(run.exit_code, kExitError) << run.err;
  EXPECT_THAT(run.err, HasSubstr("File too large"));
  EXPECT_EQ(slurp(out), before);
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    EXPECT_THAT(e.path().filename().string(), ::testing::Not(HasSubstr("tmp"))) << "left behind";
  }
}

// A store on read-only media (a shipped sample, an archive share): reading it works, and it is
// never called damaged. The name has the characters a SQLite URI would otherwise take apart.
TEST(CliReportPaths, AStoreOnAReadOnlyMountIsRead) {
  if (!testing::can_unshare_mounts()) {
    GTEST_SKIP() << "cannot make a private mount namespace here (unshare -rm)";
  }
  std::string dir = scratch();
  const std::string ro = dir + "/ro";
  std::filesystem::create_directories(ro);
  const std::string db = make_store(dir + "/clean.db");
  const std::string name = "odd ?#%name.db";
  std::filesystem::copy_file(db, dir + "/" + name);
  std::ofstream(dir + "/ro.sh") << "mount --bind '" << dir << "' '" << ro << "' || exit 9\n"
                                << "mount -o remount,bind,ro '" << ro << "' || exit 9\n"
                                << "for f in clean.db '" << name << "'; do\n"
                                << "  '" << GPUSCOPE_BIN << "' report \"" << ro
                                << "/$f\" --list; echo rc=$?\n"
                                << "done\nls '" << ro << "'\n";
  CliRun run = run_captured("unshare -rm sh " + dir + "/ro.sh", dir + "/std");
  std::size_t ok = 0;
  for (std::size_t at = 0; (at = run.out.find("rc=0\n", at)) != std::string::npos; ++at) ++ok;
  EXPECT_EQ(ok, 2u) << run.out << run.err;
  EXPECT_THAT(run.out, HasSubstr("hand-made bench"));
  EXPECT_THAT(run.err, ::testing::Not(HasSubstr("damaged")));
  EXPECT_THAT(run.out, ::testing::Not(HasSubstr("-shm")));
}

// --- monitor --------------------------------------------------------------------------------

const char kMonitor[] = "monitor --no-tui --duration 0.3 --interval 50 ";

TEST(CliMonitorPaths, TwoSinksOnOneFileAreRefused) {
  std::string dir = scratch();
  const std::string db = make_store(dir + "/x.db");
  const std::string before = slurp(db);
  CliRun store_csv = gpuscope(dir, kMonitor + std::string("--store ") + db + " --csv " + db);
  EXPECT_EQ(store_csv.exit_code, kExitUsage) << store_csv.err;
  EXPECT_THAT(store_csv.err, HasSubstr("--store " + db));
  EXPECT_THAT(store_csv.err, HasSubstr("--csv " + db));
  EXPECT_EQ(slurp(db), before);

  const std::string f = dir + "/f";
  CliRun both = gpuscope(dir, kMonitor + std::string("--csv ") + f + " --jsonl " + dir + "/./f");
  EXPECT_EQ(both.exit_code, kExitUsage) << both.err;
  EXPECT_THAT(both.err, HasSubstr("same file"));
  EXPECT_FALSE(std::filesystem::exists(f));
}

TEST(CliMonitorPaths, ARecordingNeverReplacesAStoreOrAForeignFile) {
  std::string dir = scratch();
  const std::string db = make_store(dir + "/old.db");
  const std::string before = slurp(db);
  for (const char* option : {"--csv ", "--jsonl "}) {
    CliRun run = gpuscope(dir, kMonitor + std::string(option) + db);
    EXPECT_EQ(run.exit_code, kExitUsage) << run.err;
    EXPECT_THAT(run.err, HasSubstr("a gpuscope results store"));
    EXPECT_EQ(slurp(db), before);
  }
  const std::string notes = dir + "/notes.csv";
  std::ofstream(notes) << "a,b\n1,2\n";
  CliRun refused = gpuscope(dir, kMonitor + std::string("--csv ") + notes);
  EXPECT_EQ(refused.exit_code, kExitUsage) << refused.err;
  EXPECT_THAT(refused.err, HasSubstr("--force"));
  EXPECT_EQ(slurp(notes), "a,b\n1,2\n");
  CliRun forced = gpuscope(dir, kMonitor + std::string("--force --csv ") + notes);
  EXPECT_EQ(forced.exit_code, kExitOk) << forced.err;
  EXPECT_THAT(slurp(notes), HasSubstr("unix_s,t_s,gpu"));
  // Its own recordings are replaced without --force.
  const std::string jsonl = dir + "/m.jsonl";
  ASSERT_EQ(gpuscope(dir, kMonitor + std::string("--csv ") + notes + " --jsonl " + jsonl).exit_code,
            kExitOk);
  EXPECT_EQ(gpuscope(dir, kMonitor + std::string("--csv ") + notes + " --jsonl " + jsonl).exit_code,
            kExitOk);
}

// --- bench ----------------------------------------------------------------------------------

const char kBench[] = "bench --model vit_b16 --task infer --mode bf16 --windows 1 --steps 1 ";

// `ln -s victim be2.json.tmp; gpuscope bench ... --json be2.json` used to overwrite the victim.
TEST(CliBenchPaths, ASymlinkAtTheTemporaryNameIsNeverFollowed) {
  std::string dir = scratch();
  const std::string victim = dir + "/victim", json = dir + "/be2.json";
  std::ofstream(victim) << "precious";
  std::filesystem::create_symlink(victim, json + ".tmp");
  CliRun run = gpuscope(dir, kBench + std::string("--json ") + json);
  ASSERT_EQ(run.exit_code, kExitOk) << run.err;
  EXPECT_EQ(slurp(victim), "precious");
  EXPECT_THAT(slurp(json), HasSubstr("\"gpuscope.bench\""));
}

TEST(CliBenchPaths, TheJsonFileIsNeverTheStoreOrAForeignFile) {
  std::string dir = scratch();
  const std::string db = dir + "/x.db";
  CliRun same = gpuscope(dir, kBench + std::string("--json ") + db + " --store " + db);
  EXPECT_EQ(same.exit_code, kExitUsage) << same.err;
  EXPECT_THAT(same.err, HasSubstr("--json " + db));
  EXPECT_THAT(same.err, HasSubstr("--store " + db));
  const std::string notes = dir + "/notes.json";
  std::ofstream(notes) << "{\"mine\": true}\n";
  CliRun foreign = gpuscope(dir, kBench + std::string("--json ") + notes);
  EXPECT_EQ(foreign.exit_code, kExitUsage) << foreign.err;
  EXPECT_EQ(slurp(notes), "{\"mine\": true}\n");
  // --resume F --json F goes on with F: the same file by design.
  const std::string json = dir + "/b.json";
  ASSERT_EQ(gpuscope(dir, kBench + std::string("--json ") + json).exit_code, kExitOk);
  CliRun resumed = gpuscope(dir, kBench + std::string("--resume ") + json + " --json " + json);
  EXPECT_EQ(resumed.exit_code, kExitOk) << resumed.err;
  CliRun zero = gpuscope(dir, kBench + std::string("--resume /dev/zero"));
  EXPECT_EQ(zero.exit_code, kExitUsage) << zero.err;
  EXPECT_THAT(zero.err, HasSubstr("not a regular file"));
}

// --- study ----------------------------------------------------------------------------------

// `study -o FILE` suggested --force, which then failed "Not a directory".
TEST(CliStudyPaths, OutputMustBeAFolder) {
  std::string dir = scratch();
  const std::string file = dir + "/a-file";
  std::ofstream(file) << "x";
  for (const std::string& args :
       {"study --quick -o " + file, "study --quick --force -o " + file, "study --sample -o " + file,
        "study --sample --force -o " + file, "study --resume " + file}) {
    CliRun run = gpuscope(dir, args);
    EXPECT_EQ(run.exit_code, kExitUsage) << args << ": " << run.err;
    EXPECT_THAT(run.err, HasSubstr("takes a folder")) << args;
    EXPECT_THAT(run.err, Not(HasSubstr("Not a directory"))) << args;
    EXPECT_EQ(slurp(file), "x");
  }
}

}  // namespace
}  // namespace gpuscope
