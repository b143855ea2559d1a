#pragma once
// Thinning a long series for a chart while keeping its peaks and troughs.
#include <algorithm>
#include <cstddef>
#include <limits>
#include <vector>

namespace scalelens {

// Keeps at most `max_points` indices of `n` samples: the first, the last, and per bucket the
// indices of the minimum and maximum of each of the `series` value series, `value(k, i)` being
// series k's value at sample i (NaN skipped). Sorted, unique. A template so that the values can be
// read where they lie (a GPU's samples) instead of copied into columns first.
template <class ValueAt>
std::vector<std::size_t> decimate_indices_by(std::size_t n, std::size_t max_points, std::size_t series, ValueAt value) {
  std::vector<std::size_t> keep;
  if (n == 0) return keep;
  max_points = std::max<std::size_t>(max_points, 2);
  if (n <= max_points) {
    keep.resize(n);
    for (std::size_t i = 0; i < n; ++i) keep[i] = i;
    return keep;
  }
  // Each bucket keeps up to 2 points per value series (its min and max).
  const std::size_t per_bucket = 2 * std::max<std::size_t>(series, 1);
  const std::size_t buckets = std::max<std::size_t>((max_points - 2) / per_bucket, 1);
  keep.reserve(2 + buckets * per_bucket);
  keep.push_back(0);
  for (std::size_t b = 0; b < buckets; ++b) {
    const std::size_t lo = 1 + (n - 2) * b / buckets, hi = 1 + (n - 2) * (b + 1) / buckets;
    if (lo >= hi) continue;
    if (series == 0) {
      keep.push_back(lo);
      continue;
    }
    for (std::size_t k = 0; k < series; ++k) {
      // NaN compares false both ways, so missing values are never picked; a bucket of only NaN
      // keeps its first point.
      std::size_t imin = lo, imax = lo;
      double vmin = std::numeric_limits<double>::infinity(), vmax = -vmin;
      for (std::size_t i = lo; i < hi; ++i) {
        const double v = value(k, i);
        if (v < vmin) vmin = v, imin = i;
        if (v > vmax) vmax = v, imax = i;
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

// decimate_indices_by over columns: `values` are the series.
std::vector<std::size_t> decimate_indices(std::size_t n, std::size_t max_points,
                                          const std::vector<const std::vector<double>*>& values);

}  // namespace scalelens
