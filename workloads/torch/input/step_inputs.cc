#include "input/step_inputs.h"

#include <chrono>

#include "input/host_batches.h"
#include "input/host_loader.h"
#include "input/host_to_device.h"
#include "input/jpeg_batches.h"
#include "input/jpeg_codec.h"

namespace gpuscope::workloads {

std::variant<std::optional<ImageFolder>, InputProblem> check_input(const RunConfig& config) {
  if (config.input.kind != InputKind::jpeg) return std::optional<ImageFolder>();
  if (config.model == ModelKind::gpt2) {
    return InputProblem{true, "not_supported",
                        "--input jpeg feeds images; GPT-2 takes tokens (use --input host)"};
  }
  if (!jpeg_available()) return InputProblem{true, "not_supported", jpeg_unavailable_reason()};
  if (config.input.data.empty()) {
    return InputProblem{false, "invalid_argument", "--input jpeg needs --data DIR"};
  }
  auto scanned = scan_image_folder(config.input.data);
  if (auto* why = std::get_if<std::string>(&scanned)) {
    return InputProblem{false, "invalid_argument", *why};
  }
  return std::optional<ImageFolder>(std::move(std::get<ImageFolder>(scanned)));
}

bool resolve_pinned(const RunConfig& config, const DeviceInfo& device, std::string* note) {
  if (config.input.kind == InputKind::synthetic || !config.input.pinned) return false;
  if (!device.is_cuda() || !pinned_memory_available()) {
    if (note != nullptr) {
      *note =
          "--pinned on: staging is pageable, page-locked memory only helps copies to a CUDA "
          "device";
    }
    return false;
  }
  return true;
}

StepInputs::StepInputs(const RunConfig& config, const DeviceInfo& device, const BatchSpec& spec,
                       bool pinned, std::optional<ImageFolder> folder) {
  const int64_t buffers = input_sets_for(config);
  for (int64_t i = 0; i < buffers; ++i) {
    device_batches_.push_back(make_synthetic_batch(spec, device.device));
  }
  if (config.input.kind == InputKind::synthetic) return;

  BatchProducer produce;
  if (config.input.kind == InputKind::jpeg) {
    jpeg_ = std::make_unique<JpegBatches>(std::move(*folder), spec, config.seed);
    produce = [jpeg = jpeg_.get()](int64_t index, HostSlot& slot) { jpeg->produce(index, slot); };
  } else {
    produce = synthetic_host_producer(spec, config.seed);
  }
  LoaderOptions options;
  options.workers = config.input.loader_workers;
  options.prefetch = 2;
  // Copies in flight hold their slots, plus the one being staged.
  options.held = buffers + 1;
  loader_ = std::make_unique<HostLoader>(
      options, [spec, pinned] { return make_host_slot(spec, pinned); }, std::move(produce));
  copier_ = std::make_unique<HostToDevice>(
      device, config.input.non_blocking, static_cast<size_t>(buffers), static_cast<size_t>(buffers),
      [loader = loader_.get()](HostSlot* slot) { loader->recycle(slot); });
}

StepInputs::~StepInputs() {
  copier_.reset();
  if (loader_) loader_->stop();
}

void StepInputs::before_step(int64_t step) {
  if (!loader_) return;
  const auto start = std::chrono::steady_clock::now();
  HostSlot* slot = loader_->next();
  const double waited =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  wait_seconds_ += waited;
  wait_total_ += waited;
  TORCH_CHECK(slot != nullptr, "the input loader stopped");
  ++taken_;
  const size_t buffer = static_cast<size_t>(step) % device_batches_.size();
  copier_->stage(slot, device_batches_[buffer], buffer);
}

void StepInputs::after_step(int64_t step) {
  if (copier_) copier_->step_queued(static_cast<size_t>(step) % device_batches_.size());
}

InputStats StepInputs::stats() const {
  InputStats s;
  s.wait_seconds = wait_seconds_;
  s.wait_seconds_total = wait_total_;
  s.batches = taken_;
  if (copier_) s.h2d_bytes = copier_->bytes_copied();
  if (loader_) s.produce_seconds = loader_->stats().produce_seconds;
  if (jpeg_) s.unreadable_files = jpeg_->unreadable_files();
  return s;
}

}  // namespace gpuscope::workloads
