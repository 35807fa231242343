// The burn worker's argument table.
#include "worker_options.h"

#include <gtest/gtest.h>

namespace gpuscope::burn_worker {
namespace {

TEST(PrecisionList, AllNoneAndLists) {
  auto all = parse_precision_list("all");
  ASSERT_TRUE(all.ok());
  EXPECT_EQ(all->size(), kAllPrecisions.size());
  auto none = parse_precision_list("none");
  ASSERT_TRUE(none.ok());
  EXPECT_TRUE(none->empty());
  auto two = parse_precision_list("fp8,fp64");
  ASSERT_TRUE(two.ok());
  EXPECT_EQ(*two, (std::vector<Precision>{Precision::fp8, Precision::fp64}));
  EXPECT_EQ(parse_precision_list("fp16,fp4").code(), Code::invalid_argument);
  EXPECT_EQ(parse_precision_list("").code(), Code::invalid_argument);
}

TEST(WorkerArgs, Defaults) {
  const ParsedArgs p = parse_worker_args({});
  ASSERT_TRUE(p.options);
  EXPECT_EQ(p.options->size, 8192);
  EXPECT_EQ(p.options->duration_seconds, 10);
  EXPECT_EQ(p.options->precisions.size(), kAllPrecisions.size());
  EXPECT_FALSE(p.options->memory);
  EXPECT_FALSE(p.options->inject_fault);
}

TEST(WorkerArgs, EverythingParses) {
  const ParsedArgs p =
      parse_worker_args({"--precision", "bf16,int8", "--duration", "3", "--size", "4096",
                         "--memory-fraction", "0.5", "--memory", "--host-link", "--inject-fault",
                         "--inject-fault-after", "0.5", "--window", "0.25"});
  ASSERT_TRUE(p.options) << p.message;
  const WorkerOptions& o = *p.options;
  EXPECT_EQ(o.precisions, (std::vector<Precision>{Precision::bf16, Precision::int8}));
  EXPECT_EQ(o.duration_seconds, 3);
  EXPECT_EQ(o.size, 4096);
  EXPECT_EQ(o.memory_fraction, 0.5);
  EXPECT_TRUE(o.memory);
  EXPECT_TRUE(o.host_link);
  EXPECT_TRUE(o.inject_fault);
  EXPECT_EQ(o.inject_fault_after_seconds, 0.5);
  EXPECT_EQ(o.window_seconds, 0.25);
}

TEST(WorkerArgs, BadArgumentsExitTwo) {
  for (const std::vector<std::string>& args :
       {std::vector<std::string>{"--size", "1000"},
        {"--size", "32"},
        {"--precision", "fp4"},
        {"--duration", "0"},
        {"--memory-fraction", "1.5"},
        {"--no-such-option"},
        {"--duration", "abc"},
        {"--host-link-min-bytes", "1048576", "--host-link-max-bytes", "4096"}}) {
    const ParsedArgs p = parse_worker_args(args);
    EXPECT_FALSE(p.options) << args[0];
    EXPECT_EQ(p.exit_code, kExitUsage) << args[0];
    EXPECT_FALSE(p.message.empty());
  }
}

TEST(WorkerArgs, HelpExitsZero) {
  const ParsedArgs p = parse_worker_args({"--help"});
  EXPECT_FALSE(p.options);
  EXPECT_EQ(p.exit_code, kExitOk);
  EXPECT_NE(p.message.find("--inject-fault"), std::string::npos);
}

}  // namespace
}  // namespace gpuscope::burn_worker

namespace gpuscope::burn_worker {
namespace {

TEST(WorkerArgs, Interconnect) {
  const ParsedArgs p =
      parse_worker_args({"--interconnect", "--interconnect-max-bytes", "16777216"});
  ASSERT_TRUE(p.options) << p.message;
  EXPECT_TRUE(p.options->interconnect);
  EXPECT_EQ(p.options->interconnect_max_bytes, 16777216u);
  EXPECT_FALSE(parse_worker_args({"--interconnect-max-bytes", "1000"}).options);  // < 1 MiB
}

}  // namespace
}  // namespace gpuscope::burn_worker
