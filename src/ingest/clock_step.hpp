#pragma once
// Times of a run's own files (epochs.csv, steps.csv, ranks/*.json) stamped on a node whose clock
// stepped back while the run ran, where a log of that node places the step (StepWindow): put on
// the clock the run's start was stamped with, as the log's samples after the step are.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string_view>
#include <vector>

#include "ingest/reader.hpp"
#include "model/study.hpp"

namespace scalelens {

enum class StepSide { before, after, unknown };

// Why an epochs.csv or steps.csv line whose end is stamped before its start is a bad line. The
// reader says it so, but keeps the row (its end_ns < start_ns): a clock step back within it may
// explain it (place_rows_after_step); ingest leaves out those that remain so.
inline constexpr std::string_view kEndBeforeStart = "end_ns is before start_ns";
inline bool ended_before_started(const Interval& row) { return row.end_ns < row.start_ns; }

// Which side of the step a stamp lies on by its value alone.
inline StepSide side_of(std::int64_t t_ns, const StepWindow& window) {
  if (t_ns <= window.new_from_ns) return StepSide::before;
  if (t_ns > window.old_until_ns) return StepSide::after;
  return StepSide::unknown;
}

struct PlacedRows {
  std::size_t moved = 0;           // rows with a time moved forward by the step
  // Rows with a time stamped within what the clock passed twice, placed by the lengths of their
  // rank's other rows (their values cannot tell the side; a time that goes back, or its place
  // among its rank's times placed by value, can).
  std::size_t by_lengths = 0;
  std::vector<Interval> left_out;  // rows with a time that cannot be placed, as written
  // Rows that ended before they started as written (ended_before_started) and whose end the step
  // moved after their start: the step fell within them; and whether the first such row in the file
  // was one (those not taken are kept as written).
  std::size_t taken_back = 0;
  bool first_ended_early_taken_back = false;
  // The first moved row whose length the step changed, as written and as taken (for the message).
  std::optional<Interval> example_written, example_taken;
};

// `rows` in file order (each rank appends its own in the order it stamps them): a time after the
// step is moved forward by it; a row with a time the window cannot place (stamped within the time
// the clock went back over, and not placed by its rank's order either) is taken out.
PlacedRows place_rows_after_step(std::vector<Interval>& rows, const StepWindow& window);

}  // namespace scalelens
