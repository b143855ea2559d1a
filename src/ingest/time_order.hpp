#pragma once
// Timestamps of a GPU log that go back (a clock stepped back, two logs appended to one file): the
// one check of the GPU log readers (nvidia-smi logs, gpu.csv), so that both say it alike.
#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <limits>
#include <optional>
#include <span>
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
    if (series >= clocks_.size()) clocks_.resize(series + 1);
    Clock& c = clocks_[series];
    const bool first_of_log = c.log != logs_;
    c.log = logs_;
    // A step is a sample earlier than the one before it of its GPU: one clock step back is one,
    // not every sample stamped before the latest (a log appended after a step "went backwards
    // 1196 times").
    if (c.last == std::numeric_limits<std::int64_t>::min()) {
      c.first = t_ns;
    } else if (first_of_log && t_ns < c.last) [[unlikely]] {
      // The first sample of a log appended after its header (new_log) back in the time already
      // logged: another logger's samples of the same GPU over that time (an older log appended
      // after a newer one), not the clock stepping back: moved forward they would stand for time
      // after the log's end. Put in time order, and said apart.
      c.unsorted = true;
      c.shift = 0;  // its stamps are its own logger's, as written
      c.interval = 0;
      if (appended_line_ == 0) appended_line_ = line, appended_header_line_ = log_header_line_;
      std::int64_t back = 0;
      if (__builtin_sub_overflow(c.last, t_ns, &back)) back = std::numeric_limits<std::int64_t>::max();
      appended_back_ns_ = std::max(appended_back_ns_, back);
    } else if (t_ns < c.last) [[unlikely]] {
      if (++c.steps == 1) c.step_before = c.last, c.step_after = t_ns, c.step_interval = c.interval;
      if (first_line_ == 0) first_line_ = line;
      // Stamps far apart (a hostile or garbled log) may not add up in 64 bits: those are sorted.
      std::int64_t shift = 0;
      if (t_ns >= c.first && !__builtin_sub_overflow(c.last, t_ns, &shift) && !__builtin_add_overflow(shift, c.interval, &shift) &&
          !__builtin_add_overflow(c.shift, shift, &shift))
        c.shift = shift;
      else
        c.unsorted = true;
    } else if (t_ns > c.last && __builtin_sub_overflow(t_ns, c.last, &c.interval)) {
      c.interval = 0;
    }
    c.last = t_ns;
    std::int64_t at = 0;
    if (__builtin_add_overflow(t_ns, c.shift, &at)) [[unlikely]] {
      c.unsorted = true;
      return t_ns;
    }
    return at;
  }

  // The file's header line again, at `line`: the samples after it are another log's, appended to
  // this one (nvidia-smi started again with its output appended), whose stamps may go back to
  // before the last sample without any clock stepping.
  void new_log(std::int64_t line) {
    ++logs_;
    log_header_line_ = line;
  }

  // The step to move `end_ns` by, a time stamped on this log's host clock just before its last
  // sample (scalelens run stamps the run's end, then the sampler takes its last sample): where the
  // clock stepped back while it sampled and `end_ns` lies at the log's last stamp as written (within
  // 2 sampling intervals, and 1 s), it was stamped on the stepped clock, and the step (> 0) puts it
  // on the clock the log began with, as the rows after the step are. A step within that margin
  // cannot be told from the logger's lag: none.
  std::optional<std::int64_t> shift_at_end(std::int64_t end_ns) const {
    const Clock* latest = latest_series();
    if (!latest || latest->unsorted || latest->shift <= 0) return std::nullopt;
    const std::int64_t margin = std::max<std::int64_t>(1'000'000'000, std::min<std::int64_t>(latest->interval, kMaxMarginNs) * 2);
    if (latest->shift <= margin) return std::nullopt;
    std::int64_t apart = 0;
    if (__builtin_sub_overflow(end_ns, latest->last, &apart) || apart > margin || apart < -margin) return std::nullopt;
    if (std::int64_t moved = 0; __builtin_add_overflow(end_ns, latest->shift, &moved)) return std::nullopt;
    return latest->shift;
  }
  // The first line of a step back (0: none).
  std::int64_t first_step_line() const { return first_line_; }

  // Where the one step back of the series shift_at_end reads lies, as stamps (StepWindow): none
  // where it stepped more than once (which clock a stamp is on then cannot be told by its value).
  std::optional<StepWindow> step_window() const {
    const Clock* latest = latest_series();
    if (!latest || latest->steps != 1 || latest->unsorted || latest->shift <= 0) return std::nullopt;
    // The clock stepped after the sample before the step and no later than one interval after it:
    // stamps on the clock it stepped from reach one interval past that sample at most; stamps on
    // the clock it stepped to begin at most one interval before the sample after the step.
    StepWindow w;
    w.step_ns = latest->shift;
    if (__builtin_add_overflow(latest->step_before, latest->step_interval, &w.old_until_ns) ||
        __builtin_sub_overflow(latest->step_after, latest->step_interval, &w.new_from_ns))
      return std::nullopt;
    return w;
  }

  // Where some GPU's times went back: `time-goes-backwards` (the most steps one GPU took, and the
  // first line; apart, a log appended back in the time already logged), and the series with a step
  // to before their first sample, or an appended log back in time, put in time order (`series`
  // indexed as `see`'s; any other is in order already).
  template <class Series>  // GpuSeries, HostSeries
  void report(std::span<Series> series, ReadOutput& out, const std::filesystem::path& file) const {
    std::int64_t steps = 0;
    for (const auto& c : clocks_) steps = std::max(steps, c.steps);
    if (appended_line_ != 0)
      out.warn("time-goes-backwards",
               fmt::format("a log appended at line {} (the header again) goes back to before the samples above it "
                           "(the first at line {}, {}): another logger's samples over time already logged (an older "
                           "log appended after a newer one), not a clock step; they are put in time order among the "
                           "others, not moved",
                           appended_header_line_, appended_line_,
                           appended_back_ns_ == std::numeric_limits<std::int64_t>::max()
                               ? std::string("far back")
                               : fmt::format("{:.3g} s back", static_cast<double>(appended_back_ns_) * 1e-9)),
               file, appended_line_);
    if (steps > 0)
      out.warn("time-goes-backwards",
             fmt::format("timestamps go backwards {} time{} (the first at line {}), e.g. a clock change or two "
                         "logs appended to one file; samples after a step back into the time already logged were put "
                         "back on the clock the log began with (moved forward by the step), others put in time order",
                         steps, steps == 1 ? "" : "s", first_line_),
               file, first_line_);
    for (std::size_t i = 0; i < series.size() && i < clocks_.size(); ++i)
      if (clocks_[i].unsorted)
        std::stable_sort(series[i].samples.begin(), series[i].samples.end(),
                         [](const auto& a, const auto& b) { return a.t_ns < b.t_ns; });
  }

  // Whether the clock of the series step_window reads stepped back while it sampled, once or more
  // (not a step to before its first sample, nor an older log appended).
  bool clock_stepped_back() const {
    const Clock* latest = latest_series();
    return latest && latest->steps > 0 && !latest->unsorted && latest->shift > 0;
  }

 private:
  struct Clock {  // a series' stamps as read
    std::int64_t last = std::numeric_limits<std::int64_t>::min(), first = 0;
    std::int64_t interval = 0;  // its last step forward: its sampling interval
    std::int64_t shift = 0;     // added to its stamps, to put them back on its first clock
    std::int64_t steps = 0;     // steps back
    std::int64_t step_before = 0, step_after = 0, step_interval = 0;  // the first step: the stamps either side, the interval
    bool unsorted = false;      // a step back to before its first sample, or an appended log back in time
    std::size_t log = 0;        // the log (new_log) of its last sample
  };
  // The series whose last stamp is the latest, as written (the run's end is stamped by it), or null.
  const Clock* latest_series() const {
    const Clock* latest = nullptr;
    for (const auto& c : clocks_)
      if (c.last != std::numeric_limits<std::int64_t>::min() && (!latest || c.last > latest->last)) latest = &c;
    return latest;
  }
  static constexpr std::int64_t kMaxMarginNs = 3'600'000'000'000;  // an hour: no sampler is slower
  std::vector<Clock> clocks_;
  std::int64_t first_line_ = 0;
  std::size_t logs_ = 0;  // logs appended after the first
  std::int64_t log_header_line_ = 0, appended_line_ = 0, appended_header_line_ = 0;
  std::int64_t appended_back_ns_ = 0;  // how far an appended log went back from the sample before it, the most
};

}  // namespace scalelens
