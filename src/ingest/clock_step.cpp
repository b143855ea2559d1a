#include "ingest/clock_step.hpp"

#include <algorithm>
#include <cstdlib>
#include <limits>
#include <map>

namespace scalelens {

namespace {

// Where among a rank's times (`time_at(i)`, i < n: start, end, start, ...) the step lies, when the
// times after `last_before` and before `first_after` cannot be placed by their values: the split
// (the first time after the step) that gives the rows and gaps about them lengths closest to those
// of the rank's rows placed already (the sum of distances to their median). -1: no such rows,
// too many times between (a step of hours among short steps), or no one split is best.
template <class TimeAt>
std::ptrdiff_t split_by_lengths(const TimeAt& time_at, std::size_t n, std::ptrdiff_t last_before, std::ptrdiff_t first_after,
                                std::int64_t step_ns) {
  constexpr std::ptrdiff_t kMostSplits = 64;
  if (first_after - last_before > kMostSplits) return -1;
  auto placed = [&](std::ptrdiff_t a, std::ptrdiff_t b) {  // both times on one side by their place
    return (a <= last_before && b <= last_before) || (a >= first_after && b >= first_after);
  };
  auto median = [](std::vector<std::int64_t>& v) -> std::optional<std::int64_t> {
    if (v.empty()) return std::nullopt;
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2), v.end());
    return v[v.size() / 2];
  };
  std::vector<std::int64_t> lengths, gaps;  // of the rows and gaps placed already
  for (std::size_t i = 0; i + 1 < n; ++i)
    if (placed(static_cast<std::ptrdiff_t>(i), static_cast<std::ptrdiff_t>(i) + 1))
      (i % 2 == 0 ? lengths : gaps).push_back(time_at(i + 1) - time_at(i));
  const auto length = median(lengths), gap = median(gaps);
  if (!length) return -1;
  std::ptrdiff_t best = -1;
  std::int64_t best_cost = std::numeric_limits<std::int64_t>::max();
  bool tie = false;
  for (std::ptrdiff_t split = last_before + 1; split <= first_after; ++split) {
    auto true_time = [&](std::ptrdiff_t i) { return time_at(static_cast<std::size_t>(i)) + (i >= split ? step_ns : 0); };
    std::int64_t cost = 0;
    // The rows and gaps that hold a time between (or the step itself).
    const std::ptrdiff_t from = std::max<std::ptrdiff_t>(last_before, 0), to = std::min<std::ptrdiff_t>(first_after, static_cast<std::ptrdiff_t>(n) - 1);
    for (std::ptrdiff_t i = from; i < to; ++i) {
      const std::int64_t span = true_time(i + 1) - true_time(i);
      if (i % 2 == 0) cost += std::abs(span - *length);
      else if (gap) cost += std::abs(span - *gap);
    }
    if (cost < best_cost) best = split, best_cost = cost, tie = false;
    else if (cost == best_cost) tie = true;
  }
  return tie ? -1 : best;
}

}  // namespace

