#include "inject/record_writer.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "inject/config.h"
#include "inject/memory_file.h"

namespace gpuscope::inject {
namespace {

using testing::MemoryFile;

TEST(RecordWriter, InternsEachStringOnceWithANameLine) {
  MemoryFile file;
  RecordWriter& w = file.writer();
  const uint32_t a = w.intern("alpha");
  const uint32_t b = w.intern("beta");
  EXPECT_NE(a, b);
  EXPECT_EQ(w.intern("alpha"), a);
  const auto lines = file.lines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0]["t"], "name");
  EXPECT_EQ(lines[0]["id"], a);
  EXPECT_EQ(lines[0]["s"], "alpha");
  EXPECT_EQ(lines[1]["s"], "beta");
}

TEST(RecordWriter, BuffersUntilFullThenWrites) {
  MemoryFile file(/*buffer_bytes=*/64);
  RecordWriter& w = file.writer();
  const std::string line = std::string(30, 'x') + "\n";
  EXPECT_TRUE(w.append(line, RecordKind::mark));
  EXPECT_TRUE(w.append(line, RecordKind::mark));
  EXPECT_TRUE(w.append(line, RecordKind::mark));  // the first two go out to make room
  EXPECT_EQ(w.bytes(), 93u);
  const std::string big = std::string(200, 'y') + "\n";  // larger than the buffer
  EXPECT_TRUE(w.append(big, RecordKind::mark));
  EXPECT_EQ(file.text(), line + line + line + big);
  EXPECT_EQ(w.records(), 4u);
}

TEST(RecordWriter, TheCapDropsAndCountsByKindButLetsClosingLinesThrough) {
  MemoryFile file(/*buffer_bytes=*/4096, /*max_bytes=*/100);
  RecordWriter& w = file.writer();
  const std::string line = std::string(39, 'a') + "\n";
  EXPECT_TRUE(w.append(line, RecordKind::kernel));
  EXPECT_TRUE(w.append(line, RecordKind::kernel));
  EXPECT_FALSE(w.append(line, RecordKind::kernel));
  EXPECT_FALSE(w.append(line, RecordKind::mark));
  EXPECT_TRUE(w.append("{\"t\":\"end\"}\n", RecordKind::other, /*forced=*/true));
  EXPECT_EQ(w.dropped(RecordKind::kernel), 1u);
  EXPECT_EQ(w.dropped(RecordKind::mark), 1u);
  EXPECT_EQ(w.dropped_total(), 2u);
  EXPECT_EQ(file.text(), line + line + "{\"t\":\"end\"}\n");
}

TEST(RecordWriter, ANameWhoseLineWasDroppedIsDefinedAgainLater) {
  MemoryFile file(4096, /*max_bytes=*/30);
  RecordWriter& w = file.writer();
  const uint32_t first = w.intern("a-name-longer-than-the-cap-allows");
  const uint32_t second = w.intern("a-name-longer-than-the-cap-allows");
  EXPECT_NE(first, second);  // never refers to a definition that is not in the file
  EXPECT_EQ(w.dropped(RecordKind::other), 2u);
}

TEST(RecordWriter, AWriteErrorCountsTheLostRecords) {
  RecordWriter w(-1, 64, 0);
  EXPECT_FALSE(w.append("{}\n", RecordKind::mark));
  EXPECT_EQ(w.dropped(RecordKind::mark), 1u);
}

TEST(RecordWriter, ResetStartsAFreshFile) {
  MemoryFile file;
  RecordWriter& w = file.writer();
  w.intern("kept");
  w.append("{}\n", RecordKind::mark);
  w.reset(memfd_create("child", 0));
  EXPECT_EQ(w.records(), 0u);
  EXPECT_EQ(w.bytes(), 0u);
  const uint32_t id = w.intern("kept");  // defined again in the new file
  EXPECT_EQ(id, 1u);
}

TEST(Config, ReadsTheEnvironmentAndReportsBadValues) {
  static const std::map<std::string, std::string> env = {
      {"GPUSCOPE_TRACE_DIR", "/tmp/run"},      {"GPUSCOPE_TRACE_SKIP_STEPS", "20"},
      {"GPUSCOPE_TRACE_STEPS", "ten"},         {"GPUSCOPE_TRACE_DURATION_S", "2.5"},
      {"GPUSCOPE_TRACE_MAX_BYTES", "1000000"}, {"GPUSCOPE_TRACE_KINDS", "kernel,memcpy,bogus"},
  };
  const Config config = read_config([](const char* name) -> const char* {
    const auto found = env.find(name);
    return found == env.end() ? nullptr : found->second.c_str();
  });
  EXPECT_EQ(config.dir, "/tmp/run");
  EXPECT_EQ(config.skip_steps, 20u);
  EXPECT_FALSE(config.steps.has_value());
  EXPECT_EQ(config.duration_s, 2.5);
  EXPECT_EQ(config.max_bytes, 1000000u);
  EXPECT_EQ(config.step_mark, "gpuscope.step");
  EXPECT_EQ(kind_list(config.kinds), "kernel,memcpy");
  ASSERT_EQ(config.errors.size(), 2u);
  EXPECT_NE(config.errors[0].find("GPUSCOPE_TRACE_STEPS"), std::string::npos);
  EXPECT_NE(config.errors[1].find("bogus"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::inject
