// Telemetry over a time span: values between samples, counter deltas, integrals, and the time a
// clock-event bit was set. Samples are in time order; a sample without the reading is skipped.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "burn/telemetry.h"

namespace gpuscope::burn::detail {

struct Span {
  double start = 0, end = 0;  // seconds since the run's origin
  double seconds() const { return end - start; }
};

using Reading = std::function<std::optional<double>(const TelemetrySample&)>;

// A change or an integral over the part of a span the samples cover.
struct Covered {
  double value = 0;
  double seconds = 0;  // of the span, covered by samples with the reading
};

// The reading at t, linear between the samples around it; nullopt outside them.
std::optional<double> value_at(const std::vector<TelemetrySample>& samples, double t,
                               const Reading& reading);

// counter(end) - counter(start), with the span clipped to the samples that have the counter.
std::optional<Covered> counter_change(const std::vector<TelemetrySample>& samples, Span span,
                                      const Reading& counter);

// The integral of the reading over the span (linear between samples), clipped likewise.
std::optional<Covered> integrate(const std::vector<TelemetrySample>& samples, Span span,
                                 const Reading& reading);

// The largest value among samples inside the span; the value at its middle if none is inside.
std::optional<double> max_over(const std::vector<TelemetrySample>& samples, Span span,
                               const Reading& reading);

// Time-weighted mean over the span; the value at its middle if the samples do not cover it.
std::optional<double> mean_over(const std::vector<TelemetrySample>& samples, Span span,
                                const Reading& reading);

// Seconds of the span during which `bit` was set in the sampled clock-event masks, each mask
// holding from its sample to the next. An estimate: NVML has no counter for some reasons.
std::optional<Covered> seconds_with_bit(const std::vector<TelemetrySample>& samples, Span span,
                                        std::uint64_t bit);

// The mean of a GPM metric over the span, each interval weighted by its overlap with it.
std::optional<double> gpm_mean(const std::vector<GpmInterval>& intervals, Span span,
                               std::optional<double> nvml::GpmMetrics::*metric);

}  // namespace gpuscope::burn::detail
