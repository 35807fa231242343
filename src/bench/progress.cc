#include "bench/progress.h"

#include <fmt/format.h>

#include <cmath>

namespace gpuscope::bench::detail {

double prior_seconds(const RowSpec& row) {
  const double startup = 6;  // LibTorch, CUDA context, cuDNN, the model
  const int steps = row.warmup.value_or(10) + row.windows.value_or(5) * row.steps.value_or(10);
  const double per_step = row.task == "train" ? 0.15 : 0.08;
  const double search = row.batch == "auto" ? 4 : 0;
  return startup + search + steps * per_step;
}

void Progress::finished(std::size_t index, double seconds) {
  if (index < priors_.size()) done_prior_ += priors_[index];
  done_actual_ += seconds;
}

double Progress::remaining_s(std::size_t index) const {
  double left = 0;
  for (std::size_t i = index; i < priors_.size(); ++i) left += priors_[i];
  const double scale = done_prior_ > 0 ? done_actual_ / done_prior_ : 1.0;
  return left * scale;
}

std::string Progress::line(std::size_t index, const std::string& label, double elapsed_s) const {
  return fmt::format("bench [{}/{}] {} | {} elapsed, ~{} left", index + 1, priors_.size(), label,
                     format_duration(elapsed_s), format_duration(remaining_s(index)));
}

}  // namespace gpuscope::bench::detail
