#include "options.h"

#include <charconv>
#include <functional>
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

Setter positive(int64_t RunConfig::*field, int64_t minimum = 1) {
  return [field, minimum](RunConfig& c, std::string_view v) -> std::optional<std::string> {
    const auto n = parse_number<int64_t>(v);
    if (!n || *n < minimum) {
      return "expects an integer of at least " + std::to_string(minimum) + ", got '" +
             std::string(v) + "'";
    }
    c.*field = *n;
    return std::nullopt;
  };
}

std::optional<Toggle> parse_toggle(std::string_view v) {
  if (v == "on") return Toggle::on;
  if (v == "off") return Toggle::off;
  if (v == "auto") return Toggle::automatic;
  return std::nullopt;
}

Setter toggle(Toggle RunConfig::*field) {
  return [field](RunConfig& c, std::string_view v) -> std::optional<std::string> {
    const auto t = parse_toggle(v);
    if (!t) return "expects on, off or auto, got '" + std::string(v) + "'";
    c.*field = *t;
    return std::nullopt;
  };
}

Setter boolean(bool RunConfig::*field) {
  return [field](RunConfig& c, std::string_view v) -> std::optional<std::string> {
    const auto t = parse_toggle(v);
    if (!t || *t == Toggle::automatic) return "expects on or off, got '" + std::string(v) + "'";
    c.*field = *t == Toggle::on;
    return std::nullopt;
  };
}

std::optional<std::string> set_flag(bool& field, std::string_view v) {
  const auto t = parse_toggle(v);
  if (!t || *t == Toggle::automatic) return "expects on or off, got '" + std::string(v) + "'";
  field = *t == Toggle::on;
  return std::nullopt;
}

Setter real(double AdamWOptions::*field) {
  return [field](RunConfig& c, std::string_view v) -> std::optional<std::string> {
    const auto x = parse_number<double>(v);
    if (!x || *x < 0) return "expects a non-negative number, got '" + std::string(v) + "'";
    c.adamw.*field = *x;
    return std::nullopt;
  };
}

// --trace, --memory-snapshot: where a diagnostic file goes (checked for writability at the run).
Setter diagnostic_file(std::string DiagnosticsOptions::*field) {
  return [field](RunConfig& c, std::string_view v) -> std::optional<std::string> {
    if (v.empty()) return std::string("expects a file name");
    c.diagnostics.*field = std::string(v);
    return std::nullopt;
  };
}

