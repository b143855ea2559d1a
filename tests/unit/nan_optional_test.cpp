#include "common/nan_optional.hpp"

#include <bit>
#include <cstring>
#include <limits>
#include <optional>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "model/limits.hpp"
#include "model/study.hpp"

using namespace scalelens;

// It stands where std::optional<double> stood: every operation the study's code uses answers as
// std::optional's does, for every value a reader keeps (numbers, never NaN), and for none.
TEST(NanOptional, AnswersAsStdOptionalForEveryNumberAndForNone) {
  std::mt19937_64 rng(17);
  std::vector<double> values{0.0, -0.0, 1.0, -1.0, 1e-310, 5e-324, 1e308, -1e308,
                             std::numeric_limits<double>::infinity(), -std::numeric_limits<double>::infinity()};
  for (int i = 0; i < 2000; ++i) {  // any bit pattern that is not a NaN
    std::uint64_t bits = rng();
    double v;
    std::memcpy(&v, &bits, sizeof v);
    if (!std::isnan(v)) values.push_back(v);
  }
  std::vector<std::optional<double>> cases{std::nullopt};
  for (double v : values) cases.emplace_back(v);
  for (const auto& want : cases) {
    const NanOptional got(want);
    ASSERT_EQ(got.has_value(), want.has_value());
    ASSERT_EQ(static_cast<bool>(got), static_cast<bool>(want));
    ASSERT_EQ(std::bit_cast<std::uint64_t>(got.value_or(-7.5)), std::bit_cast<std::uint64_t>(want.value_or(-7.5)));
    const std::optional<double> back = got;
    ASSERT_EQ(back.has_value(), want.has_value());
    if (want) {
      ASSERT_EQ(std::bit_cast<std::uint64_t>(*got), std::bit_cast<std::uint64_t>(*want));  // -0 stays -0
      ASSERT_EQ(std::bit_cast<std::uint64_t>(got.value()), std::bit_cast<std::uint64_t>(*want));
      ASSERT_TRUE(got == *want);
      ASSERT_FALSE(got == std::nullopt);
    } else {
      ASSERT_THROW(static_cast<void>(got.value()), std::bad_optional_access);
      ASSERT_TRUE(got == std::nullopt);
      ASSERT_FALSE(got == 0.0);
    }
    for (const auto& other : {cases[0], cases[1], cases[3], want})  // equality as std::optional's
      ASSERT_EQ(got == NanOptional(other), want == other);
  }
}

TEST(NanOptional, SetAndResetLikeStdOptional) {
  NanOptional o;
  EXPECT_FALSE(o);
  o = 3.5;
  EXPECT_TRUE(o == 3.5);
  o = std::nullopt;
  EXPECT_FALSE(o);
  o = std::optional<double>(2.0);
  EXPECT_TRUE(o == 2.0);
  o.reset();
  EXPECT_FALSE(o.has_value());
  o = std::optional<double>();
  EXPECT_FALSE(o.has_value());
}

// The one value it cannot hold: a NaN reads back as none, which is why it holds only values that
// a reader has checked are numbers (Interval::samples: limits::valid_samples).
TEST(NanOptional, ANanReadsBackAsNone) {
  EXPECT_FALSE(NanOptional(std::numeric_limits<double>::quiet_NaN()).has_value());
  EXPECT_FALSE(NanOptional(-std::numeric_limits<double>::quiet_NaN()).has_value());
  EXPECT_FALSE(limits::valid_samples(std::numeric_limits<double>::quiet_NaN()));
}

// The point of it: an interval, of which a study holds one per epoch of every run, is 8 bytes
// smaller, and still crosses between processes as raw bytes.
TEST(NanOptional, HalvesTheOptionalAndKeepsAnIntervalTriviallyCopyable) {
  static_assert(sizeof(NanOptional) == sizeof(double));
  static_assert(std::is_trivially_copyable_v<NanOptional> && std::is_trivially_copyable_v<Interval>);
  EXPECT_LT(sizeof(Interval), 48u);
}
