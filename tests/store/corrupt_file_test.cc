// A file that is not a healthy gpuscope store — another kind of file, another application's
// SQLite database, a damaged store, one from a newer gpuscope — is a clear data_error and is
// never modified. A store that cannot be written is an io_error.
#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include "gpuscope/store.h"
#include "store/sqlite_db.h"
#include "store_test_util.h"

namespace gpuscope::store {
namespace {

using ::testing::HasSubstr;
using testing::ScratchDir;

// Opens `path` both ways and expects data_error, with the file byte-for-byte as it was and its
// folder as it was: a file that does not carry gpuscope's application id is never handed to
// SQLite; one that does (a damaged store) is read by SQLite in read-only mode, which creates the
// -wal/-shm files of a WAL database, and those must be gone again after the refusal. The message
// says `says` too.
void expect_refused_untouched(const std::string& path, const std::string& why,
                              const std::string& says = "") {
  std::string before = testing::read_bytes(path);
  for (bool read_only : {false, true}) {
    StoreOptions options;
    options.read_only = read_only;
    auto store = Store::open(path, options);
    ASSERT_FALSE(store.ok()) << why;
    EXPECT_EQ(store.code(), Code::data_error) << why << ": " << store.status().to_string();
    EXPECT_THAT(store.status().message(), HasSubstr(path));
    EXPECT_THAT(store.status().message(), HasSubstr("not changed"));
    EXPECT_THAT(store.status().message(), HasSubstr(says));
    EXPECT_EQ(testing::read_bytes(path), before) << why << ": the file was modified";
  }
  EXPECT_FALSE(std::filesystem::exists(path + "-journal")) << why << ": left a journal";
  for (const char* suffix : {"-wal", "-shm"}) {
    EXPECT_FALSE(std::filesystem::exists(path + suffix)) << why << ": left " << suffix;
  }
}

void exec_on(const std::string& path, const std::string& sql) {
  auto db = detail::Database::open(path, detail::Database::Mode::read_write_create);
  ASSERT_TRUE(db.ok()) << db.status().to_string();
  Status done = (*db)->exec(sql);
  ASSERT_TRUE(done.ok()) << done.to_string();
}

// A store with enough rows to span many pages.
void make_store(const std::string& path) {
  auto store = Store::open(path);
  ASSERT_TRUE(store.ok()) << store.status().to_string();
  RunData run = testing::sample_run();
  run.telemetry[0].t_s.clear();
  run.telemetry[0].values.clear();
  for (int i = 0; i < 20000; ++i) {
    run.telemetry[0].t_s.push_back(i * 0.1);
    run.telemetry[0].values.push_back(100 + i % 600);
  }
  ASSERT_TRUE((*store)->write(run).ok());
}

TEST(CorruptFileTest, TextFileIsNotAStore) {
  ScratchDir dir;
  std::string path = dir.file("notes.db");
  std::string text;
  for (int i = 0; i < 100; ++i) text += "this is somebody's notes file, not a database\n";
  testing::write_bytes(path, text);
  expect_refused_untouched(path, "a text file");
}

TEST(CorruptFileTest, ShortFileIsNotAStore) {
  ScratchDir dir;
  std::string path = dir.file("short.db");
  testing::write_bytes(path, "SQLite format 3");
  expect_refused_untouched(path, "a file shorter than a SQLite header");
}

TEST(CorruptFileTest, ForeignSqliteDatabaseIsNotAStore) {
  ScratchDir dir;
  std::string path = dir.file("browser-history.db");
  // In WAL mode: a careless open would check-point or rewrite its header.
  exec_on(path,
          "PRAGMA journal_mode = WAL; CREATE TABLE visits (url TEXT); INSERT INTO visits VALUES "
          "('https://example.org')");
  expect_refused_untouched(path, "a SQLite database of no application",
                           "without gpuscope's application id");
}

TEST(CorruptFileTest, OtherApplicationsDatabaseIsNotAStore) {
  ScratchDir dir;
  std::string path = dir.file("other.db");
  exec_on(path, "PRAGMA application_id = 305419896; CREATE TABLE runs (id INTEGER PRIMARY KEY)");
  expect_refused_untouched(path, "another application's database", "application_id 0x12345678");
}

TEST(CorruptFileTest, DamagedStoreIsRefused) {
  ScratchDir dir;
  std::string path = dir.file("results.db");
  make_store(path);
  std::string bytes = testing::read_bytes(path);
  ASSERT_GT(bytes.size(), 16u * 4096u);
  // Garbage over a few pages in the middle: b-tree pages of the telemetry.
  for (std::size_t i = 6 * 4096; i < 9 * 4096; ++i) bytes[i] = static_cast<char>(0xA5 ^ (i & 0xff));
  testing::write_bytes(path, bytes);
  expect_refused_untouched(path, "a store with damaged pages");
}

TEST(CorruptFileTest, TruncatedStoreIsRefused) {
  ScratchDir dir;
  std::string path = dir.file("results.db");
  make_store(path);
  std::string bytes = testing::read_bytes(path);
  testing::write_bytes(path, bytes.substr(0, bytes.size() / 2));
  expect_refused_untouched(path, "a truncated store");
}

TEST(CorruptFileTest, StoreFromANewerGpuscopeIsRefused) {
  ScratchDir dir;
  std::string path = dir.file("results.db");
  make_store(path);
  exec_on(path, "PRAGMA user_version = 99");
  expect_refused_untouched(path, "a store of schema 99", "newer gpuscope");
}

TEST(CorruptFileTest, EmptyFileBecomesAStoreButIsNoStoreToRead) {
  ScratchDir dir;
  std::string path = dir.file("touched.db");
  testing::write_bytes(path, "");
  StoreOptions read_only;
  read_only.read_only = true;
  EXPECT_EQ(Store::open(path, read_only).code(), Code::data_error);
  auto store = Store::open(path);
  ASSERT_TRUE(store.ok()) << store.status().to_string();
  EXPECT_EQ((*store)->schema_version(), kStoreSchemaVersion);
}

TEST(UnwritableStoreTest, MissingDirectoryIsAnIoError) {
  ScratchDir dir;
  std::string path = dir.file("no/such/directory/results.db");
  auto store = Store::open(path);
  ASSERT_FALSE(store.ok());
  EXPECT_EQ(store.code(), Code::io_error) << store.status().to_string();
  EXPECT_THAT(store.status().message(), HasSubstr(path));
}

TEST(UnwritableStoreTest, PathThroughAFileIsAnIoError) {
  ScratchDir dir;
  testing::write_bytes(dir.file("plain.txt"), "x");
  auto store = Store::open(dir.file("plain.txt/results.db"));
  EXPECT_EQ(store.code(), Code::io_error) << store.status().to_string();
}

TEST(UnwritableStoreTest, DirectoryIsNotAStoreFile) {
  ScratchDir dir;
  std::filesystem::create_directory(dir.file("results.db"));
  EXPECT_EQ(Store::open(dir.file("results.db")).code(), Code::io_error);
}

TEST(UnwritableStoreTest, ReadOnlyDirectoryIsAnIoError) {
  if (::geteuid() == 0) GTEST_SKIP() << "root writes through directory permissions";
  ScratchDir dir;
  std::filesystem::create_directory(dir.file("locked"));
  std::filesystem::permissions(
      dir.file("locked"), std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec);
  auto store = Store::open(dir.file("locked/results.db"));
  std::filesystem::permissions(dir.file("locked"), std::filesystem::perms::owner_all);
  EXPECT_EQ(store.code(), Code::io_error) << store.status().to_string();
}

TEST(UnwritableStoreTest, FullStoreIsAnIoErrorAndKeepsWhatItHad) {
  ScratchDir dir;
  std::string path = dir.file("results.db");
  RunId kept = 0;
  {
    auto store = Store::open(path);
    ASSERT_TRUE(store.ok());
    auto id = (*store)->write(testing::sample_run());
    ASSERT_TRUE(id.ok());
    kept = *id;
  }
  {
    StoreOptions small;
    small.max_size_bytes = 96 * 1024;  // as if the disk had filled up
    auto store = Store::open(path, small);
    ASSERT_TRUE(store.ok()) << store.status().to_string();
    auto id = (*store)->write_run(testing::sample_run().run);
    ASSERT_TRUE(id.ok());
    std::vector<TelemetrySample> many;
    for (int i = 0; i < 50000; ++i) many.push_back({0, i * 0.01, "power_w", 300.0 + i % 7});
    Status full = (*store)->add_telemetry(*id, many);
    EXPECT_EQ(full.code(), Code::io_error) << full.to_string();
    EXPECT_THAT(full.message(), HasSubstr("full"));
  }
  auto store = Store::open(path);
  ASSERT_TRUE(store.ok()) << store.status().to_string();
  auto first = (*store)->load_run(kept);
  ASSERT_TRUE(first.ok());
  EXPECT_EQ(first->telemetry[0].values.size(), 3u);
  auto runs = (*store)->list_runs();
  ASSERT_TRUE(runs.ok());
  ASSERT_EQ(runs->size(), 2u);
  auto second = (*store)->load_run((*runs)[0].id);
  ASSERT_TRUE(second.ok());
  EXPECT_TRUE(second->telemetry.empty()) << "the failed batch must be rolled back whole";
}

}  // namespace
}  // namespace gpuscope::store
