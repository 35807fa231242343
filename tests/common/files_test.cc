// The files a user points gpuscope at (gpuscope/files.h): atomic writes that never follow a
// planted symlink and keep the old file on failure, capped reads of regular files only, and the
// check of a command's paths against each other.
#include "gpuscope/files.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "support/cli_run.h"
#include "support/matchers.h"

namespace gpuscope::files {
namespace {

namespace fs = std::filesystem;
using gpuscope::testing::HasAllSubstrs;
using gpuscope::testing::slurp;
using ::testing::HasSubstr;

// A folder of this test's own (CTest runs tests in parallel processes).
std::string scratch() {
  const std::string dir = ::testing::TempDir() + "/gpuscope_files_" + std::to_string(::getpid()) +
                          "_" + ::testing::UnitTest::GetInstance()->current_test_info()->name();
  fs::remove_all(dir);
  fs::create_directories(dir);
  return dir;
}

void put(const std::string& path, const std::string& text) {
  std::ofstream(path, std::ios::binary) << text;
}

// The names in `dir`, sorted.
std::vector<std::string> names_in(const std::string& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

// --- write_file_atomically ------------------------------------------------------------------

TEST(WriteFileAtomically, ReplacesTheFileAndLeavesNothingElse) {
  const std::string dir = scratch(), path = dir + "/out.json";
  put(path, "old");
  ASSERT_TRUE(write_file_atomically(path, "new\n").ok());
  EXPECT_EQ(slurp(path), "new\n");
  EXPECT_EQ(names_in(dir), std::vector<std::string>{"out.json"});
}

// The temporary names the writers used before (bench: F.tmp; report: F.tmp-PID; study:
// .F.tmp.PID) were opened without O_EXCL, so a symlink planted there was written through.
TEST(WriteFileAtomically, NeverWritesThroughASymlinkPlantedAtATemporaryName) {
  const std::string dir = scratch(), path = dir + "/be2.json", victim = dir + "/victim";
  put(victim, "precious");
  const std::string pid = std::to_string(::getpid());
  for (const std::string& name : {path + ".tmp", path + ".tmp-" + pid,
                                  dir + "/.be2.json.tmp." + pid, dir + "/.be2.json.tmp-" + pid}) {
    fs::create_symlink(victim, name);
  }
  ASSERT_TRUE(write_file_atomically(path, "{}\n").ok());
  EXPECT_EQ(slurp(victim), "precious");
  EXPECT_EQ(slurp(path), "{}\n");
  EXPECT_FALSE(fs::is_symlink(path));
}

TEST(WriteFileAtomically, ReplacesASymlinkAtThePathInsteadOfFollowingIt) {
  const std::string dir = scratch(), path = dir + "/r.html", victim = dir + "/victim";
  put(victim, "precious");
  fs::create_symlink(victim, path);
  ASSERT_TRUE(write_file_atomically(path, "<html>").ok());
  EXPECT_EQ(slurp(victim), "precious");
  EXPECT_FALSE(fs::is_symlink(path));
  EXPECT_EQ(slurp(path), "<html>");
}

TEST(WriteFileAtomically, KeepsThePermissionsOfTheFileItReplaces) {
  const std::string dir = scratch(), path = dir + "/shared.json";
  put(path, "old");
  ASSERT_EQ(::chmod(path.c_str(), 0640), 0);
  ASSERT_TRUE(write_file_atomically(path, "new").ok());
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
}

TEST(WriteFileAtomically, WritesStraightToADevice) {
  ASSERT_TRUE(write_file_atomically("/dev/null", "nothing").ok());
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode)) << "/dev/null must never be replaced by a file";
}

TEST(WriteFileAtomically, AFolderIsAnError) {
  const std::string dir = scratch();
  Status written = write_file_atomically(dir, "x");
  EXPECT_EQ(written.code(), Code::io_error);
}

// A file-size limit (as a full disk) part-way: an error that says so, the old file intact, no
// temporary file left. In a child process, whose limit it is.
TEST(WriteFileAtomically, AFileSizeLimitKeepsTheOldFile) {
  const std::string dir = scratch(), path = dir + "/big.json", message = dir + "/message";
  put(path, "old content");
  const pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    rlimit limit{64 * 1024, 64 * 1024};
    ::setrlimit(RLIMIT_FSIZE, &limit);
    Status written = write_file_atomically(path, std::string(1 << 20, 'x'));
    std::ofstream(message) << written.message();
    ::_exit(written.code() == Code::io_error ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "killed by signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << slurp(message);
  EXPECT_THAT(slurp(message), HasSubstr("File too large"));
  EXPECT_THAT(slurp(message), HasSubstr("left as it was"));
  EXPECT_EQ(slurp(path), "old content");
  EXPECT_EQ(names_in(dir), (std::vector<std::string>{"big.json", "message"}));
}

TEST(CreateTemporaryFile, MakesANewEmptyFileEachTime) {
  const std::string dir = scratch();
  auto a = create_temporary_file(dir, ".db.tmp-");
  auto b = create_temporary_file(dir, ".db.tmp-");
  ASSERT_TRUE(a.ok() && b.ok());
  EXPECT_NE(*a, *b);
  EXPECT_EQ(fs::file_size(*a), 0u);
  EXPECT_THAT(*a, HasSubstr(dir + "/.db.tmp-"));
}

// --- read_file ------------------------------------------------------------------------------

TEST(ReadFile, ReadsARegularFile) {
  const std::string dir = scratch();
  put(dir + "/a.json", "{\"kind\":1}");
  auto text = read_file(dir + "/a.json", 100);
  ASSERT_TRUE(text.ok()) << text.status().to_string();
  EXPECT_EQ(*text, "{\"kind\":1}");
}

TEST(ReadFile, RefusesDevicesFifosAndFolders) {
  const std::string dir = scratch();
  ASSERT_EQ(::mkfifo((dir + "/fifo").c_str(), 0600), 0);
  for (const std::string& path : {std::string("/dev/zero"), dir + "/fifo", dir}) {
    auto text = read_file(path, kMaxResultFileBytes);
    EXPECT_EQ(text.code(), Code::invalid_argument) << path;
    EXPECT_THAT(text.status().message(), HasSubstr("not a regular file")) << path;
  }
}

TEST(ReadFile, RefusesAFileLargerThanTheCap) {
  const std::string dir = scratch();
  put(dir + "/big", std::string(2000, 'x'));
  auto text = read_file(dir + "/big", 1000);
  EXPECT_EQ(text.code(), Code::data_error);
  EXPECT_EQ(read_file(dir + "/none", 1000).code(), Code::not_found);
}

// --- check_paths ----------------------------------------------------------------------------

PathUse output(const std::string& option, const std::string& path,
               OutputKind kind = OutputKind::report_json) {
  return output_path(option, path, kind);
}
PathUse input(const std::string& path) {
  return input_path("", path);
}

TEST(CheckPaths, TheSameFileUnderAnyNameIsRefusedNamingBothOptions) {
  const std::string dir = scratch(), f = dir + "/f.csv";
  put(f, "");
  fs::create_symlink(f, dir + "/link.csv");
  fs::create_hard_link(f, dir + "/hard.csv");
  for (const std::string& other : {f, dir + "/./f.csv", dir + "/link.csv", dir + "/hard.csv",
                                   dir + "/../" + fs::path(dir).filename().string() + "/f.csv"}) {
    Status checked = check_paths({output("--csv", f, OutputKind::monitor_csv),
                                  output("--jsonl", other, OutputKind::monitor_jsonl)},
                                 /*force=*/true);
    EXPECT_EQ(checked.code(), Code::invalid_argument) << other;
    EXPECT_THAT(checked.message(), HasAllSubstrs({"--csv " + f, "--jsonl " + other, "same file"}));
  }
}

TEST(CheckPaths, FilesNotThereYetMatchByFolderAndName) {
  const std::string dir = scratch();
  Status checked = check_paths(
      {output("--json", dir + "/new.json"), output("--html", dir + "/./new.json")}, false);
  EXPECT_EQ(checked.code(), Code::invalid_argument);
  EXPECT_TRUE(
      check_paths({output("--json", dir + "/a.json"), output("--html", dir + "/b.html")}, false)
          .ok());
}

TEST(CheckPaths, AnOutputOverAnInputIsRefusedEvenWithForce) {
  const std::string dir = scratch(), in = dir + "/burn.json";
  put(in, "{\"kind\": \"gpuscope.report\"}");
  Status checked = check_paths({input(in), output("--json", in)}, /*force=*/true);
  EXPECT_EQ(checked.code(), Code::invalid_argument);
  EXPECT_THAT(checked.message(), HasSubstr("overwrite what is read from it"));
}

TEST(CheckPaths, AStoreSharedWithAnotherOutputIsRefused) {
  const std::string dir = scratch(), db = dir + "/x.db";
  Status checked = check_paths(
      {store_path("--store", db), output("--csv", dir + "/x.db", OutputKind::monitor_csv)},
      /*force=*/true);
  EXPECT_EQ(checked.code(), Code::invalid_argument);
  EXPECT_THAT(checked.message(), HasSubstr("--store"));
}

TEST(CheckPaths, AnInputMayBeTheOutputWhereThatIsTheDesign) {
  const std::string dir = scratch(), f = dir + "/s.json";
  put(f, "{\"kind\": \"gpuscope.bench\"}");
  EXPECT_TRUE(check_paths({output_path("--json", f, OutputKind::bench_json, "--resume"),
                           input_path("--resume", f)},
                          false)
                  .ok());
}

TEST(CheckPaths, ReadingOneFileTwiceIsFine) {
  const std::string dir = scratch(), f = dir + "/a.json";
  put(f, "{}");
  EXPECT_TRUE(check_paths({input(f), input(f)}, false).ok());
}

TEST(CheckPaths, AnInputThatIsNoRegularFileIsRefused) {
  Status checked = check_paths({input("/dev/zero")}, false);
  EXPECT_EQ(checked.code(), Code::invalid_argument);
  EXPECT_THAT(checked.message(), HasSubstr("/dev/zero"));
}

TEST(CheckPaths, AnOutputOverAFileGpuscopeDidNotWriteNeedsForce) {
  const std::string dir = scratch(), f = dir + "/notes.csv";
  put(f, "shopping list\n");
  Status checked = check_paths({output("--csv", f, OutputKind::monitor_csv)}, false);
  EXPECT_EQ(checked.code(), Code::invalid_argument);
  EXPECT_THAT(checked.message(), HasSubstr("--force"));
  EXPECT_THAT(checked.message(), HasSubstr("--csv " + f));
  EXPECT_TRUE(check_paths({output("--csv", f, OutputKind::monitor_csv)}, true).ok());
}

TEST(CheckPaths, AnEmptyOrMissingOutputOrADeviceIsFine) {
  const std::string dir = scratch();
  put(dir + "/empty.csv", "");
  EXPECT_TRUE(check_paths({output("--csv", dir + "/empty.csv", OutputKind::monitor_csv),
                           output("--jsonl", dir + "/new.jsonl", OutputKind::monitor_jsonl),
                           output("-o", "/dev/null", OutputKind::report_html),
                           output("-o", "-", OutputKind::report_html)},
                          false)
                  .ok());
}

TEST(CheckPaths, AStoreIsNeverTakenForAnOutput) {
  const std::string dir = scratch(), db = dir + "/old.db";
  std::string header(100, '\0');
  header.replace(0, 16, std::string("SQLite format 3\0", 16));
  header[68] = 0x67, header[69] = 0x70, header[70] = 0x73, header[71] = 0x63;  // gpuscope's id
  put(db, header + std::string(4000, '\0'));
  Status checked = check_paths({output("--csv", db, OutputKind::monitor_csv)}, false);
  EXPECT_EQ(checked.code(), Code::invalid_argument);
  EXPECT_THAT(checked.message(), HasSubstr("a gpuscope results store"));
}

TEST(WrittenByGpuscope, RecognisesEachOutputBySignature) {
  const std::string dir = scratch();
  // nlohmann::json sorts keys: "kind" comes after a long "answers".
  put(dir + "/b.json", "{\"answers\": [" + std::string(100000, ' ') +
                           "{\"kind\": \"x\"}], \"kind\": \"gpuscope.bench\", \"rows\": []}\n");
  put(dir + "/r.json", "{\"context\": {}, \"kind\": \"gpuscope.report\"}");
  put(dir + "/m.jsonl", "{\"kind\":\"gpuscope.monitor\",\"schema_version\":1}\n{\"type\":1}\n");
  put(dir + "/m.csv", "unix_s,t_s,gpu,uuid,lost,power_w\n1,2,0,GPU-x,0,300\n");
  put(dir + "/r.csv", "table,label,value,unit,detail,tone\n");
  put(dir + "/r.html", "<!DOCTYPE html>\n<meta name=\"generator\" content=\"gpuscope\">\n");
  put(dir + "/r.md", "# t\n\nGenerated 2026-11-22T10:15:00Z by gpuscope 0.1.0 from `x`.\n");
  put(dir + "/r.txt", "t\ngenerated 2026-11-22T10:15:00Z by gpuscope 0.1.0\n");
  EXPECT_TRUE(written_by_gpuscope(dir + "/b.json", OutputKind::bench_json));
  EXPECT_FALSE(written_by_gpuscope(dir + "/b.json", OutputKind::report_json));
  EXPECT_TRUE(written_by_gpuscope(dir + "/r.json", OutputKind::report_json));
  EXPECT_TRUE(written_by_gpuscope(dir + "/m.jsonl", OutputKind::monitor_jsonl));
  EXPECT_FALSE(written_by_gpuscope(dir + "/m.jsonl", OutputKind::report_json));
  EXPECT_TRUE(written_by_gpuscope(dir + "/m.csv", OutputKind::monitor_csv));
  EXPECT_FALSE(written_by_gpuscope(dir + "/m.csv", OutputKind::report_csv));
  EXPECT_TRUE(written_by_gpuscope(dir + "/r.csv", OutputKind::report_csv));
  EXPECT_TRUE(written_by_gpuscope(dir + "/r.html", OutputKind::report_html));
  EXPECT_TRUE(written_by_gpuscope(dir + "/r.md", OutputKind::report_markdown));
  EXPECT_TRUE(written_by_gpuscope(dir + "/r.txt", OutputKind::report_text));
  put(dir + "/other.json", "[{\"kind\": \"gpuscope.bench\"}]");
  EXPECT_FALSE(written_by_gpuscope(dir + "/other.json", OutputKind::bench_json));
}

}  // namespace
}  // namespace gpuscope::files
