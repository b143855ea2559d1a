#pragma once
// Thinning a long series for a chart while keeping its peaks and troughs.
#include <cstddef>
#include <vector>

namespace scalelens {

// Keeps at most `max_points` indices of `n` samples: the first, the last, and per bucket the
// indices of the minimum and maximum of each of `values` (NaN skipped). Sorted, unique.
std::vector<std::size_t> decimate_indices(std::size_t n, std::size_t max_points,
                                          const std::vector<const std::vector<double>*>& values);

}  // namespace scalelens
