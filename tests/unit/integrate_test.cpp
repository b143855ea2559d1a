#include <gtest/gtest.h>

#include <cmath>
#include <vector>

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

TEST(Integrate, GapsLongerThanTheMaximumAreLeftOutAndCounted) {
  // Value 2 at 0, 1, 2 s, then (the logger paused) at 10 and 11 s. With gaps over 5 s left out:
  // 2 × (2 + 1) s = 6 integrated, 8 s skipped; in the window [0, 5] s only the 3 s up to 5 s are.
  const std::vector<std::int64_t> t{0, 1'000'000'000, 2'000'000'000, 10'000'000'000, 11'000'000'000};
  const std::vector<double> v{2, 2, 2, 2, 2};
  auto r = integrate_samples(t, v, 0, 11'000'000'000, 5'000'000'000);
  EXPECT_NEAR(r.value, 6, 1e-9);
  EXPECT_NEAR(r.covered_s, 3, 1e-9);
  EXPECT_NEAR(r.skipped_s, 8, 1e-9);
  EXPECT_NEAR(r.longest_skipped_s, 8, 1e-9);
  auto w = integrate_samples(t, v, 0, 5'000'000'000, 5'000'000'000);
  EXPECT_NEAR(w.skipped_s, 3, 1e-9);
  // Without a maximum the line across the pause is integrated, as before.
  EXPECT_NEAR(integrate_samples(t, v, 0, 11'000'000'000).value, 22, 1e-9);
  // The threshold: 5 × the median step (1 s), at least 1 s; a missing value is no sample.
  EXPECT_EQ(energy_gap_threshold_ns(t, v), 5'000'000'000);
  EXPECT_EQ(energy_gap_threshold_ns({0, 100'000'000, 200'000'000, 300'000'000}, {1, 1, NAN, 1}), 1'000'000'000);
  EXPECT_EQ(energy_gap_threshold_ns({0, 1'000'000'000}, {1, 1}), 0);
}

TEST(UnwrapCounter, ResetRestartsFromZero) {
  auto u = unwrap_counter({5, 7, 1, 4});
  EXPECT_DOUBLE_EQ(u.back() - u.front(), 2 + 1 + 3);
}
