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
  // A sample of series `series` stamped `t_ns`, read at `line`, in the file's order.
  void see(std::size_t series, std::int64_t t_ns, std::int64_t line) {
    if (series >= last_t_.size()) {
      last_t_.resize(series + 1, std::numeric_limits<std::int64_t>::min());
      steps_.resize(series + 1, 0);
    }
    // A step is a sample earlier than the one before it of its GPU: one clock step back is one,
    // not every sample stamped before the latest (a log appended after a step "went backwards
    // 1196 times").
    if (t_ns < last_t_[series]) [[unlikely]] {
      ++steps_[series];
      if (first_line_ == 0) first_line_ = line;
    }
    last_t_[series] = t_ns;
  }

  // Where some GPU's times went back: `time-goes-backwards` (the most steps one GPU took, and the
  // first line), and those series put in time order (`gpus` indexed as `see`'s series; a series
  // without a step is in order already).
  void report(std::vector<GpuSeries>& gpus, ReadOutput& out, const std::filesystem::path& file) const {
    const std::int64_t steps = steps_.empty() ? 0 : *std::max_element(steps_.begin(), steps_.end());
    if (steps == 0) return;
    out.warn("time-goes-backwards",
             fmt::format("timestamps go backwards {} time{} (the first at line {}), e.g. a clock change or two "
                         "logs appended to one file; samples were put in time order",
                         steps, steps == 1 ? "" : "s", first_line_),
             file, first_line_);
    for (std::size_t i = 0; i < gpus.size() && i < steps_.size(); ++i)
      if (steps_[i] > 0)
        std::stable_sort(gpus[i].samples.begin(), gpus[i].samples.end(),
                         [](const GpuSample& a, const GpuSample& b) { return a.t_ns < b.t_ns; });
  }

 private:
  std::vector<std::int64_t> last_t_, steps_;
  std::int64_t first_line_ = 0;
};

}  // namespace scalelens
