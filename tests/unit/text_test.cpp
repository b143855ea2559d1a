#include <gtest/gtest.h>

#include <charconv>
#include <random>

#include "common/text.hpp"

using namespace scalelens;

TEST(ParseDouble, FastPathAgreesWithFromCharsBitForBit) {
  // The hand-written fast path must round exactly as std::from_chars does.
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200000; ++i) {
    std::uint64_t mantissa = rng() % 1'000'000'000'000'000ULL;
    int decimals = static_cast<int>(rng() % 10);
    std::string s = std::to_string(mantissa);
    if (decimals > 0 && decimals < static_cast<int>(s.size())) s.insert(s.size() - decimals, ".");
    if (rng() % 2) s = "-" + s;
    double expected = 0;
    std::from_chars(s.data(), s.data() + s.size(), expected);
    auto got = parse_double(s);
    ASSERT_TRUE(got) << s;
    ASSERT_EQ(*got, expected) << s;
  }
}

TEST(ParseDouble, RejectsWhatIsNotAFiniteNumber) {
  EXPECT_FALSE(parse_double(""));
  EXPECT_FALSE(parse_double("nan"));
  EXPECT_FALSE(parse_double("inf"));
  EXPECT_FALSE(parse_double("1.2.3"));
  EXPECT_FALSE(parse_double("12 W"));
  EXPECT_DOUBLE_EQ(*parse_double(" 1e3 "), 1000);
  EXPECT_DOUBLE_EQ(*parse_double("+0.5"), 0.5);
  EXPECT_DOUBLE_EQ(*parse_double(".5"), 0.5);
  EXPECT_DOUBLE_EQ(*parse_double("0.000123456789012345678"), 0.000123456789012345678);
}

TEST(ParseInt, LongAndNegativeValuesGoThroughFromChars) {
  EXPECT_EQ(*parse_int("1796208589198371046"), 1796208589198371046LL);
  EXPECT_EQ(*parse_int("-42"), -42);
  EXPECT_FALSE(parse_int("99999999999999999999"));
  EXPECT_FALSE(parse_int("12a"));
  EXPECT_FALSE(parse_int("-"));
}

TEST(SplitCsv, QuotedFieldsMayHoldCommas) {
  std::vector<std::string_view> f;
  split_csv(R"(a,"b,c",,d)", f);
  ASSERT_EQ(f.size(), 4u);
  EXPECT_EQ(f[1], "b,c");
  EXPECT_EQ(f[2], "");
  EXPECT_EQ(f[3], "d");
}
