#include "options.h"

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include <vector>

namespace gpuscope::workloads {
namespace {

std::variant<CommandLine, UsageError> parse(std::vector<const char*> args) {
  return parse_command_line(args);
}

TEST(Options, Defaults) {
  const auto parsed = parse({});
  ASSERT_TRUE(std::holds_alternative<CommandLine>(parsed));
  const RunConfig& c = std::get<CommandLine>(parsed).config;
  EXPECT_EQ(c.model, ModelKind::vit_b16);
  EXPECT_EQ(c.task, Task::train);
  EXPECT_EQ(c.mode, PrecisionMode::amp_bf16);
  EXPECT_FALSE(c.batch.has_value());
  EXPECT_FALSE(c.batch_auto);
  EXPECT_EQ(c.device, "cuda");
  EXPECT_TRUE(c.fused_adamw);
  EXPECT_TRUE(c.cudnn_benchmark);
  EXPECT_EQ(c.cuda_graphs, Toggle::automatic);
  EXPECT_TRUE(c.bucket_views);
  EXPECT_EQ(c.grad_comm, GradComm::fp32);
  EXPECT_EQ(c.all_reduce, AllReduce::automatic);
  EXPECT_TRUE(c.bucket_step);
  EXPECT_TRUE(c.grad_sync);
}

TEST(Options, DataParallel) {
  const auto parsed =
      parse({"--world-size", "2", "--bucket-cap-mb", "10", "--bucket-views", "off",
             "--dist-timeout", "30", "--grad-comm", "bf16", "--bucket-step", "off", "--grad-sync",
             "off", "--all-reduce", "copy-engine", "--shard-optimizer", "off"});
  ASSERT_TRUE(std::holds_alternative<CommandLine>(parsed)) << std::get<UsageError>(parsed).message;
  const RunConfig& c = std::get<CommandLine>(parsed).config;
  EXPECT_EQ(c.world_size, 2);
  EXPECT_EQ(c.bucket_cap_mb, 10);
  EXPECT_FALSE(c.bucket_views);
  EXPECT_EQ(c.dist_timeout_s, 30);
  EXPECT_EQ(c.grad_comm, GradComm::bf16);
  EXPECT_FALSE(c.bucket_step);
  EXPECT_FALSE(c.grad_sync);
  EXPECT_EQ(c.all_reduce, AllReduce::copy_engine);
  EXPECT_EQ(c.shard_optimizer, Toggle::off);
  EXPECT_EQ(RunConfig{}.shard_optimizer, Toggle::automatic);
  EXPECT_TRUE(std::holds_alternative<UsageError>(parse({"--shard-optimizer", "zero1"})));
  EXPECT_TRUE(std::holds_alternative<UsageError>(parse({"--bucket-views", "maybe"})));
  EXPECT_TRUE(std::holds_alternative<UsageError>(parse({"--all-reduce", "ce"})));
  EXPECT_TRUE(std::holds_alternative<UsageError>(parse({"--grad-sync", "sometimes"})));
}

TEST(Options, InputSetsFollowTheTaskAndTheInputPath) {
  RunConfig c;
  c.task = Task::infer;
  EXPECT_EQ(input_sets_for(c), 1);  // as the Python references: one input tensor
  c.task = Task::train;
  EXPECT_EQ(input_sets_for(c), 2);
  c.task = Task::infer;
  c.input.kind = InputKind::host;
  EXPECT_EQ(input_sets_for(c), 2);  // one refilled while a step reads the other
  c.input_sets = 1;
  EXPECT_EQ(input_sets_for(c), 2);
  c.input.kind = InputKind::synthetic;
  c.input_sets = 3;
  EXPECT_EQ(input_sets_for(c), 3);
}

TEST(Options, EveryOption) {
  const auto parsed = parse({"--model",   "gpt2",
                             "--task",    "infer",
                             "--mode",    "fp8",
                             "--batch",   "12",
                             "--device",  "cpu",
                             "--warmup",  "0",
                             "--windows", "3",
                             "--steps=4", "--input-sets",
                             "1",         "--graphs",
                             "off",       "--fused-adamw",
                             "off",       "--cudnn-benchmark",
                             "off",       "--channels-last",
                             "on",        "--sdpa",
                             "cudnn",     "--gelu-epilogue",
                             "off",       "--residual-epilogue",
                             "on",        "--own-layer-norm",
                             "off",       "--patch-gemm",
                             "off",       "--fused-loss",
                             "on",        "--seq-len",
                             "64",        "--image-size",
                             "96",        "--lr",
                             "3e-4",      "--weight-decay",
                             "0.05",      "--growth-interval",
                             "7",         "--seed",
                             "42",        "--max-batch",
                             "512",       "--quiet"});
  ASSERT_TRUE(std::holds_alternative<CommandLine>(parsed)) << std::get<UsageError>(parsed).message;
  const RunConfig& c = std::get<CommandLine>(parsed).config;
  EXPECT_EQ(c.model, ModelKind::gpt2);
  EXPECT_EQ(c.task, Task::infer);
  EXPECT_EQ(c.mode, PrecisionMode::fp8);
  EXPECT_EQ(c.batch, 12);
  EXPECT_EQ(c.device, "cpu");
  EXPECT_EQ(c.warmup_steps, 0);
  EXPECT_EQ(c.windows, 3);
  EXPECT_EQ(c.steps_per_window, 4);
  EXPECT_EQ(c.input_sets, 1);
  EXPECT_EQ(c.cuda_graphs, Toggle::off);
  EXPECT_FALSE(c.fused_adamw);
  EXPECT_FALSE(c.cudnn_benchmark);
  EXPECT_EQ(c.channels_last, Toggle::on);
  EXPECT_EQ(c.sdpa, SdpaBackend::cudnn);
  EXPECT_EQ(c.gelu_epilogue, Toggle::off);
  EXPECT_EQ(c.residual_epilogue, Toggle::on);
  EXPECT_EQ(c.own_layer_norm, Toggle::off);
  EXPECT_EQ(c.patch_gemm, Toggle::off);
  EXPECT_EQ(c.fused_loss, Toggle::on);
  EXPECT_EQ(c.shape.seq_len, 64);
  EXPECT_EQ(c.shape.image_size, 96);
  EXPECT_DOUBLE_EQ(c.adamw.lr, 3e-4);
  EXPECT_DOUBLE_EQ(c.adamw.weight_decay, 0.05);
  EXPECT_EQ(c.loss_scaler.growth_interval, 7);
  EXPECT_EQ(c.seed, 42u);
  EXPECT_EQ(c.max_batch, 512);
  EXPECT_TRUE(c.quiet);
}

TEST(Options, Diagnostics) {
  const auto parsed =
      parse({"--trace", "t.json", "--trace-steps", "5", "--memory-snapshot", "m.pickle"});
  ASSERT_TRUE(std::holds_alternative<CommandLine>(parsed)) << std::get<UsageError>(parsed).message;
  const DiagnosticsOptions& d = std::get<CommandLine>(parsed).config.diagnostics;
  EXPECT_EQ(d.trace_path, "t.json");
  EXPECT_EQ(d.trace_steps, 5);
  EXPECT_EQ(d.memory_snapshot_path, "m.pickle");
  EXPECT_EQ(RunConfig().diagnostics.trace_path, "");
  for (const char* bad : {"0", "1001", "x"}) {
    const auto rejected = parse({"--trace-steps", bad});
    ASSERT_TRUE(std::holds_alternative<UsageError>(rejected)) << bad;
    EXPECT_NE(std::get<UsageError>(rejected).message.find("--trace-steps"), std::string::npos);
  }
  EXPECT_TRUE(std::holds_alternative<UsageError>(parse({"--trace="})));
}

TEST(Options, InputPathAndGuard) {
  const auto defaults = parse({});
  const RunConfig& d = std::get<CommandLine>(defaults).config;
  EXPECT_EQ(d.input.kind, InputKind::synthetic);
  EXPECT_EQ(d.input.loader_workers, 4);
  EXPECT_TRUE(d.input.pinned);
  EXPECT_TRUE(d.input.non_blocking);
  EXPECT_TRUE(d.input.data.empty());
  EXPECT_EQ(d.guard_steps, 100);
  EXPECT_TRUE(d.make_images.dir.empty());

  const auto parsed =
      parse({"--input", "jpeg", "--loader-workers", "0", "--pinned", "off", "--non-blocking=off",
             "--data", "/data/val", "--task", "guard", "--guard-steps", "150"});
  ASSERT_TRUE(std::holds_alternative<CommandLine>(parsed)) << std::get<UsageError>(parsed).message;
  const RunConfig& c = std::get<CommandLine>(parsed).config;
  EXPECT_EQ(c.input.kind, InputKind::jpeg);
  EXPECT_EQ(c.input.loader_workers, 0);
  EXPECT_FALSE(c.input.pinned);
  EXPECT_FALSE(c.input.non_blocking);
  EXPECT_EQ(c.input.data, "/data/val");
  EXPECT_EQ(c.task, Task::guard);
  EXPECT_TRUE(is_training(c.task));
  EXPECT_EQ(c.guard_steps, 150);

  const auto images =
      parse({"--make-images", "/tmp/x", "--image-count", "10", "--image-classes", "5"});
  const RunConfig& m = std::get<CommandLine>(images).config;
  EXPECT_EQ(m.make_images.dir, "/tmp/x");
  EXPECT_EQ(m.make_images.count, 10);
  EXPECT_EQ(m.make_images.classes, 5);
}

TEST(Options, BatchAutoAndPythonNames) {
  const auto parsed = parse({"--batch", "auto", "--model", "vit_base_patch16_224"});
  ASSERT_TRUE(std::holds_alternative<CommandLine>(parsed));
  EXPECT_TRUE(std::get<CommandLine>(parsed).config.batch_auto);
  EXPECT_EQ(std::get<CommandLine>(parsed).config.model, ModelKind::vit_b16);
}

TEST(Options, WindowsZeroRunsUntilStopped) {
  const auto parsed = parse({"--windows", "0"});
  ASSERT_TRUE(std::holds_alternative<CommandLine>(parsed));
  EXPECT_EQ(std::get<CommandLine>(parsed).config.windows, 0);
  EXPECT_NE(help_text().find("until stopped"), std::string::npos);
}

// Every name run_config.h gives parses back to its value (one table serves both directions).
TEST(Options, EnumNamesParseBack) {
  for (const Task t : {Task::train, Task::infer, Task::guard}) {
    EXPECT_EQ(parse_task(task_name(t)), t) << task_name(t);
  }
  EXPECT_EQ(parse_task("inference"), Task::infer);
  EXPECT_EQ(task_name(Task::guard), "guard");
  for (const InputKind k : {InputKind::synthetic, InputKind::host, InputKind::jpeg}) {
    EXPECT_EQ(parse_input_kind(input_kind_name(k)), k) << input_kind_name(k);
  }
  for (const Toggle t : {Toggle::automatic, Toggle::on, Toggle::off}) {
    EXPECT_EQ(parse_toggle(toggle_name(t)), t) << toggle_name(t);
  }
  EXPECT_EQ(toggle_name(Toggle::automatic), "auto");
  for (const SdpaBackend b : {SdpaBackend::automatic, SdpaBackend::flash, SdpaBackend::efficient,
                              SdpaBackend::math, SdpaBackend::cudnn}) {
    EXPECT_EQ(parse_sdpa_backend(sdpa_backend_name(b)), b) << sdpa_backend_name(b);
  }
  for (const GradComm g : {GradComm::fp32, GradComm::bf16}) {
    EXPECT_EQ(parse_grad_comm(grad_comm_name(g)), g) << grad_comm_name(g);
  }
  EXPECT_EQ(grad_comm_name(GradComm::bf16), "bf16");
  EXPECT_FALSE(parse_grad_comm("fp16").has_value());
  for (const AllReduce a : {AllReduce::automatic, AllReduce::nccl, AllReduce::copy_engine}) {
    EXPECT_EQ(parse_all_reduce(all_reduce_name(a)), a) << all_reduce_name(a);
  }
  EXPECT_EQ(all_reduce_name(AllReduce::copy_engine), "copy-engine");
  EXPECT_FALSE(parse_task("").has_value());
  EXPECT_FALSE(parse_toggle("yes").has_value());
}

// A usage error names the option and what it expects (each kind of value its own words).
TEST(Options, UsageErrors) {
  const std::vector<std::pair<std::vector<const char*>, std::string>> cases = {
      {{"--model", "resnet18"}, "--model unknown model 'resnet18' (vit_b16, resnet50, gpt2)"},
      {{"--task", "eval"}, "--task expects train, infer or guard, got 'eval'"},
      {{"--mode", "int8"}, "--mode unknown precision mode 'int8'"},
      {{"--batch", "0"}, "--batch expects a positive integer or auto, got '0'"},
      {{"--batch"}, "--batch needs a value (N|auto)"},
      {{"--max-batch", "0"}, "--max-batch expects an integer of at least 1, got '0'"},
      {{"--windows", "-1"}, "--windows expects an integer of at least 0, got '-1'"},
      {{"--input", "webdataset"}, "--input expects synthetic, host or jpeg, got 'webdataset'"},
      {{"--loader-workers", "-1"}, "--loader-workers expects 0..256, got '-1'"},
      {{"--loader-workers", "257"}, "--loader-workers expects 0..256, got '257'"},
      {{"--pinned", "auto"}, "--pinned expects on or off, got 'auto'"},
      {{"--non-blocking", "yes"}, "--non-blocking expects on or off, got 'yes'"},
      {{"--guard-steps", "0"}, "--guard-steps expects an integer of at least 1, got '0'"},
      {{"--data="}, "--data expects a directory"},
      {{"--image-count", "x"}, "--image-count expects a positive integer, got 'x'"},
      {{"--image-classes", "0"}, "--image-classes expects 1..1000, got '0'"},
      {{"--image-classes", "1001"}, "--image-classes expects 1..1000, got '1001'"},
      {{"--graphs", "maybe"}, "--graphs expects on, off or auto, got 'maybe'"},
      {{"--fused-adamw", "auto"}, "--fused-adamw expects on or off, got 'auto'"},
      {{"--sdpa", "triton"}, "--sdpa unknown SDPA backend 'triton'"},
      {{"--trace="}, "--trace expects a file name"},
      {{"--seq-len", "2048"}, "--seq-len expects 1..1024, got '2048'"},
      {{"--image-size", "16"}, "--image-size expects at least 32, got '16'"},
      {{"--lr", "-1"}, "--lr expects a non-negative number, got '-1'"},
      {{"--growth-interval", "0"}, "--growth-interval expects a positive integer, got '0'"},
      {{"--seed", "-1"}, "--seed expects a non-negative integer, got '-1'"},
      {{"--world-size", "0"}, "--world-size expects 1..1024, got '0'"},
      {{"--grad-comm", "fp16"}, "--grad-comm expects fp32 or bf16, got 'fp16'"},
      {{"--grad-comm"}, "--grad-comm needs a value (fp32|bf16)"},
      {{"--steps"}, "--steps needs a value (N)"},
      {{"--shard-optimizer", "on", "--all-reduce", "nccl"},
       "--shard-optimizer on needs the copy-engine all-reduce (--all-reduce auto or copy-engine), "
       "not nccl"},
      {{"--shard-optimizer", "on", "--device", "cpu"},
       "--shard-optimizer on needs CUDA devices (it runs on the copy-engine all-reduce)"},
      // What stands in the way whatever the machine is known before a run starts (on 2xH200 the
      // fp16 case ended as an internal error of every rank).
      {{"--shard-optimizer", "on", "--mode", "amp_fp16"},
       "--shard-optimizer on: fp16's loss scaling skips a step on an overflow in any gradient"},
      {{"--shard-optimizer", "on", "--fused-adamw", "off"},
       "--shard-optimizer on: LibTorch's AdamW (--fused-adamw off) keeps the whole state"},
      {{"--shard-optimizer", "on", "--bucket-step", "off"},
       "--shard-optimizer on: --bucket-step off steps every parameter after the last bucket"},
      // Before any rank starts (each rank used to load its model, then refuse).
      {{"--world-size", "2", "--task", "infer"},
       "--world-size 2: data parallel (world size > 1) trains (--task train or guard) with a "
       "given batch per rank: no --task infer, no --batch auto"},
      {{"--world-size", "4", "--batch", "auto"},
       "--world-size 4: data parallel (world size > 1) trains (--task train or guard) with a "
       "given batch per rank: no --task infer, no --batch auto"},
      {{"--frobnicate"}, "unknown option '--frobnicate' (see --help)"},
  };
  for (const auto& [args, message] : cases) {
    const auto parsed = parse(args);
    const auto* error = std::get_if<UsageError>(&parsed);
    EXPECT_EQ(error != nullptr ? error->message : "(accepted)", message);
  }
}

TEST(Options, HelpListsModelsModesAndSwitches) {
  const std::string help = help_text();
  for (const auto& m : model_catalogue()) EXPECT_NE(help.find(m.name), std::string::npos);
  for (const auto& p : precision_modes()) EXPECT_NE(help.find(p.name), std::string::npos);
  for (const char* option : {"--model",           "--task",          "--mode",
                             "--batch",           "--graphs",        "--fused-adamw",
                             "--cudnn-benchmark", "--channels-last", "--sdpa",
                             "--gelu-epilogue",   "--warmup",        "--windows",
                             "--steps",           "--input",         "--loader-workers",
                             "--pinned",          "--non-blocking",  "--data",
                             "--guard-steps",     "--make-images",   "--grad-comm"}) {
    EXPECT_NE(help.find(option), std::string::npos) << option;
  }
}

TEST(Options, DescribeIsOneJsonObject) {
  const auto j = nlohmann::json::parse(describe_json());
  EXPECT_EQ(j["type"], "describe");
  EXPECT_EQ(j["models"].size(), model_catalogue().size());
  EXPECT_EQ(j["modes"].size(), precision_modes().size());
  EXPECT_EQ(j["models"][0]["parameters"], 86'567'656);
  EXPECT_EQ(j["tasks"].size(), 3u);
  EXPECT_EQ(j["inputs"].size(), 3u);
}

}  // namespace
}  // namespace gpuscope::workloads
