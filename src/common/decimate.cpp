#include "common/decimate.hpp"

#include <algorithm>
#include <limits>

namespace scalelens {

std::vector<std::size_t> decimate_indices(std::size_t n, std::size_t max_points,
                                          const std::vector<const std::vector<double>*>& values) {
  std::vector<std::size_t> keep;
  if (n == 0) return keep;
  max_points = std::max<std::size_t>(max_points, 2);
  if (n <= max_points) {
    keep.resize(n);
    for (std::size_t i = 0; i < n; ++i) keep[i] = i;
    return keep;
  }
  // Each bucket keeps up to 2 points per value series (its min and max).
  const std::size_t per_bucket = 2 * std::max<std::size_t>(values.size(), 1);
  const std::size_t buckets = std::max<std::size_t>((max_points - 2) / per_bucket, 1);
  keep.push_back(0);
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t lo = 1 + (n - 2) * b / buckets, hi = 1 + (n - 2) * (b + 1) / buckets;
    if (lo >= hi) continue;
    if (values.empty()) {
      keep.push_back(lo);
      continue;
    }
    for (const auto* vs : values) {
      // NaN compares false both ways, so missing values are never picked; a bucket of only NaN
      // keeps its first point.
      const double* v = vs->data();
      std::size_t imin = lo, imax = lo;
      double vmin = std::numeric_limits<double>::infinity(), vmax = -vmin;
      for (std::size_t i = lo; i < hi; ++i) {
        if (v[i] < vmin) vmin = v[i], imin = i;
        if (v[i] > vmax) vmax = v[i], imax = i;
      }
      keep.push_back(imin);
      keep.push_back(imax);
    }
  }
  keep.push_back(n - 1);
  std::sort(keep.begin(), keep.end());
  keep.erase(std::unique(keep.begin(), keep.end()), keep.end());
  return keep;
}

}  // namespace scalelens
