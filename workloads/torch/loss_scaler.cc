#include "loss_scaler.h"

namespace gpuscope::workloads {

LossScaler::LossScaler(at::Device device, const LossScalerOptions& options) : options_(options) {
  const auto f32 = at::TensorOptions().dtype(at::kFloat).device(device);
  scale_ = at::full({}, options.init_scale, f32);
  inv_scale_ = at::empty({}, f32);
  growth_tracker_ = at::zeros({}, at::TensorOptions().dtype(at::kInt).device(device));
  found_inf_ = at::zeros({}, f32);
  skipped_steps_ = at::zeros({}, f32);
}

at::Tensor LossScaler::scale_loss(const at::Tensor& loss) const {
  return loss * scale_.to(loss.scalar_type());
}

const at::Tensor& LossScaler::unscale(at::TensorList grads) {
  found_inf_.zero_();
  at::reciprocal_out(inv_scale_, scale_);
  at::_amp_foreach_non_finite_check_and_unscale_(grads, found_inf_, inv_scale_);
  return found_inf_;
}

void LossScaler::update() {
  skipped_steps_.add_(found_inf_);
  at::_amp_update_scale_(scale_, growth_tracker_, found_inf_, options_.growth_factor,
                         options_.backoff_factor, options_.growth_interval);
}

}  // namespace gpuscope::workloads