const std::vector<OptionSpec>& option_table() {
  static const std::vector<OptionSpec> table = {
      {"--model", "NAME", "vit_b16 | resnet50 | gpt2 (default vit_b16)",
       [](RunConfig& c, std::string_view v) -> std::optional<std::string> {
         const auto m = parse_model(v);
         if (!m) return "unknown model '" + std::string(v) + "' (vit_b16, resnet50, gpt2)";
         c.model = *m;
         return std::nullopt;
       }},
      {"--task", "train|infer|guard",
       "a training step (forward, backward, AdamW), a forward pass, or the convergence guard "
       "(--guard-steps training steps on a small learnable task, every loss reported)",
       [](RunConfig& c, std::string_view v) -> std::optional<std::string> {
         if (v == "guard") {
           c.task = Task::guard;
         } else if (v == "train") {
           c.task = Task::train;
         } else if (v == "infer" || v == "inference") {
           c.task = Task::infer;
         } else {
           return "expects train, infer or guard, got '" + std::string(v) + "'";
         }
         return std::nullopt;
       }},
      {"--mode", "MODE", "precision mode, see below (default amp_bf16)",
       [](RunConfig& c, std::string_view v) -> std::optional<std::string> {
         const auto m = parse_precision_mode(v);
         if (!m) return "unknown precision mode '" + std::string(v) + "'";
         c.mode = *m;
         return std::nullopt;
       }},
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
       positive(&RunConfig::max_batch)},
      {"--device", "cuda[:N]|cpu", "where to run (default cuda)",
       [](RunConfig& c, std::string_view v) -> std::optional<std::string> {
         c.device = std::string(v);
         return std::nullopt;
       }},
      {"--warmup", "N", "untimed eager steps first (default 10)",
       positive(&RunConfig::warmup_steps, 0)},
      {"--windows", "N",
       "timed windows; samples/s is their median (default 5). 0: until stopped - windows go on "
       "until SIGTERM or SIGINT, each printed as it ends (a `window` line with "
       "samples_per_second), and the stop ends the run cleanly (exit 0); for a long-running "
       "workload such as `gpuscope sweep`'s",
       positive(&RunConfig::windows, 0)},
      {"--steps", "N", "steps per timed window (default 10)",
       positive(&RunConfig::steps_per_window)},
      {"--input-sets", "N",
       "device batches used in turn (default: 1 for synthetic inference, else 2; host-fed inputs "
       "refill them, at least 2)",
       positive(&RunConfig::input_sets)},
      {"--input", "synthetic|host|jpeg",
       "batches made on the GPU (default), made on the CPU by loader threads and copied, or "
       "JPEG files from --data decoded and augmented by loader threads and copied",
       [](RunConfig& c, std::string_view v) -> std::optional<std::string> {
         const auto kind = parse_input_kind(v);
         if (!kind) return "expects synthetic, host or jpeg, got '" + std::string(v) + "'";
         c.input.kind = *kind;
         return std::nullopt;
       }},
      {"--loader-workers", "N", "host/jpeg: loader threads; 0 = on the training thread (default 4)",
       [](RunConfig& c, std::string_view v) -> std::optional<std::string> {
         const auto n = parse_number<int64_t>(v);
         if (!n || *n < 0 || *n > 256) return "expects 0..256, got '" + std::string(v) + "'";
         c.input.loader_workers = *n;
         return std::nullopt;
       }},
      {"--pinned", "on|off", "host/jpeg: page-locked staging memory (default on)",
       [](RunConfig& c, std::string_view v) -> std::optional<std::string> {
         return set_flag(c.input.pinned, v);
       }},
      {"--non-blocking", "on|off",
       "host/jpeg: copy on a stream of its own, overlapping compute (on, default), or block the "
       "host until the copy is done (off)",
       [](RunConfig& c, std::string_view v) -> std::optional<std::string> {
         return set_flag(c.input.non_blocking, v);
       }},
      {"--data", "DIR", "jpeg: a folder of .jpg/.jpeg files; label = top-level subfolder",
       [](RunConfig& c, std::string_view v) -> std::optional<std::string> {
         if (v.empty()) return std::string("expects a directory");
         c.input.data = std::string(v);
         return std::nullopt;
       }},
      {"--guard-steps", "N", "guard: training steps (default 100)",
       positive(&RunConfig::guard_steps)},
      {"--make-images", "DIR",
       "write a generated JPEG set (--image-count files in --image-classes subfolders) and exit",
       [](RunConfig& c, std::string_view v) -> std::optional<std::string> {
         if (v.empty()) return std::string("expects a directory");
         c.make_images.dir = std::string(v);
         return std::nullopt;
       }},
      {"--image-count", "N", "--make-images: images (default 64)",
       [](RunConfig& c, std::string_view v) -> std::optional<std::string> {
         const auto n = parse_number<int64_t>(v);
         if (!n || *n < 1) return "expects a positive integer, got '" + std::string(v) + "'";
         c.make_images.count = *n;
         return std::nullopt;
       }},
      {"--image-classes", "N", "--make-images: class subfolders (default 4)",
       [](RunConfig& c, std::string_view v) -> std::optional<std::string> {
         const auto n = parse_number<int64_t>(v);
         if (!n || *n < 1 || *n > 1000) return "expects 1..1000, got '" + std::string(v) + "'";
         c.make_images.classes = *n;
         return std::nullopt;
       }},
      {"--graphs", "on|off|auto",
       "capture the whole step (or forward) as one CUDA graph (auto: on for CUDA)",
       toggle(&RunConfig::cuda_graphs)},
      {"--fused-adamw", "on|off",
       "AdamW on at::_fused_adamw_ (on) or LibTorch's torch::optim::AdamW (off; not capturable)",
       boolean(&RunConfig::fused_adamw)},
      {"--cudnn-benchmark", "on|off", "let cuDNN time its convolution algorithms (default on)",
       boolean(&RunConfig::cudnn_benchmark)},
      {"--channels-last", "on|off|auto", "NHWC images and weights (auto: on for ResNet-50 on CUDA)",
       toggle(&RunConfig::channels_last)},
      {"--sdpa", "BACKEND", "attention kernels: auto | flash | efficient | math | cudnn",
       [](RunConfig& c, std::string_view v) -> std::optional<std::string> {
         const auto b = parse_sdpa_backend(v);
         if (!b) return "unknown SDPA backend '" + std::string(v) + "'";
         c.sdpa = *b;
         return std::nullopt;
       }},
      {"--gelu-epilogue", "on|off|auto",
       "inference: MLP fc1 + GELU as one cuBLASLt GEMM (tanh GELU; auto: on for GPT-2, whose "
       "GELU is the tanh form)",
       toggle(&RunConfig::gelu_epilogue)},
      {"--residual-epilogue", "on|off|auto",
       "inference in fp16/bf16: bias and residual add in the projections' cuBLASLt GEMM "
       "(auto: on for CUDA)",
       toggle(&RunConfig::residual_epilogue)},
      {"--own-layer-norm", "on|off|auto",
       "inference in fp16/bf16: LayerNorm on gpuscope-torch's own kernel instead of ATen's "
       "(auto: on for CUDA)",
       toggle(&RunConfig::own_layer_norm)},
      {"--patch-gemm", "on|off|auto",
       "ViT-B/16: the patch embedding (16x16 convolution, stride 16) as one GEMM over the "
       "image's patches (auto: on)",
       toggle(&RunConfig::patch_gemm)},
      {"--fused-loss", "on|off|auto",
       "training on CUDA: cross-entropy on gpuscope-torch's kernel, the gradient written over "
       "the logits (auto: on for GPT-2, whose logits are its largest tensor)",
       toggle(&RunConfig::fused_loss)},
      {"--trace", "FILE",
       "after the timed windows, profile --trace-steps more steps (operators, kernels, copies) "
       "and write the Chrome-trace JSON torch.profiler writes (open it in ui.perfetto.dev)",
       diagnostic_file(&DiagnosticsOptions::trace_path)},
      {"--trace-steps", "N", "--trace: steps profiled (default 3)",
       [](RunConfig& c, std::string_view v) -> std::optional<std::string> {
         const auto n = parse_number<int64_t>(v);
         if (!n || *n < 1 || *n > 1000) return "expects 1..1000, got '" + std::string(v) + "'";
         c.diagnostics.trace_steps = *n;
         return std::nullopt;
       }},
      {"--memory-snapshot", "FILE",
       "CUDA: record every allocation of the caching allocator and write the snapshot pickle "
       "torch.cuda.memory._dump_snapshot writes (pytorch.org/memory_viz), also after an "
       "out-of-memory error",
       diagnostic_file(&DiagnosticsOptions::memory_snapshot_path)},
      {"--seq-len", "N", "GPT-2 tokens per sample, at most 1024 (default 1024)",
       [](RunConfig& c, std::string_view v) -> std::optional<std::string> {
         const auto n = parse_number<int64_t>(v);
         if (!n || *n < 1 || *n > 1024) return "expects 1..1024, got '" + std::string(v) + "'";
         c.shape.seq_len = *n;
         return std::nullopt;
       }},
      {"--image-size", "N", "ResNet-50 image side (default 224; ViT-B/16 is fixed at 224)",
       [](RunConfig& c, std::string_view v) -> std::optional<std::string> {
         const auto n = parse_number<int64_t>(v);
         if (!n || *n < 32) return "expects at least 32, got '" + std::string(v) + "'";
         c.shape.image_size = *n;
         return std::nullopt;
       }},
      {"--lr", "X", "AdamW learning rate (default 1e-4)", real(&AdamWOptions::lr)},
      {"--weight-decay", "X", "AdamW weight decay (default 0.01)",
       real(&AdamWOptions::weight_decay)},
      {"--growth-interval", "N", "fp16 loss scaler: clean steps before the scale doubles (2000)",
       [](RunConfig& c, std::string_view v) -> std::optional<std::string> {
         const auto n = parse_number<int64_t>(v);
         if (!n || *n < 1) return "expects a positive integer, got '" + std::string(v) + "'";
         c.loss_scaler.growth_interval = *n;
         return std::nullopt;
       }},
      {"--seed", "N", "random seed for weights and data (default 0)",
       [](RunConfig& c, std::string_view v) -> std::optional<std::string> {
         const auto n = parse_number<uint64_t>(v);
         if (!n) return "expects a non-negative integer, got '" + std::string(v) + "'";
         c.seed = *n;
         return std::nullopt;
       }},
      {"--world-size", "N",
       "data parallel over N ranks (one GPU each): started by this program when no launcher "
       "(torchrun, srun) set RANK/WORLD_SIZE, else must equal WORLD_SIZE (default 1)",
       [](RunConfig& c, std::string_view v) -> std::optional<std::string> {
         const auto n = parse_number<int64_t>(v);
         if (!n || *n < 1 || *n > 1024) return "expects 1..1024, got '" + std::string(v) + "'";
         c.world_size = *n;
         return std::nullopt;
       }},
      {"--dist-timeout", "S", "data parallel: seconds before a collective fails (default 300)",
       positive(&RunConfig::dist_timeout_s)},
      {"--bucket-cap-mb", "N", "data parallel: gradient bucket size in MiB (default 25, as DDP)",
       positive(&RunConfig::bucket_cap_mb)},
      {"--bucket-views", "on|off",
       "data parallel: gradients live in their buckets, all-reduced in place (on, default; DDP's "
       "gradient_as_bucket_view) or get the averages copied back (off)",
       boolean(&RunConfig::bucket_views)},
      {"--quiet", "", "no summary line on stderr", nullptr},
      {"--describe", "", "print models, modes and switches as one JSON line and exit", nullptr},
      {"--help", "", "print this help and exit", nullptr},
  };
  return table;
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
    std::string left = "  " + std::string(spec.name);
    if (!spec.value.empty()) left += " " + std::string(spec.value);
    out << left;
    out << std::string(left.size() < 30 ? 30 - left.size() : 1, ' ') << spec.help << "\n";
  }
  out << "\nmodels (parameters; default train / inference batch):\n";
  for (const auto& m : model_catalogue()) {
    std::string left = "  " + std::string(m.name);
    out << left << std::string(left.size() < 14 ? 14 - left.size() : 1, ' ') << m.description
        << "\n"
        << std::string(14, ' ') << m.parameters << " parameters; batch " << m.default_train_batch
        << " / " << m.default_infer_batch << "\n";
  }
  out << "\nprecision modes (--mode):\n";
  for (const auto& p : precision_modes()) {
    std::string left = "  " + std::string(p.name);
    out << left << std::string(left.size() < 14 ? 14 - left.size() : 1, ' ') << p.summary << "\n";
  }
  out << "\nEvery mode clears autocast's weight-cast cache after each forward. fp16 (pure) trains\n"
         "without loss scaling, as model.half() does in PyTorch.\n";
  return out.str();
}

std::string describe_json() {
  std::string models = "[";
  for (const auto& m : model_catalogue()) {
    if (models.size() > 1) models += ',';
    models += JsonObject()
                  .add("name", m.name)
                  .add("python_name", m.python_name)
                  .add("description", m.description)
                  .add("parameters", m.parameters)
                  .add("default_train_batch", m.default_train_batch)
                  .add("default_infer_batch", m.default_infer_batch)
                  .add("supports_fp8", m.supports_fp8)
                  .str();
  }
  models += "]";
  std::string modes = "[";
  for (const auto& p : precision_modes()) {
    if (modes.size() > 1) modes += ',';
    modes += JsonObject().add("name", p.name).add("summary", p.summary).str();
  }
  modes += "]";
  std::string switches = "[";
  for (const auto& spec : option_table()) {
    if (switches.size() > 1) switches += ',';
    switches += JsonObject().add("option", spec.name).add("value", spec.value).str();
  }
  switches += "]";
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
