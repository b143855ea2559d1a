#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <random>
#include <vector>

#include "analysis/stats.hpp"

using namespace scalelens;

// Critical values from any Student-t table (two-sided 95%).
TEST(StudentT, CriticalValuesMatchTables) {
  EXPECT_NEAR(student_t_critical(0.95, 1), 12.706, 1e-3);
  EXPECT_NEAR(student_t_critical(0.95, 4), 2.776, 1e-3);
  EXPECT_NEAR(student_t_critical(0.95, 30), 2.042, 1e-3);
  EXPECT_NEAR(student_t_critical(0.95, 100000), 1.960, 1e-3);
}

TEST(Describe, MeanMedianStdAndConfidenceInterval) {
  // 2, 4, 4, 4, 5, 5, 7, 9: mean 5, median 4.5, sample variance 32/7.
  auto s = describe({9, 2, 4, 4, 4, 5, 5, 7});
  ASSERT_TRUE(s);
  EXPECT_DOUBLE_EQ(s->mean, 5);
  EXPECT_DOUBLE_EQ(s->median, 4.5);
  EXPECT_NEAR(s->std, std::sqrt(32.0 / 7), 1e-12);
  // t(0.975, 7) = 2.3646; half width = 2.3646 * 2.138 / sqrt(8) = 1.7874
  EXPECT_NEAR(s->ci95_high - s->mean, 1.7874, 1e-3);
  EXPECT_NEAR(s->mean - s->ci95_low, 1.7874, 1e-3);
}

TEST(Describe, SingleValueHasNoConfidenceInterval) {
  auto s = describe({3});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->n, 1u);
  EXPECT_DOUBLE_EQ(s->std, 0);
  EXPECT_TRUE(std::isnan(s->ci95_low));
  EXPECT_FALSE(describe({}).has_value());
}

// Repeats that took the same time have no spread: exactly their value, a zero-width interval, not
// the sum's rounding (250 epochs of 1.8 s summed and divided is not 1.8).
TEST(Describe, EqualValuesHaveExactlyNoSpread) {
  for (double v : {1.8, 0.1, 3e7}) {
    auto s = describe(std::vector<double>(250, v));
    ASSERT_TRUE(s);
    EXPECT_EQ(s->mean, v);
    EXPECT_EQ(s->std, 0);
    EXPECT_EQ(s->ci95_low, v);
    EXPECT_EQ(s->ci95_high, v);
  }
}

// Values that differ only by an ulp or two (the same time summed in another order) have no spread
// either, and their mean lies between them; a spread of a nanosecond in a second is kept.
TEST(Describe, ValuesThatDifferByRoundingHaveNoSpread) {
  for (double v : {1.8, 0.1, 3e7, -2.5}) {
    std::vector<double> values;
    double x = v;
    for (int k = 0; k < 6; ++k) values.push_back(x), x = std::nextafter(x, 2 * x + 1);
    auto s = describe(values);
    ASSERT_TRUE(s);
    EXPECT_EQ(s->std, 0) << v;
    EXPECT_EQ(s->ci95_low, s->mean);
    EXPECT_EQ(s->ci95_high, s->mean);
    EXPECT_GE(s->mean, std::min(values.front(), values.back()));
    EXPECT_LE(s->mean, std::max(values.front(), values.back()));
  }
  // Summed and divided, five 7.15 and one an ulp above give a mean below them all.
  std::vector<double> sevens(5, 7.15);
  sevens.push_back(std::nextafter(7.15, 8.0));
  auto seven = describe(sevens);
  ASSERT_TRUE(seven);
  EXPECT_GE(seven->mean, 7.15);
  EXPECT_LE(seven->mean, sevens.back());
  auto kept = describe({1.0, 1.0 + 1e-9, 1.0 + 2e-9});
  ASSERT_TRUE(kept);
  EXPECT_GT(kept->std, 0);
  EXPECT_LT(kept->ci95_low, kept->mean);
}

// The 95% interval every time figure carries (epoch, run and now step time pooled over steps):
// over many generated samples of step-time-like values (a 0.2 s step with 5% jitter, n from 3
// to 30), the interval holds the true mean in 95% ± 1.5% of them. 4000 seeds per size.
TEST(Describe, ConfidenceIntervalCoversTheMeanNinetyFivePercentOfTheTime) {
  for (int n : {3, 8, 30}) {
    int covered = 0;
    const int trials = 4000;
    for (int seed = 0; seed < trials; ++seed) {
      std::mt19937_64 rng(static_cast<std::uint64_t>(seed) * 7919 + static_cast<std::uint64_t>(n));
      std::normal_distribution<double> step(0.2, 0.01);
      std::vector<double> v(static_cast<std::size_t>(n));
      for (auto& x : v) x = step(rng);
      auto s = describe(v);
      ASSERT_TRUE(s);
      covered += s->ci95_low <= 0.2 && 0.2 <= s->ci95_high;
    }
    const double rate = static_cast<double>(covered) / trials;
    EXPECT_NEAR(rate, 0.95, 0.015) << "n = " << n;
  }
}
