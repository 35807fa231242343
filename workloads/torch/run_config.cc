#include "run_config.h"

#include <algorithm>
#include <array>
#include <utility>

namespace gpuscope::workloads {
namespace {

constexpr std::array<std::pair<SdpaBackend, std::string_view>, 5> kSdpaNames = {{
    {SdpaBackend::automatic, "auto"},
    {SdpaBackend::flash, "flash"},
    {SdpaBackend::efficient, "efficient"},
    {SdpaBackend::math, "math"},
    {SdpaBackend::cudnn, "cudnn"},
}};

bool decide(Toggle toggle, bool automatic) {
  return toggle == Toggle::automatic ? automatic : toggle == Toggle::on;
}

}  // namespace

std::string_view task_name(Task task) {
  switch (task) {
    case Task::train:
      return "train";
    case Task::guard:
      return "guard";
    case Task::infer:
      break;
  }
  return "infer";
}

std::string_view input_kind_name(InputKind kind) {
  switch (kind) {
    case InputKind::host:
      return "host";
    case InputKind::jpeg:
      return "jpeg";
    case InputKind::synthetic:
      break;
  }
  return "synthetic";
}

std::optional<InputKind> parse_input_kind(std::string_view name) {
  for (const InputKind kind : {InputKind::synthetic, InputKind::host, InputKind::jpeg}) {
    if (input_kind_name(kind) == name) return kind;
  }
  return std::nullopt;
}

std::string_view toggle_name(Toggle toggle) {
  switch (toggle) {
    case Toggle::on:
      return "on";
    case Toggle::off:
      return "off";
    case Toggle::automatic:
      break;
  }
  return "auto";
}

std::string_view sdpa_backend_name(SdpaBackend backend) {
  for (const auto& [b, name] : kSdpaNames) {
    if (b == backend) return name;
  }
  return "auto";
}

std::optional<SdpaBackend> parse_sdpa_backend(std::string_view name) {
  for (const auto& [b, n] : kSdpaNames) {
    if (n == name) return b;
  }
  return std::nullopt;
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

}  // namespace gpuscope::workloads
