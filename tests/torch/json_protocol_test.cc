#include "json_protocol.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "json_writer.h"

namespace gpuscope::workloads {
namespace {

using nlohmann::json;

TEST(JsonProtocol, VersionIsPinned) {
  // Bump only when a field changes meaning or disappears; parents check it.
  EXPECT_EQ(kProtocolVersion, 1);
}

TEST(JsonWriter, EscapesAndWritesNonFiniteAsNull) {
  const std::string line = JsonObject()
                               .add("text", "a \"quoted\"\nline\\\x01")
                               .add("nan", std::numeric_limits<double>::quiet_NaN())
                               .add("inf", std::numeric_limits<double>::infinity())
                               .add("x", 0.1)
                               .add("n", int64_t{1} << 40)
                               .add("flag", true)
                               .add("none", std::optional<double>())
                               .str();
  const json j = json::parse(line);
  EXPECT_EQ(j["text"], "a \"quoted\"\nline\\\x01");
  EXPECT_TRUE(j["nan"].is_null());
  EXPECT_TRUE(j["inf"].is_null());
  EXPECT_DOUBLE_EQ(j["x"].get<double>(), 0.1);
  EXPECT_EQ(j["n"].get<int64_t>(), int64_t{1} << 40);
  EXPECT_TRUE(j["flag"].get<bool>());
  EXPECT_TRUE(j["none"].is_null());
  EXPECT_EQ(line.find('\n'), std::string::npos);  // one line
}

TEST(JsonWriter, ArrayOfItemsAsJson) {
  const std::vector<std::string> notes = {"a", "b \"c\""};
  EXPECT_EQ(json_array(notes, json_quote), R"(["a","b \"c\""])");
  EXPECT_EQ(json_array(std::vector<int>{}, [](int) { return std::string("x"); }), "[]");
}

TEST(JsonProtocol, StartLineCarriesTheConfiguration) {
  RunConfig config;
  config.model = ModelKind::gpt2;
  config.mode = PrecisionMode::amp_fp16;
  config.batch = 12;
  DeviceInfo device;
  device.name = "cpu";
  StartRecord record;
  record.config = &config;
  record.device = &device;
  record.parameters = 124'439'808;
  record.torch_version = "2.11.0";
  const json j = json::parse(start_line(record));
  EXPECT_EQ(j["v"], 1);
  EXPECT_EQ(j["type"], "start");
  EXPECT_EQ(j["model"], "gpt2");
  EXPECT_EQ(j["python_model"], "gpt2");
  EXPECT_EQ(j["task"], "train");
  EXPECT_EQ(j["mode"], "amp_fp16");
  EXPECT_EQ(j["batch"], 12);
  EXPECT_EQ(j["parameters"], 124'439'808);
  EXPECT_EQ(j["device"]["type"], "cpu");
  EXPECT_EQ(j["options"]["sdpa"], "auto");
  EXPECT_FALSE(j["options"]["cuda_graphs"].get<bool>());
  EXPECT_EQ(j["options"]["input"], "synthetic");
  EXPECT_TRUE(j["options"]["data"].is_null());
  EXPECT_TRUE(j["notes"].empty());
}

TEST(JsonProtocol, StartLineCarriesTheInputPathAndNotes) {
  RunConfig config;
  config.model = ModelKind::resnet50;
  config.input.kind = InputKind::jpeg;
  config.input.loader_workers = 8;
  config.input.non_blocking = false;
  config.input.data = "/data/imagenet \"val\"";
  DeviceInfo device;
  device.name = "cpu";
  StartRecord record;
  record.config = &config;
  record.device = &device;
  record.pinned = true;
  record.notes = {"first note", "second \"quoted\" note"};
  const json j = json::parse(start_line(record));
  EXPECT_EQ(j["options"]["input"], "jpeg");
  EXPECT_EQ(j["options"]["loader_workers"], 8);
  EXPECT_TRUE(j["options"]["pinned"].get<bool>());
  EXPECT_FALSE(j["options"]["non_blocking"].get<bool>());
  EXPECT_EQ(j["options"]["data"], "/data/imagenet \"val\"");
  EXPECT_FALSE(j["options"].contains("guard_steps"));
  ASSERT_EQ(j["notes"].size(), 2u);
  EXPECT_EQ(j["notes"][1], "second \"quoted\" note");
  config.task = Task::guard;
  config.guard_steps = 77;
  EXPECT_EQ(json::parse(start_line(record))["options"]["guard_steps"], 77);
}

TEST(JsonProtocol, ResultLineCarriesLoaderEvidenceAndGuardScales) {
  RunResult r;
  r.task = Task::guard;
  r.losses = {6.9, 5.1};
  r.loss_scales = {65536.0, 32768.0};
  r.skipped_steps = 1;
  r.seconds = 2.5;
  InputEvidence input;
  input.wait_seconds = 0.25;
  input.wait_seconds_total = 0.5;
  input.batches = 12;
  input.h2d_bytes = 1 << 20;
  input.produce_seconds = 3.0;
  input.unreadable_files = 2;
  r.input = input;
  const json j = json::parse(result_line(r));
  EXPECT_EQ(j["task"], "guard");
  EXPECT_EQ(j["loss"]["values"].size(), 2u);
  EXPECT_EQ(j["loss_scale_values"][1], 32768.0);
  EXPECT_EQ(j["skipped_steps"], 1);
  EXPECT_EQ(j["seconds"], 2.5);
  EXPECT_EQ(j["input_wait_seconds"], 0.25);
  EXPECT_EQ(j["input_wait_seconds_total"], 0.5);
  EXPECT_EQ(j["loader_batches"], 12);
  EXPECT_EQ(j["h2d_bytes"], 1 << 20);
  EXPECT_EQ(j["loader_produce_seconds"], 3.0);
  EXPECT_EQ(j["unreadable_files"], 2);

  const json synthetic = json::parse(result_line(RunResult{}));
  EXPECT_TRUE(synthetic["input_wait_seconds"].is_null());
  EXPECT_TRUE(synthetic["h2d_bytes"].is_null());
  EXPECT_TRUE(synthetic["loss_scale_values"].is_null());
  EXPECT_TRUE(synthetic["seconds"].is_null());
}

TEST(JsonProtocol, ResultLine) {
  RunResult r;
  r.model = ModelKind::vit_b16;
  r.task = Task::train;
  r.mode = PrecisionMode::amp_bf16;
  r.batch = 160;
  r.samples_per_second = 2400.5;
  r.window_samples_per_second = {2400.5, 2390.0, 2410.0};
  r.step_seconds = summarize({0.066, 0.067, 0.065});
  r.peak_allocated_bytes = int64_t{11} << 30;
  r.peak_reserved_bytes = int64_t{12} << 30;
  r.losses = {6.9, 6.8, std::numeric_limits<double>::quiet_NaN()};
  r.capture_seconds = 1.5;
  const json j = json::parse(result_line(r));
  EXPECT_EQ(j["type"], "result");
  EXPECT_EQ(j["model"], "vit_b16");
  EXPECT_EQ(j["batch"], 160);
  EXPECT_DOUBLE_EQ(j["samples_per_second"].get<double>(), 2400.5);
  EXPECT_EQ(j["window_samples_per_second"].size(), 3u);
  EXPECT_DOUBLE_EQ(j["step_seconds"]["median"].get<double>(), 0.066);
  EXPECT_EQ(j["step_seconds"]["count"], 3);
  EXPECT_EQ(j["peak_allocated_bytes"].get<int64_t>(), int64_t{11} << 30);
  EXPECT_DOUBLE_EQ(j["loss"]["first"].get<double>(), 6.9);
  EXPECT_TRUE(j["loss"]["last"].is_null());  // NaN
  EXPECT_EQ(j["loss"]["values"].size(), 3u);
  EXPECT_TRUE(j["loss_scale"].is_null());
  EXPECT_TRUE(j["skipped_steps"].is_null());
  EXPECT_DOUBLE_EQ(j["capture_seconds"].get<double>(), 1.5);
  EXPECT_FALSE(j["partial"].get<bool>());
}

TEST(JsonProtocol, InferenceResultHasNoLoss) {
  RunResult r;
  r.task = Task::infer;
  const json j = json::parse(result_line(r));
  EXPECT_TRUE(j["loss"].is_null());
  EXPECT_TRUE(j["peak_allocated_bytes"].is_null());  // CPU: no allocator counters
}

TEST(JsonProtocol, OtherLines) {
  const json window = json::parse(window_line({2, 10, 1600, 0.5}));
  EXPECT_EQ(window["type"], "window");
  EXPECT_EQ(window["window"], 2);
  EXPECT_DOUBLE_EQ(window["samples_per_second"].get<double>(), 3200);

  const json probe =
      json::parse(batch_probe_line({512, ProbeOutcome::out_of_memory, "CUDA out of memory"}));
  EXPECT_EQ(probe["type"], "batch_probe");
  EXPECT_FALSE(probe["fits"].get<bool>());
  EXPECT_EQ(probe["outcome"], "out_of_memory");

  const json skipped = json::parse(skipped_line("not_supported", "no fp8 here"));
  EXPECT_EQ(skipped["type"], "skipped");
  EXPECT_EQ(skipped["code"], "not_supported");
  EXPECT_EQ(skipped["reason"], "no fp8 here");

  const json error = json::parse(error_line("internal", "boom"));
  EXPECT_EQ(error["type"], "error");
  EXPECT_EQ(error["message"], "boom");

  const json done = json::parse(done_line(kTorchExitSkipped));
  EXPECT_EQ(done["type"], "done");
  EXPECT_FALSE(done["ok"].get<bool>());
  EXPECT_EQ(done["exit_code"], 3);
  EXPECT_TRUE(json::parse(done_line(kTorchExitOk))["ok"].get<bool>());
}

}  // namespace
}  // namespace gpuscope::workloads
