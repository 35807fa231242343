#include "run_config.h"

#include <algorithm>

#include "common/enum_names.h"

namespace gpuscope::workloads {
namespace {

// The first entry of each is the name of a value missing from it.
constexpr gpuscope::detail::EnumName<Task> kTaskNames[] = {
    {Task::infer, "infer"},
    {Task::train, "train"},
    {Task::guard, "guard"},
};

constexpr gpuscope::detail::EnumName<InputKind> kInputKindNames[] = {
    {InputKind::synthetic, "synthetic"},
    {InputKind::host, "host"},
    {InputKind::jpeg, "jpeg"},
};

constexpr gpuscope::detail::EnumName<Toggle> kToggleNames[] = {
    {Toggle::automatic, "auto"},
    {Toggle::on, "on"},
    {Toggle::off, "off"},
};

constexpr gpuscope::detail::EnumName<SdpaBackend> kSdpaNames[] = {
    {SdpaBackend::automatic, "auto"},      {SdpaBackend::flash, "flash"},
    {SdpaBackend::efficient, "efficient"}, {SdpaBackend::math, "math"},
    {SdpaBackend::cudnn, "cudnn"},
};

constexpr gpuscope::detail::EnumName<GradComm> kGradCommNames[] = {
    {GradComm::fp32, "fp32"},
    {GradComm::bf16, "bf16"},
};

constexpr gpuscope::detail::EnumName<AllReduce> kAllReduceNames[] = {
    {AllReduce::automatic, "auto"},
    {AllReduce::nccl, "nccl"},
    {AllReduce::copy_engine, "copy-engine"},
};

bool decide(Toggle toggle, bool automatic) {
  return toggle == Toggle::automatic ? automatic : toggle == Toggle::on;
}

}  // namespace

std::string_view task_name(Task task) {
  return gpuscope::detail::name_in(kTaskNames, task, kTaskNames[0].name);
}

std::optional<Task> parse_task(std::string_view name) {
  return gpuscope::detail::value_named(kTaskNames, name == "inference" ? "infer" : name);
}

std::string_view input_kind_name(InputKind kind) {
  return gpuscope::detail::name_in(kInputKindNames, kind, kInputKindNames[0].name);
}

std::optional<InputKind> parse_input_kind(std::string_view name) {
  return gpuscope::detail::value_named(kInputKindNames, name);
}

std::string_view toggle_name(Toggle toggle) {
  return gpuscope::detail::name_in(kToggleNames, toggle, kToggleNames[0].name);
}

std::optional<Toggle> parse_toggle(std::string_view name) {
  return gpuscope::detail::value_named(kToggleNames, name);
}

std::string_view sdpa_backend_name(SdpaBackend backend) {
  return gpuscope::detail::name_in(kSdpaNames, backend, kSdpaNames[0].name);
}

std::optional<SdpaBackend> parse_sdpa_backend(std::string_view name) {
  return gpuscope::detail::value_named(kSdpaNames, name);
}

std::string_view grad_comm_name(GradComm comm) {
  return gpuscope::detail::name_in(kGradCommNames, comm, kGradCommNames[0].name);
}

std::optional<GradComm> parse_grad_comm(std::string_view name) {
  return gpuscope::detail::value_named(kGradCommNames, name);
}

std::string_view all_reduce_name(AllReduce all_reduce) {
  return gpuscope::detail::name_in(kAllReduceNames, all_reduce, kAllReduceNames[0].name);
}

std::optional<AllReduce> parse_all_reduce(std::string_view name) {
  return gpuscope::detail::value_named(kAllReduceNames, name);
}

ResolvedSwitches resolve_switches(const RunConfig& config, bool on_cuda) {
  ResolvedSwitches s;
  s.cuda_graphs = on_cuda && decide(config.cuda_graphs, true);
  s.channels_last = decide(config.channels_last, on_cuda && config.model == ModelKind::resnet50);
  s.gelu_epilogue = on_cuda && config.task == Task::infer &&
                    decide(config.gelu_epilogue, config.model == ModelKind::gpt2);
  s.residual_epilogue =
      on_cuda && config.task == Task::infer && decide(config.residual_epilogue, true);
  s.own_layer_norm = on_cuda && config.task == Task::infer && decide(config.own_layer_norm, true);
  s.patch_gemm = config.model == ModelKind::vit_b16 && decide(config.patch_gemm, true);
  // The 50257-token vocabulary makes GPT-2's logits its largest tensor; 1000 classes do not.
  s.fused_loss = on_cuda && is_training(config.task) &&
                 decide(config.fused_loss, config.model == ModelKind::gpt2);
  return s;
}

int64_t input_sets_for(const RunConfig& config) {
  const bool host_fed = config.input.kind != InputKind::synthetic;
  int64_t sets = config.input_sets;
  if (sets <= 0) sets = config.task == Task::infer && !host_fed ? 1 : 2;
  return host_fed ? std::max<int64_t>(sets, 2) : sets;
}

std::string optimizer_shard_obstacle(const RunConfig& config, bool copy_engine) {
  if (!copy_engine) return "the gradients are not all-reduced by the copy engines";
  if (!config.fused_adamw) return "LibTorch's AdamW (--fused-adamw off) keeps the whole state";
  if (!config.bucket_step) return "--bucket-step off steps every parameter after the last bucket";
  if (plan_for(config.mode).loss_scaling) {
    return "fp16's loss scaling skips a step on an overflow in any gradient";
  }
  return "";
}

std::string data_parallel_obstacle(const RunConfig& config) {
  if (is_training(config.task) && !config.batch_auto) return "";
  return "data parallel (world size > 1) trains (--task train or guard) with a given batch per "
         "rank: no --task infer, no --batch auto";
}

}  // namespace gpuscope::workloads
