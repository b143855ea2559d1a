// Rows of epochs.csv and steps.csv stamped on a node whose clock stepped back, placed against the
// step as the node's log places it (ingest/clock_step.hpp).
#include <gtest/gtest.h>

#include <vector>

#include "ingest/clock_step.hpp"

using namespace scalelens;

namespace {

constexpr std::int64_t kS = 1000000000;
// The clock stepped back 5 s between two samples stamped 13 s and 8.5 s (0.5 s apart): stamps up to
// 8 s are before the step, those after 13.5 s after it, those between may be either.
const StepWindow kWindow{5 * kS, 8 * kS, 27 * kS / 2};

Interval row(int rank, std::int64_t index, double start_s, double end_s) {
  return Interval{rank, index, static_cast<std::int64_t>(start_s * 1e9), static_cast<std::int64_t>(end_s * 1e9), std::nullopt};
}

}  // namespace

// 1 s steps: the one across the step ended stamped before it started (a bad line, not here); the
// next starts 4 s before the one before it ended: the step lies between them, whatever their values.
TEST(ClockStep, ATimeThatGoesBackPlacesTheStep) {
  std::vector<Interval> rows;
  for (int s = 7; s < 12; ++s) rows.push_back(row(0, s, 1 + s, 2 + s));         // 8 s .. 13 s, before
  for (int s = 13; s < 16; ++s) rows.push_back(row(0, s, 1 + s - 5, 2 + s - 5));  // 9 s .. 12 s as stamped, after
  const PlacedRows placed = place_rows_after_step(rows, kWindow);
  EXPECT_EQ(placed.moved, 3u);
  EXPECT_EQ(placed.by_lengths, 0u);
  EXPECT_TRUE(placed.left_out.empty());
  ASSERT_EQ(rows.size(), 8u);
  EXPECT_EQ(rows[4].start_ns, 12 * kS);  // step 11, as stamped
  EXPECT_EQ(rows[5].start_ns, 14 * kS);  // step 13, 5 s later than stamped
  EXPECT_EQ(rows[7].end_ns, 17 * kS);
}

// A rank's one epoch, from 1 s to a stamp of 12 s: 11 s, or 16 s if it ended after the step; no
// other epoch of the rank tells which. Left out, not read as one of them; another rank's epochs,
// placed by their values, are kept.
TEST(ClockStep, ARowNothingPlacesIsLeftOut) {
  std::vector<Interval> rows{row(0, 0, 1, 12), row(1, 0, 1, 7), row(1, 1, 14, 20)};
  const PlacedRows placed = place_rows_after_step(rows, kWindow);
  ASSERT_EQ(placed.left_out.size(), 1u);
  EXPECT_EQ(placed.left_out[0].rank, 0);
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(rows[0].end_ns, 7 * kS);
  EXPECT_EQ(rows[1].start_ns, 19 * kS);
  EXPECT_EQ(placed.moved, 1u);
}

// Step 12, from 13 s to 14 s, stamped to end at 9 s: the step fell within it. Its end is moved and it
// lasts its 1 s (taken back from the bad lines); rank 1's row that ended before it started by more
// than the step, before it, is no row of the step's: kept as written, for ingest to leave out.
TEST(ClockStep, ARowThatEndsBeforeItStartsBecauseTheStepFellWithinItIsTakenBack) {
  std::vector<Interval> rows{row(1, 0, 3, 2)};
  for (int s = 10; s < 12; ++s) rows.push_back(row(0, s, 1 + s, 2 + s));  // 11 s .. 13 s
  rows.push_back(row(0, 12, 13, 9));
  rows.push_back(row(0, 13, 9, 10));
  rows.push_back(row(1, 1, 4, 6));
  const PlacedRows placed = place_rows_after_step(rows, kWindow);
  EXPECT_EQ(placed.taken_back, 1u);
  EXPECT_FALSE(placed.first_ended_early_taken_back);  // rank 1's, first in the file, is not
  EXPECT_TRUE(placed.left_out.empty());
  ASSERT_EQ(rows.size(), 6u);
  EXPECT_EQ(rows[0].end_ns, 2 * kS);  // as written
  EXPECT_EQ(rows[3].start_ns, 13 * kS);
  EXPECT_EQ(rows[3].end_ns, 14 * kS);
  EXPECT_EQ(rows[4].start_ns, 14 * kS);
  EXPECT_EQ(placed.moved, 2u);
}
