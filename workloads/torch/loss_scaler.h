// Dynamic loss scaling for fp16 autocast, with its whole state on the device so that a training
// step never waits for the host (and can be captured in a CUDA graph). The algorithm is
// PyTorch's GradScaler's, on the same ATen kernels: multiply the loss by the scale; after
// backward, unscale the gradients and look for inf/NaN
// (_amp_foreach_non_finite_check_and_unscale_); the optimizer skips the step when one was found;
// then _amp_update_scale_ halves the scale after an overflow and doubles it after `growth_interval`
// clean steps in a row.
#pragma once

#include <ATen/ATen.h>

#include <cstdint>

namespace gpuscope::workloads {

struct LossScalerOptions {
  double init_scale = 65536.0;
  double growth_factor = 2.0;
  double backoff_factor = 0.5;
  int64_t growth_interval = 2000;
};

class LossScaler {
 public:
  LossScaler(at::Device device, const LossScalerOptions& options);

  // loss * scale, for backward().
  at::Tensor scale_loss(const at::Tensor& loss) const;
  // Divides every gradient by the scale in place and sets found_inf() to 1 when any holds inf or
  // NaN (0 otherwise). Returns found_inf(), for the optimizer to skip the step.
  // REQUIRES: grads are defined, on the scaler's device.
  const at::Tensor& unscale(at::TensorList grads);
  // Backs the scale off after an overflow, grows it after growth_interval clean steps, and
  // counts skipped steps. Call once per step, after the optimizer.
  void update();

  // 0-dim float32 tensors on the device; reading one on the host synchronizes.
  const at::Tensor& scale() const { return scale_; }
  const at::Tensor& found_inf() const { return found_inf_; }
  const at::Tensor& skipped_steps() const { return skipped_steps_; }

 private:
  LossScalerOptions options_;
  at::Tensor scale_;
  at::Tensor inv_scale_;
  at::Tensor growth_tracker_;  // int32: clean steps since the last change of scale
  at::Tensor found_inf_;
  at::Tensor skipped_steps_;
};

}  // namespace gpuscope::workloads
