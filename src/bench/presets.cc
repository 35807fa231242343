// Named matrices. Budgets are for an H100 80GB: each row costs gpuscope-torch's start (LibTorch,
// cuDNN, the model: a few seconds) plus warm-up and timed steps, so the windows are kept short.
#include "gpuscope/bench.h"

namespace gpuscope::bench {
namespace {

void set_timing(std::vector<RowSpec>& rows, int warmup, int windows, int steps) {
  for (RowSpec& r : rows) {
    r.warmup = warmup;
    r.windows = windows;
    r.steps = steps;
  }
}

void append(std::vector<RowSpec>& rows, const MatrixOptions& o) {
  auto more = expand_matrix(o);
  // The presets are fixed lists of known names: expansion cannot fail.
  if (more.ok()) rows.insert(rows.end(), more->begin(), more->end());
}

InputPath host(int workers, bool pinned, bool non_blocking) {
  InputPath in;
  in.kind = "host";
  in.workers = workers;
  in.pinned = pinned;
  in.non_blocking = non_blocking;
  return in;
}

// seeds/000: timm vit_base_patch16_224, training (batch 160) and inference in every precision
// mode. seeds/002: ResNet-50 training with and without AMP, cudnn.benchmark on and off. Then a
// host-fed ResNet-50 run: loader workers 0 vs 8, pageable vs pinned, blocking vs overlapped
// copies (seeds/003, seeds/004).
std::vector<RowSpec> seeds() {
  std::vector<RowSpec> rows = seed000_rows();

  MatrixOptions amp_cudnn;
  amp_cudnn.models = {"resnet50"};
  amp_cudnn.tasks = {"train"};
  amp_cudnn.modes = {"fp32", "amp_fp16"};
  amp_cudnn.knobs = {{"cudnn_benchmark", {"off", "on"}}};
  append(rows, amp_cudnn);

  MatrixOptions fed;
  fed.models = {"resnet50"};
  fed.tasks = {"train"};
  fed.modes = {"amp_bf16"};
  // Each host row differs from the one before in one setting, so the answers can say what
  // workers, pinning and overlap each bought (non_blocking overlaps only from pinned memory).
  fed.inputs = {InputPath{}, host(0, false, false), host(8, false, false), host(8, true, false),
                host(8, true, true)};
  append(rows, fed);
  set_timing(rows, 5, 3, 10);
  return rows;
}

// The study's matrices: the three reference models, train and infer. Measured on the H100
// (2026-11-22): a row at the model's default batch costs ~6-12 s with its guard runs, but with
// --batch auto the search (doubling up to what fills 80 GB, two eager steps per try) made rows
// 25-60 s, so only the full study searches. The guard trains `guard_steps` steps per mode.
std::vector<RowSpec> study(std::vector<std::string> modes, bool auto_batch, int warmup, int windows,
                           int steps, int guard_steps) {
  std::vector<RowSpec> rows;
  MatrixOptions o;
  o.models = {"vit_b16", "resnet50", "gpt2"};
  o.tasks = {"train", "infer"};
  o.modes = std::move(modes);
  if (auto_batch) o.batches = {"auto"};
  append(rows, o);
  set_timing(rows, warmup, windows, steps);
  for (RowSpec& r : rows) r.guard_steps = guard_steps;
  return rows;
}

}  // namespace

std::vector<RowSpec> seed000_rows() {
  std::vector<RowSpec> rows;
  MatrixOptions vit;
  vit.models = {"vit_b16"};
  vit.tasks = {"train", "infer"};
  vit.modes = all_modes();
  append(rows, vit);
  return rows;
}

std::vector<std::string> preset_names() {
  return {"seeds", "study-quick", "study", "study-full"};
}

Result<std::vector<RowSpec>> preset(const std::string& name) {
  if (name == "seeds") return seeds();
  // study-quick: 18 rows, the three modes most people choose between (~3 min on an H100);
  // study: every mode, 42 rows (ResNet-50 fp8 is skipped at once; ~6.5 min); study-full: every
  // mode at the largest batch that fits, measured longer.
  if (name == "study-quick") return study({"tf32", "amp_bf16", "bf16"}, false, 3, 2, 5, 30);
  if (name == "study") return study(all_modes(), false, 3, 3, 5, 40);
  if (name == "study-full") return study(all_modes(), true, 5, 3, 10, 100);
  std::string list;
  for (const auto& n : preset_names()) list += (list.empty() ? "" : ", ") + n;
  return Status(Code::not_found, "unknown preset '" + name + "' (one of: " + list + ")");
}

}  // namespace gpuscope::bench
