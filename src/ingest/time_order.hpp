#pragma once
// Timestamps of a GPU log that go back (a clock stepped back, two logs appended to one file): the
// one check of the GPU log readers (nvidia-smi logs, gpu.csv), so that both say it alike.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <vector>

#include <fmt/format.h>

#include "ingest/reader.hpp"
#include "model/study.hpp"

namespace scalelens {

class BackwardTime {
 public:
  // A sample of series `series` stamped `t_ns`, read at `line`, in the file's order; gives the time
  // to file it at. A step back that lands inside the time the series has already covered is the
  // clock stepping back while it sampled (an NTP step): sorted, the stamps after it would interleave
  // with those before, the same seconds counted twice and as many lost at the end (a 32 s run's
  // power integrated over 27 s), so they are put back on the clock the series began with, on which
  // its run's start was stamped: moved forward by the step, the step itself read as the series'
  // sampling interval before it. One that lands before the series' first sample (an older log
  // appended) is put in order by report().
  std::int64_t see(std::size_t series, std::int64_t t_ns, std::int64_t line) {
    if (series >= last_t_.size()) {
      last_t_.resize(series + 1, std::numeric_limits<std::int64_t>::min());
      first_t_.resize(series + 1, 0);
      interval_.resize(series + 1, 0);
      shift_.resize(series + 1, 0);
      steps_.resize(series + 1, 0);
      unsorted_.resize(series + 1, false);
    }
    // A step is a sample earlier than the one before it of its GPU: one clock step back is one,
    // not every sample stamped before the latest (a log appended after a step "went backwards
    // 1196 times").
    const std::int64_t last = last_t_[series];
    if (last == std::numeric_limits<std::int64_t>::min()) {
      first_t_[series] = t_ns;
    } else if (t_ns < last) [[unlikely]] {
      ++steps_[series];
      if (first_line_ == 0) first_line_ = line;
      // Stamps far apart (a hostile or garbled log) may not add up in 64 bits: those are sorted.
      std::int64_t shift = 0;
      if (t_ns >= first_t_[series] && !__builtin_sub_overflow(last, t_ns, &shift) &&
          !__builtin_add_overflow(shift, interval_[series], &shift) && !__builtin_add_overflow(shift_[series], shift, &shift))
        shift_[series] = shift;
      else
        unsorted_[series] = true;
    } else if (t_ns > last && __builtin_sub_overflow(t_ns, last, &interval_[series])) {
      interval_[series] = 0;
    }
    last_t_[series] = t_ns;
    std::int64_t at = 0;
    if (__builtin_add_overflow(t_ns, shift_[series], &at)) [[unlikely]] {
      unsorted_[series] = true;
      return t_ns;
    }
    return at;
  }

  // Where some GPU's times went back: `time-goes-backwards` (the most steps one GPU took, and the
  // first line), and the series with a step to before their first sample put in time order (`gpus`
  // indexed as `see`'s series; any other is in order already).
  void report(std::vector<GpuSeries>& gpus, ReadOutput& out, const std::filesystem::path& file) const {
    const std::int64_t steps = steps_.empty() ? 0 : *std::max_element(steps_.begin(), steps_.end());
    if (steps == 0) return;
    out.warn("time-goes-backwards",
             fmt::format("timestamps go backwards {} time{} (the first at line {}), e.g. a clock change or two "
                         "logs appended to one file; samples after a step back into the time already logged were put "
                         "back on the clock the log began with (moved forward by the step), others put in time order",
                         steps, steps == 1 ? "" : "s", first_line_),
             file, first_line_);
    for (std::size_t i = 0; i < gpus.size() && i < steps_.size(); ++i)
      if (unsorted_[i])
        std::stable_sort(gpus[i].samples.begin(), gpus[i].samples.end(),
                         [](const GpuSample& a, const GpuSample& b) { return a.t_ns < b.t_ns; });
  }

 private:
  std::vector<std::int64_t> last_t_, first_t_, interval_, shift_, steps_;
  std::vector<bool> unsorted_;  // a step back to before the series' first sample
  std::int64_t first_line_ = 0;
};

}  // namespace scalelens