PlacedRows place_rows_after_step(std::vector<Interval>& rows, const StepWindow& window) {
  PlacedRows placed;
  std::map<int, std::vector<std::size_t>> of_rank;  // rows of each rank, in file order
  for (std::size_t i = 0; i < rows.size(); ++i) of_rank[rows[i].rank].push_back(i);
  std::vector<char> leave_out(rows.size(), 0);
  std::vector<StepSide> sides;
  bool example_spans = false;  // the example row spans the step (its length changed)
  std::size_t first_ended_early = rows.size(), first_still_early = rows.size();  // positions in `rows`
  for (const auto& entry : of_rank) {
    const std::vector<std::size_t>& mine = entry.second;
    // A rank's times in the order it stamped them: start, end, start, end, ...
    auto time_at = [&](std::size_t i) { return i % 2 == 0 ? rows[mine[i / 2]].start_ns : rows[mine[i / 2]].end_ns; };
    const std::size_t n = mine.size() * 2;
    sides.assign(n, StepSide::unknown);
    // The step lies after the last time stamped before it and before the first stamped after it;
    // a time that goes back from the one before it is the step itself, whatever the values.
    std::ptrdiff_t last_before = -1, first_after = static_cast<std::ptrdiff_t>(n);
    for (std::size_t i = 0; i < n; ++i) {
      sides[i] = side_of(time_at(i), window);
      if (sides[i] == StepSide::before) last_before = static_cast<std::ptrdiff_t>(i);
      if (sides[i] == StepSide::after) first_after = std::min(first_after, static_cast<std::ptrdiff_t>(i));
      if (i > 0 && time_at(i) < time_at(i - 1) && sides[i - 1] != StepSide::after && sides[i] != StepSide::before) {
        last_before = std::max(last_before, static_cast<std::ptrdiff_t>(i) - 1);
        first_after = std::min(first_after, static_cast<std::ptrdiff_t>(i));
      }
    }
    // In order, each time takes the side of its place; out of order (rows of the rank not in the
    // order stamped), by its value alone.
    if (last_before < first_after) {
      // Times between, stamped within what the clock passed twice: the step where it gives the rows
      // about them the lengths and gaps of the rank's others (a rank's epochs or steps last alike).
      std::ptrdiff_t split = first_after;  // the first time after the step
      if (first_after - last_before > 1) {
        split = split_by_lengths(time_at, n, last_before, first_after, window.step_ns);
        if (split >= 0)
          for (std::size_t i = 0; i < n; i += 2) {  // rows with a time between
            auto between = [&](std::size_t at) {
              return static_cast<std::ptrdiff_t>(at) > last_before && static_cast<std::ptrdiff_t>(at) < first_after;
            };
            placed.by_lengths += between(i) || between(i + 1);
          }
      }
      for (std::size_t i = 0; i < n; ++i) {
        const auto at = static_cast<std::ptrdiff_t>(i);
        if (split >= 0) sides[i] = at < split ? StepSide::before : StepSide::after;
        else sides[i] = at <= last_before ? StepSide::before : at >= first_after ? StepSide::after : StepSide::unknown;
      }
    }
    for (std::size_t j = 0; j < mine.size(); ++j) {
      Interval& row = rows[mine[j]];
      const StepSide start = sides[2 * j], end = sides[2 * j + 1];
      const Interval written = row;
      const bool ended_early = ended_before_started(written);
      if (ended_early) first_ended_early = std::min(first_ended_early, mine[j]);
      if (start == StepSide::unknown || end == StepSide::unknown || (start == StepSide::after && end == StepSide::before) ||
          (start == StepSide::after && __builtin_add_overflow(row.start_ns, window.step_ns, &row.start_ns)) ||
          (end == StepSide::after && __builtin_add_overflow(row.end_ns, window.step_ns, &row.end_ns))) {
        row = written;
        leave_out[mine[j]] = 1;
        if (ended_early) first_still_early = std::min(first_still_early, mine[j]);
        continue;
      }
      if (ended_early && row.end_ns > row.start_ns) ++placed.taken_back;
      if (ended_early && row.end_ns <= row.start_ns) {  // not by the step: as written, for ingest to leave out
        first_still_early = std::min(first_still_early, mine[j]);
        row = written;
        continue;
      }
      if (end != StepSide::after) continue;
      ++placed.moved;
      if (!placed.example_taken || (start != end && !example_spans))
        placed.example_written = written, placed.example_taken = row, example_spans = start != end;
    }
  }
  placed.first_ended_early_taken_back = first_ended_early < rows.size() && first_ended_early != first_still_early;
  std::size_t kept = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (leave_out[i]) placed.left_out.push_back(rows[i]);
    else rows[kept++] = rows[i];
  }
  rows.resize(kept);
  return placed;
}

}  // namespace scalelens
