// The C++ API's run clock (SCALELENS_CLOCK, which `scalelens run` hands its command): stamps are
// the run's start plus the monotonic time elapsed since, whatever the wall clock says.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <string>

#include "../../include/scalelens/scalelens.hpp"
#include "support/test_support.hpp"

namespace {

using namespace scalelens::testing;

using scalelens::detail::now_on;
using scalelens::detail::parse_run_clock;
using scalelens::detail::read_ns;

constexpr std::int64_t kS = 1'000'000'000;
constexpr std::int64_t kStart2001 = 978303600 * kS;  // a run that began in 2001 by the wall clock

TEST(CppApiRunClock, StampsAreTheRunsStartPlusTheMonotonicTimeElapsed) {
  // Begun one second of monotonic time ago.
  const std::string value = std::to_string(kStart2001) + "," + std::to_string(read_ns(CLOCK_MONOTONIC) - kS);
  const auto clock = parse_run_clock(value.c_str());
  ASSERT_TRUE(clock);
  EXPECT_EQ(clock->start_ns, kStart2001);
  const std::int64_t before = read_ns(CLOCK_MONOTONIC), t = now_on(clock), after = read_ns(CLOCK_MONOTONIC);
  EXPECT_GE(t - kStart2001, kS + (before - clock->monotonic_ns - kS));
  EXPECT_LE(t - kStart2001, after - clock->monotonic_ns);
  EXPECT_GE(t - kStart2001, kS);
}

// A value that is not two integers joined by a comma gives no run clock: the wall clock, as outside
// `scalelens run` (not a time of 0 or of half the value).
TEST(CppApiRunClock, AMalformedValueFallsBackToTheWallClock) {
  for (const char* bad : {"", "abc", "12", "12,", ",34", "12,34x", "12;34", "12,34,56", "x12,34"}) {
    EXPECT_FALSE(parse_run_clock(bad)) << "'" << bad << "'";
    const std::int64_t before = read_ns(CLOCK_REALTIME), t = now_on(parse_run_clock(bad)), after = read_ns(CLOCK_REALTIME);
    EXPECT_GE(t, before) << bad;
    EXPECT_LE(t, after) << bad;
  }
  EXPECT_FALSE(parse_run_clock(nullptr));
}

// now_ns() itself reads SCALELENS_CLOCK once, at its first call, which this process may have made
// already: this test's binary, run anew with SCALELENS_TEST_LOG_ONE_EPOCH set, logs one epoch as a
// training program inside `scalelens run` does, and exits before any test runs.
const bool kLoggedOneEpochAsAChild = [] {
  if (!std::getenv("SCALELENS_TEST_LOG_ONE_EPOCH")) return false;
  { scalelens::EpochTimer t(0); }
  std::_Exit(0);
}();

std::int64_t first_epoch_start_logged_with(const char* clock) {
  ScratchDir d;
  const auto self = std::filesystem::read_symlink("/proc/self/exe");
  const std::string command = "SCALELENS_TEST_LOG_ONE_EPOCH=1 SCALELENS_RUN_DIR='" + d.path().string() +
                              "' SCALELENS_CLOCK='" + clock + "' '" + self.string() + "'";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  const std::string epochs = slurp(d / "epochs.csv");
  long long start = 0;
  EXPECT_EQ(std::sscanf(epochs.c_str(), "rank,epoch,start_ns,end_ns,samples\n0,0,%lld,", &start), 1) << epochs;
  return start;
}

TEST(CppApiRunClock, ATimerInsideScalelensRunStampsOnTheRunsClockAndWithAMalformedValueOnTheWallClock) {
  const std::string clock = std::to_string(kStart2001) + "," + std::to_string(read_ns(CLOCK_MONOTONIC) - kS);
  const std::int64_t on_run_clock = first_epoch_start_logged_with(clock.c_str());
  EXPECT_GE(on_run_clock - kStart2001, kS);
  EXPECT_LT(on_run_clock - kStart2001, 60 * kS);
  const std::int64_t before = read_ns(CLOCK_REALTIME);
  const std::int64_t on_wall_clock = first_epoch_start_logged_with("978303600000000000,abc");
  EXPECT_GE(on_wall_clock, before);
  EXPECT_LE(on_wall_clock, read_ns(CLOCK_REALTIME));
}

}  // namespace
