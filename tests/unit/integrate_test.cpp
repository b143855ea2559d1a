#include <gtest/gtest.h>

#include <cmath>

#include "analysis/analyze.hpp"

using namespace scalelens;

TEST(Integrate, ClipsToWindowWithLinearInterpolation) {
  // Line from (0 s, 0) to (10 s, 10): integral over [2, 4] s = 3 × 2 = 6.
  auto r = integrate_samples({0, 10'000'000'000}, {0, 10}, 2'000'000'000, 4'000'000'000);
  EXPECT_NEAR(r.value, 6, 1e-9);
  EXPECT_NEAR(r.covered_s, 2, 1e-9);
}

TEST(Integrate, SkipsMissingValues) {
  auto r = integrate_samples({0, 1'000'000'000, 2'000'000'000}, {2, NAN, 2}, 0, 2'000'000'000);
  EXPECT_NEAR(r.value, 4, 1e-9);
}

TEST(UnwrapCounter, ResetRestartsFromZero) {
  auto u = unwrap_counter({5, 7, 1, 4});
  EXPECT_DOUBLE_EQ(u.back() - u.front(), 2 + 1 + 3);
}
