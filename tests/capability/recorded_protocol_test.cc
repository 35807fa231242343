// The protocol as the worker really wrote it on the H100 (2026-11-22): --list, a bf16 and an
// fp8 burn, --memory, and an --inject-fault run. What `gpuscope burn` will parse.
#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "capability/burn_json.h"

namespace gpuscope::capability {
namespace {

std::vector<nlohmann::json> recording() {
  std::ifstream in(GPUSCOPE_BURN_FIXTURES "/burn_worker_h100_2026-11-22.jsonl");
  std::vector<nlohmann::json> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(nlohmann::json::parse(line));
  return lines;
}

std::vector<nlohmann::json> of_type(const std::vector<nlohmann::json>& lines,
                                    const std::string& type) {
  std::vector<nlohmann::json> out;
  for (const auto& l : lines) {
    if (l["type"] == type) out.push_back(l);
  }
  return out;
}

TEST(RecordedProtocol, EveryLineIsVersionedAndKnown) {
  const auto lines = recording();
  ASSERT_GT(lines.size(), 30u);
  const std::set<std::string> known = {
      "device",    "precision_support", "progress", "gemm_window", "gemm_result", "skipped",
      "memory_bw", "host_link",         "overlap",  "error",       "done"};
  for (const auto& l : lines) {
    EXPECT_EQ(l["v"], kBurnProtocolVersion);
    EXPECT_TRUE(known.count(l["type"].get<std::string>())) << l.dump();
  }
}

TEST(RecordedProtocol, GemmResultsAreCompleteAndVerified) {
  const auto results = of_type(recording(), "gemm_result");
  ASSERT_EQ(results.size(), 3u);  // bf16, fp8, then the injected-fault bf16 run
  for (const auto& r : results) {
    EXPECT_EQ(r["n"], 8192);
    EXPECT_GT(r["tflops"]["median"].get<double>(), 500.0);
    EXPECT_GE(r["windows"].get<int>(), 3);
    EXPECT_GT(r["verification"]["gemms_checked"].get<int>(), 1000);
    EXPECT_EQ(r["verification"]["reference_tiles_checked"], 6);
  }
  EXPECT_EQ(results[0]["precision"], "bf16");
  EXPECT_EQ(results[0]["ok"], true);
  EXPECT_EQ(results[1]["precision"], "fp8");
  EXPECT_EQ(results[1]["algorithm"]["layout"], "TN");
  EXPECT_EQ(results[1]["ok"], true);
  EXPECT_EQ(results[2]["fault_injected"], true);
  EXPECT_EQ(results[2]["verification"]["mismatches"], 1);
  EXPECT_EQ(results[2]["ok"], false);
}

TEST(RecordedProtocol, InjectedFaultNamesTheDeviceAndExitsOne) {
  const auto lines = recording();
  const std::string uuid = of_type(lines, "device").front()["uuid"];
  const auto errors = of_type(lines, "error");
  ASSERT_EQ(errors.size(), 1u);
  EXPECT_EQ(errors[0]["code"], "verification_failed");
  EXPECT_EQ(errors[0]["device"]["uuid"], uuid);
  EXPECT_NE(errors[0]["message"].get<std::string>().find(uuid), std::string::npos);
  const auto done = of_type(lines, "done");
  ASSERT_FALSE(done.empty());
  EXPECT_EQ(done.back()["exit_code"], 1);
}

TEST(RecordedProtocol, WindowsAddUpAndMemoryCountsBothWays) {
  const auto lines = recording();
  for (const auto& w : of_type(lines, "gemm_window")) {
    const double rate = w["flop"].get<double>() / w["seconds"].get<double>();
    EXPECT_NEAR(w["flop_per_second"].get<double>(), rate, rate * 1e-9);
    EXPECT_LE(w["seconds"].get<double>(), w["wall_seconds"].get<double>());
  }
  for (const auto& m : of_type(lines, "memory_bw")) {
    if (m["kernel"] == "copy") {
      EXPECT_EQ(m["bytes_counted"], 2 * m["buffer_bytes"].get<std::uint64_t>());
    }
  }
}

}  // namespace
}  // namespace gpuscope::capability
