// CorrelationMap stands for a hash map of correlation ids: whatever the ids (a trace's narrow
// running count, ids spread wide, negative ones, the ends of int64), it must answer as
// std::unordered_map's emplace and find do.
#include <gtest/gtest.h>

#include <cstdint>
#include <limits>
#include <random>
#include <unordered_map>
#include <vector>

#include <fmt/format.h>

#include "trace/correlation_map.hpp"

namespace scalelens::trace {
namespace {

TEST(CorrelationMap, AnswersAsAHashMapOverManyGeneratedIdSets) {
  constexpr std::int64_t kMin = std::numeric_limits<std::int64_t>::min(), kMax = std::numeric_limits<std::int64_t>::max();
  for (std::uint64_t seed = 1; seed <= 300; ++seed) {
    SCOPED_TRACE(fmt::format("seed {}", seed));
    std::mt19937_64 rng(seed);
    // Ids as traces have them (a running count from some base, a sixth of it used), spread wide,
    // or mixed with the extremes.
    const int shape = static_cast<int>(seed % 3);
    const std::int64_t base = static_cast<std::int64_t>(rng() % 1'000'000) - 500;
    std::vector<std::int64_t> ids(rng() % 3000);
    for (auto& id : ids) {
      id = shape == 0 ? base + static_cast<std::int64_t>(rng() % (6 * ids.size() + 1))
           : shape == 1 ? static_cast<std::int64_t>(rng())
                        : (rng() % 50 == 0 ? (rng() % 2 ? kMin : kMax) : base + static_cast<std::int64_t>(rng() % 100));
    }
    IdRange range;
    for (auto id : ids) range.add(id);
    CorrelationMap<int> map(range);
    std::unordered_map<std::int64_t, int> expected;
    for (std::size_t i = 0; i < ids.size(); ++i) {
      const int value = static_cast<int>(rng() % 7) - 3;  // repeats, negatives: the first stays
      EXPECT_EQ(map.emplace(ids[i], value), expected.emplace(ids[i], value).second);
    }
    // Every id held, and ids near them, beyond the range, and at the extremes that are not.
    // (Neighbours wrap at the ends, as unsigned arithmetic does: a signed overflow would be UB.)
    auto moved = [](std::int64_t id, std::int64_t by) {
      return static_cast<std::int64_t>(static_cast<std::uint64_t>(id) + static_cast<std::uint64_t>(by));
    };
    std::vector<std::int64_t> asked = ids;
    for (auto id : ids) asked.insert(asked.end(), {moved(id, -1), moved(id, 1)});
    asked.insert(asked.end(), {kMin, kMax, 0, -1});
    if (range.count) asked.insert(asked.end(), {moved(range.lo, -1000), moved(range.hi, 1000)});
    for (auto id : asked) {
      auto it = expected.find(id);
      const int* got = map.find(id);
      ASSERT_EQ(got != nullptr, it != expected.end()) << id;
      if (got) EXPECT_EQ(*got, it->second) << id;
      EXPECT_EQ(map.contains(id), got != nullptr);
    }
  }
}

// A dense map still takes and finds ids it was not told of, beyond its range on either side.
TEST(CorrelationMap, IdsOutsideTheCountedRangeGoToTheHashMap) {
  IdRange range;
  for (std::int64_t id = 1000; id < 1100; ++id) range.add(id);
  CorrelationMap<int> map(range);
  for (std::int64_t id : {std::int64_t{999}, std::int64_t{1100}, std::int64_t{-5}, std::numeric_limits<std::int64_t>::max()}) {
    EXPECT_FALSE(map.contains(id));
    EXPECT_TRUE(map.emplace(id, static_cast<int>(id % 7)));
    EXPECT_FALSE(map.emplace(id, 99));
    ASSERT_TRUE(map.find(id));
    EXPECT_EQ(*map.find(id), static_cast<int>(id % 7));
  }
  EXPECT_TRUE(map.emplace(1050, 3));
  EXPECT_FALSE(map.contains(1049));
  EXPECT_EQ(*map.find(1050), 3);
}

TEST(CorrelationMap, AnEmptyMapFindsNothing) {
  CorrelationMap<int> map(IdRange{});
  EXPECT_FALSE(map.contains(0));
  EXPECT_FALSE(map.contains(std::numeric_limits<std::int64_t>::min()));
  EXPECT_TRUE(map.emplace(5, 1));  // an id not counted in the range still goes in
  ASSERT_TRUE(map.find(5));
  EXPECT_EQ(*map.find(5), 1);
}

}  // namespace
}  // namespace scalelens::trace
