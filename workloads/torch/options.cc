#include "options.h"

#include <charconv>
#include <functional>
#include <limits>
#include <optional>
#include <sstream>
#include <vector>

#include "json_writer.h"

namespace gpuscope::workloads {
namespace {

// Sets a field from the option's value; returns an error message, or nullopt when fine.
using Setter = std::function<std::optional<std::string>(RunConfig&, std::string_view)>;

struct OptionSpec {
  std::string_view name;   // "--batch"
  std::string_view value;  // "N|auto"; empty for a flag
  std::string_view help;
  Setter set;  // null for --help and --describe
};

template <typename T>
std::optional<T> parse_number(std::string_view text) {
  T value{};
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

// Where an option's value goes: a member of RunConfig (&RunConfig::seed), or a member of one of
// its parts (&RunConfig::input, &InputOptions::pinned).
template <typename T>
using Field = std::function<T&(RunConfig&)>;

template <typename T>
Field<T> at(T RunConfig::*field) {
  return [field](RunConfig& c) -> T& { return c.*field; };
}

template <typename Part, typename T>
Field<T> at(Part RunConfig::*part, T Part::*field) {
  return [part, field](RunConfig& c) -> T& { return c.*part.*field; };
}

// Every option but --batch and --device: `parse` reads the value (nullopt: it cannot) into
// `field`. A value it cannot read is the error "<lead> '<value>'<tail>".
template <typename T, typename Parse>
Setter parsed(Field<T> field, Parse parse, std::string lead, std::string tail = {}) {
  return
      [field, parse, lead, tail](RunConfig& c, std::string_view v) -> std::optional<std::string> {
        const auto value = parse(v);
        if (!value) return lead + " '" + std::string(v) + "'" + tail;
        field(c) = *value;
        return std::nullopt;
      };
}

constexpr int64_t kNoMaximum = std::numeric_limits<int64_t>::max();

// An integer in [minimum, maximum]. `expects` words the range in the error; empty: "MIN..MAX",
// or "an integer of at least MIN" without a maximum.
template <typename T>
Setter integer(Field<T> field, int64_t minimum, int64_t maximum = kNoMaximum,
               std::string expects = {}) {
  if (expects.empty()) {
    expects = maximum == kNoMaximum ? "an integer of at least " + std::to_string(minimum)
                                    : std::to_string(minimum) + ".." + std::to_string(maximum);
  }
  const auto in_range = [minimum, maximum](std::string_view v) -> std::optional<int64_t> {
    const auto n = parse_number<int64_t>(v);
    if (!n || *n < minimum || *n > maximum) return std::nullopt;
    return n;
  };
  return parsed(std::move(field), in_range, "expects " + expects + ", got");
}

Setter toggle(Field<Toggle> field) {
  return parsed(std::move(field), parse_toggle, "expects on, off or auto, got");
}

Setter boolean(Field<bool> field) {
  const auto on_off = [](std::string_view v) -> std::optional<bool> {
    const auto t = parse_toggle(v);
    if (!t || *t == Toggle::automatic) return std::nullopt;
    return *t == Toggle::on;
  };
  return parsed(std::move(field), on_off, "expects on or off, got");
}

Setter real(Field<double> field) {
  const auto non_negative = [](std::string_view v) -> std::optional<double> {
    const auto x = parse_number<double>(v);
    if (!x || *x < 0) return std::nullopt;
    return x;
  };
  return parsed(std::move(field), non_negative, "expects a non-negative number, got");
}

// --data, --make-images, --trace, --memory-snapshot: a path (checked when it is used).
Setter path(Field<std::string> field, std::string expects) {
  return [field, expects](RunConfig& c, std::string_view v) -> std::optional<std::string> {
    if (v.empty()) return "expects " + expects;
    field(c) = std::string(v);
    return std::nullopt;
  };
}

const std::vector<OptionSpec>& option_table() {
  static const std::vector<OptionSpec> table = {
      {"--model", "NAME", "vit_b16 | resnet50 | gpt2 (default vit_b16)",
       parsed(at(&RunConfig::model), parse_model, "unknown model", " (vit_b16, resnet50, gpt2)")},
      {"--task", "train|infer|guard",
       "a training step (forward, backward, AdamW), a forward pass, or the convergence guard "
       "(--guard-steps training steps on a small learnable task, every loss reported)",
       parsed(at(&RunConfig::task), parse_task, "expects train, infer or guard, got")},
      {"--mode", "MODE", "precision mode, see below (default amp_bf16)",
       parsed(at(&RunConfig::mode), parse_precision_mode, "unknown precision mode")},
      {"--batch", "N|auto",
       "samples per step (default: the model's, see below); auto: the largest that fits",
       [](RunConfig& c, std::string_view v) -> std::optional<std::string> {
         if (v == "auto") {
           c.batch_auto = true;
           c.batch.reset();
           return std::nullopt;
         }
         const auto n = parse_number<int64_t>(v);
         if (!n || *n < 1)
           return "expects a positive integer or auto, got '" + std::string(v) + "'";
         c.batch = *n;
         c.batch_auto = false;
         return std::nullopt;
       }},
      {"--max-batch", "N", "upper bound of --batch auto (default 8192)",
       integer(at(&RunConfig::max_batch), 1)},
      {"--device", "cuda[:N]|cpu", "where to run (default cuda)",
       [](RunConfig& c, std::string_view v) -> std::optional<std::string> {
         c.device = std::string(v);
         return std::nullopt;
       }},
      {"--warmup", "N", "untimed eager steps first (default 10)",
       integer(at(&RunConfig::warmup_steps), 0)},
      {"--windows", "N",
       "timed windows; samples/s is their median (default 5). 0: until stopped - windows go on "
       "until SIGTERM or SIGINT, each printed as it ends (a `window` line with "
       "samples_per_second), and the stop ends the run cleanly (exit 0); for a long-running "
       "workload such as `gpuscope sweep`'s",
       integer(at(&RunConfig::windows), 0)},
      {"--steps", "N", "steps per timed window (default 10)",
       integer(at(&RunConfig::steps_per_window), 1)},
      {"--input-sets", "N",
       "device batches used in turn (default: 1 for synthetic inference, else 2; host-fed inputs "
       "refill them, at least 2)",
       integer(at(&RunConfig::input_sets), 1)},
      {"--input", "synthetic|host|jpeg",
       "batches made on the GPU (default), made on the CPU by loader threads and copied, or "
       "JPEG files from --data decoded and augmented by loader threads and copied",
       parsed(at(&RunConfig::input, &InputOptions::kind), parse_input_kind,
              "expects synthetic, host or jpeg, got")},
      {"--loader-workers", "N", "host/jpeg: loader threads; 0 = on the training thread (default 4)",
       integer(at(&RunConfig::input, &InputOptions::loader_workers), 0, 256)},
      {"--pinned", "on|off", "host/jpeg: page-locked staging memory (default on)",
       boolean(at(&RunConfig::input, &InputOptions::pinned))},
      {"--non-blocking", "on|off",
       "host/jpeg: copy on a stream of its own, overlapping compute (on, default), or block the "
       "host until the copy is done (off)",
       boolean(at(&RunConfig::input, &InputOptions::non_blocking))},
      {"--data", "DIR", "jpeg: a folder of .jpg/.jpeg files; label = top-level subfolder",
       path(at(&RunConfig::input, &InputOptions::data), "a directory")},
      {"--guard-steps", "N", "guard: training steps (default 100)",
       integer(at(&RunConfig::guard_steps), 1)},
      {"--make-images", "DIR",
       "write a generated JPEG set (--image-count files in --image-classes subfolders) and exit",
       path(at(&RunConfig::make_images, &MakeImagesOptions::dir), "a directory")},
      {"--image-count", "N", "--make-images: images (default 64)",
       integer(at(&RunConfig::make_images, &MakeImagesOptions::count), 1, kNoMaximum,
               "a positive integer")},
      {"--image-classes", "N", "--make-images: class subfolders (default 4)",
       integer(at(&RunConfig::make_images, &MakeImagesOptions::classes), 1, 1000)},
      {"--graphs", "on|off|auto",
       "capture the whole step (or forward) as one CUDA graph (auto: on for CUDA)",
       toggle(at(&RunConfig::cuda_graphs))},
      {"--fused-adamw", "on|off",
       "AdamW on at::_fused_adamw_ (on) or LibTorch's torch::optim::AdamW (off; not capturable)",
       boolean(at(&RunConfig::fused_adamw))},
      {"--cudnn-benchmark", "on|off", "let cuDNN time its convolution algorithms (default on)",
       boolean(at(&RunConfig::cudnn_benchmark))},
      {"--channels-last", "on|off|auto", "NHWC images and weights (auto: on for ResNet-50 on CUDA)",
       toggle(at(&RunConfig::channels_last))},
      {"--sdpa", "BACKEND", "attention kernels: auto | flash | efficient | math | cudnn",
       parsed(at(&RunConfig::sdpa), parse_sdpa_backend, "unknown SDPA backend")},
      {"--gelu-epilogue", "on|off|auto",
       "inference: MLP fc1 + GELU as one cuBLASLt GEMM (tanh GELU; auto: on for GPT-2, whose "
       "GELU is the tanh form)",
       toggle(at(&RunConfig::gelu_epilogue))},
      {"--residual-epilogue", "on|off|auto",
       "inference in fp16/bf16: bias and residual add in the projections' cuBLASLt GEMM "
       "(auto: on for CUDA)",
       toggle(at(&RunConfig::residual_epilogue))},
      {"--own-layer-norm", "on|off|auto",
       "inference in fp16/bf16: LayerNorm on gpuscope-torch's own kernel instead of ATen's "
       "(auto: on for CUDA)",
       toggle(at(&RunConfig::own_layer_norm))},
      {"--patch-gemm", "on|off|auto",
       "ViT-B/16: the patch embedding (16x16 convolution, stride 16) as one GEMM over the "
       "image's patches (auto: on)",
       toggle(at(&RunConfig::patch_gemm))},
      {"--fused-loss", "on|off|auto",
       "training on CUDA: cross-entropy on gpuscope-torch's kernel, the gradient written over "
       "the logits (auto: on for GPT-2, whose logits are its largest tensor)",
       toggle(at(&RunConfig::fused_loss))},
      {"--trace", "FILE",
       "after the timed windows, profile --trace-steps more steps (operators, kernels, copies) "
       "and write the Chrome-trace JSON torch.profiler writes (open it in ui.perfetto.dev)",
       path(at(&RunConfig::diagnostics, &DiagnosticsOptions::trace_path), "a file name")},
      {"--trace-steps", "N", "--trace: steps profiled (default 3)",
       integer(at(&RunConfig::diagnostics, &DiagnosticsOptions::trace_steps), 1, 1000)},
      {"--memory-snapshot", "FILE",
       "CUDA: record every allocation of the caching allocator and write the snapshot pickle "
       "torch.cuda.memory._dump_snapshot writes (pytorch.org/memory_viz), also after an "
       "out-of-memory error",
       path(at(&RunConfig::diagnostics, &DiagnosticsOptions::memory_snapshot_path), "a file name")},
      {"--seq-len", "N", "GPT-2 tokens per sample, at most 1024 (default 1024)",
       integer(at(&RunConfig::shape, &ModelShape::seq_len), 1, 1024)},
      {"--image-size", "N", "ResNet-50 image side (default 224; ViT-B/16 is fixed at 224)",
       integer(at(&RunConfig::shape, &ModelShape::image_size), 32, kNoMaximum, "at least 32")},
      {"--lr", "X", "AdamW learning rate (default 1e-4)",
       real(at(&RunConfig::adamw, &AdamWOptions::lr))},
      {"--weight-decay", "X", "AdamW weight decay (default 0.01)",
       real(at(&RunConfig::adamw, &AdamWOptions::weight_decay))},
      {"--growth-interval", "N", "fp16 loss scaler: clean steps before the scale doubles (2000)",
       integer(at(&RunConfig::loss_scaler, &LossScalerOptions::growth_interval), 1, kNoMaximum,
               "a positive integer")},
      {"--seed", "N", "random seed for weights and data (default 0)",
       parsed(at(&RunConfig::seed), parse_number<uint64_t>, "expects a non-negative integer, got")},
      {"--world-size", "N",
       "data parallel over N ranks (one GPU each): started by this program when no launcher "
       "(torchrun, srun) set RANK/WORLD_SIZE, else must equal WORLD_SIZE (default 1)",
       integer(at(&RunConfig::world_size), 1, 1024)},
      {"--dist-timeout", "S", "data parallel: seconds before a collective fails (default 300)",
       integer(at(&RunConfig::dist_timeout_s), 1)},
      {"--bucket-cap-mb", "N", "data parallel: gradient bucket size in MiB (default 25, as DDP)",
       integer(at(&RunConfig::bucket_cap_mb), 1)},
      {"--bucket-views", "on|off",
       "data parallel: gradients live in their buckets, all-reduced in place (on, default; DDP's "
       "gradient_as_bucket_view) or get the averages copied back (off)",
       boolean(at(&RunConfig::bucket_views))},
      {"--grad-comm", "fp32|bf16",
       "data parallel: the dtype gradients are all-reduced in: their own (fp32, default), or bf16 "
       "as DDP's bf16_compress_hook (cast, divided by the world size, summed, cast back; half "
       "the bytes, bf16 rounding)",
       parsed(at(&RunConfig::grad_comm), parse_grad_comm, "expects fp32 or bf16, got")},
      {"--all-reduce", "auto|nccl|copy-engine",
       "data parallel: gradients all-reduced by the GPUs' copy engines between peer-mapped "
       "buffers (copy-engine: every rank on one host, peer access between the GPUs; a rank "
       "waiting for the others holds no SMs) or by NCCL (Gloo on the CPU); auto (default): the "
       "copy engines where every rank can use them, else NCCL",
       parsed(at(&RunConfig::all_reduce), parse_all_reduce,
              "expects auto, nccl or copy-engine, got")},
      {"--bucket-step", "on|off",
       "data parallel: AdamW updates each bucket's parameters as soon as its all-reduce ends, "
       "while later buckets' still run (on, default; the update of PyTorch's optimizer-in-"
       "backward) or all after the last (off). Applies with the fused AdamW and no loss scaling "
       "(not fp16)",
       boolean(at(&RunConfig::bucket_step))},
      {"--shard-optimizer", "auto|on|off",
       "data parallel: each rank keeps AdamW's state for 1/N of the parameters, updates that "
       "part as soon as its gradients are averaged and sends it to the others (ZeRO stage 1: "
       "1/N of the optimizer's memory and work per GPU). auto (default): where it applies — the "
       "copy-engine all-reduce, the fused AdamW, --bucket-step on, no loss scaling (not fp16); "
       "on: fails elsewhere",
       toggle(at(&RunConfig::shard_optimizer))},
      {"--grad-sync", "on|off",
       "data parallel: gradients averaged over the ranks (on, default) or not at all (off: each "
       "rank trains its own replica, every GPU busy at once with no communication; the ceiling "
       "of the data-parallel rate, not training)",
       boolean(at(&RunConfig::grad_sync))},
      {"--quiet", "", "no summary line on stderr", nullptr},
      {"--describe", "", "print models, modes and switches as one JSON line and exit", nullptr},
      {"--help", "", "print this help and exit", nullptr},
  };
  return table;
}

// "  name" padded to `width` columns (a space at least): where a --help row's text starts.
std::string help_row(std::string_view name, size_t width) {
  const std::string left = "  " + std::string(name);
  return left + std::string(left.size() < width ? width - left.size() : 1, ' ');
}

}  // namespace

std::variant<CommandLine, UsageError> parse_command_line(std::span<const char* const> args) {
  CommandLine out;
  for (size_t i = 0; i < args.size(); ++i) {
    std::string_view arg = args[i];
    std::optional<std::string_view> inline_value;
    if (const auto eq = arg.find('='); arg.starts_with("--") && eq != std::string_view::npos) {
      inline_value = arg.substr(eq + 1);
      arg = arg.substr(0, eq);
    }
    if (arg == "-h" || arg == "--help") {
      out.help = true;
      continue;
    }
    if (arg == "--describe") {
      out.describe = true;
      continue;
    }
    if (arg == "--quiet") {
      out.config.quiet = true;
      continue;
    }
    const OptionSpec* spec = nullptr;
    for (const auto& candidate : option_table()) {
      if (candidate.name == arg) spec = &candidate;
    }
    if (spec == nullptr || !spec->set) {
      return UsageError{"unknown option '" + std::string(arg) + "' (see --help)"};
    }
    std::string_view value;
    if (inline_value) {
      value = *inline_value;
    } else if (i + 1 < args.size()) {
      value = args[++i];
    } else {
      return UsageError{std::string(arg) + " needs a value (" + std::string(spec->value) + ")"};
    }
    if (auto error = spec->set(out.config, value)) {
      return UsageError{std::string(arg) + " " + *error};
    }
  }
  if (out.config.world_size.value_or(1) > 1) {
    if (const std::string obstacle = data_parallel_obstacle(out.config); !obstacle.empty()) {
      return UsageError{"--world-size " + std::to_string(*out.config.world_size) + ": " + obstacle};
    }
  }
  if (out.config.shard_optimizer == Toggle::on && out.config.all_reduce == AllReduce::nccl) {
    return UsageError{
        "--shard-optimizer on needs the copy-engine all-reduce (--all-reduce auto or "
        "copy-engine), not nccl"};
  }
  if (out.config.shard_optimizer == Toggle::on) {
    if (const std::string obstacle = optimizer_shard_obstacle(out.config, true);
        !obstacle.empty()) {
      return UsageError{"--shard-optimizer on: " + obstacle};
    }
  }
  if (out.config.shard_optimizer == Toggle::on && out.config.device.starts_with("cpu")) {
    return UsageError{
        "--shard-optimizer on needs CUDA devices (it runs on the copy-engine all-reduce)"};
  }
  if (out.config.all_reduce == AllReduce::copy_engine && out.config.device.starts_with("cpu")) {
    return UsageError{
        "--all-reduce copy-engine needs CUDA devices (on the CPU, Gloo all-reduces the gradients: "
        "leave --all-reduce out)"};
  }
  return out;
}

std::string help_text() {
  std::ostringstream out;
  out << "gpuscope-torch: LibTorch reference workloads, timed.\n\n"
         "usage: gpuscope-torch [--model NAME] [--task train|infer|guard] [--mode MODE]"
         " [--batch N|auto] [options]\n"
         "       gpuscope-torch --make-images DIR [--image-count N] [--image-classes K]\n\n"
         "Runs one configuration and prints JSON lines on stdout (one object per line: start,\n"
         "batch_probe, window, result, skipped, error, done); messages for people go to stderr.\n"
         "Exit status: 0 ran, 2 bad arguments, 3 skipped (mode unsupported here, out of memory,\n"
         "no CUDA device), 6 failed, 130 interrupted.\n\noptions:\n";
  for (const auto& spec : option_table()) {
    std::string name(spec.name);
    if (!spec.value.empty()) name += " " + std::string(spec.value);
    out << help_row(name, 30) << spec.help << "\n";
  }
  out << "\nmodels (parameters; default train / inference batch):\n";
  for (const auto& m : model_catalogue()) {
    out << help_row(m.name, 14) << m.description << "\n"
        << std::string(14, ' ') << m.parameters << " parameters; batch " << m.default_train_batch
        << " / " << m.default_infer_batch << "\n";
  }
  out << "\nprecision modes (--mode):\n";
  for (const auto& p : precision_modes()) {
    out << help_row(p.name, 14) << p.summary << "\n";
  }
  out << "\nEvery mode clears autocast's weight-cast cache after each forward. fp16 (pure) trains\n"
         "without loss scaling, as model.half() does in PyTorch.\n";
  return out.str();
}

std::string describe_json() {
  const std::string models = json_array(model_catalogue(), [](const ModelInfo& m) {
    return JsonObject()
        .add("name", m.name)
        .add("python_name", m.python_name)
        .add("description", m.description)
        .add("parameters", m.parameters)
        .add("default_train_batch", m.default_train_batch)
        .add("default_infer_batch", m.default_infer_batch)
        .add("supports_fp8", m.supports_fp8)
        .str();
  });
  const std::string modes = json_array(precision_modes(), [](const PrecisionModeInfo& p) {
    return JsonObject().add("name", p.name).add("summary", p.summary).str();
  });
  const std::string switches = json_array(option_table(), [](const OptionSpec& spec) {
    return JsonObject().add("option", spec.name).add("value", spec.value).str();
  });
  return JsonObject()
      .add("v", 1)
      .add("type", "describe")
      .add_raw("models", models)
      .add_raw("modes", modes)
      .add_raw("tasks", R"(["train","infer","guard"])")
      .add_raw("inputs", R"(["synthetic","host","jpeg"])")
      .add_raw("sdpa", R"(["auto","flash","efficient","math","cudnn"])")
      .add_raw("options", switches)
      .str();
}

}  // namespace gpuscope::workloads
