// Downsampling a time series for drawing: a chart cannot show more points than it has pixels,
// and a 4 MB page of points draws slowly. Only drawing uses this; numbers use every point.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

namespace gpuscope::report::detail {

// The indices (ascending) of at most `max_points` points of (x, y) to draw: x's range is cut
// into max_points / 4 equal intervals, and in each the first, last, lowest and highest point are
// kept (the "M4" rule), so every spike, dip and step survives. All indices when there are no
// more than max_points points. NaN values are never chosen as lowest or highest.
// REQUIRES: x ascending, x.size() == y.size(), max_points >= 4.
std::vector<std::size_t> downsample_indices(std::span<const double> x, std::span<const double> y,
                                            std::size_t max_points);

}  // namespace gpuscope::report::detail
