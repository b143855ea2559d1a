#include "common/decimate.hpp"

namespace scalelens {

std::vector<std::size_t> decimate_indices(std::size_t n, std::size_t max_points,
                                          const std::vector<const std::vector<double>*>& values) {
  return decimate_indices_by(n, max_points, values.size(),
                             [&](std::size_t k, std::size_t i) { return (*values[k])[i]; });
}

}  // namespace scalelens
