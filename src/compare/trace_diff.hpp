#pragma once
// Trace level of a comparison (DESIGN.md, "Comparing studies"): for one matched configuration
// with GPU traces on both sides, which kernels and collectives take more or less time, which are
// new or gone, and how each rank's exposed communication and idle time changed. Times are per rank
// and profiled step, so traces of a different number of steps or ranks compare.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "analysis/summary.hpp"
#include "model/study.hpp"
#include "trace/trace_set.hpp"

namespace scalelens {

struct KernelDelta {
  std::string name;
  bool communication = false;
  double before_us = 0, after_us = 0;  // per rank and profiled step
  double calls_before = 0, calls_after = 0;  // per rank and profiled step
  double delta_us() const { return after_us - before_us; }
  bool added() const { return calls_before == 0 && calls_after > 0; }
  bool vanished() const { return calls_after == 0 && calls_before > 0; }
  // New, gone, or a time that differs by more than summing the same durations in another order can.
  bool changed() const;
};

struct RankDelta {
  int rank = 0;
  std::optional<double> exposed_comm_before_us, exposed_comm_after_us;  // per step
  std::optional<double> idle_before_us, idle_after_us;
};

struct TraceDiff {
  std::string configuration;  // ConfigurationComparison::name() and world size
  int world_size = 0;
  int ranks_before = 0, ranks_after = 0;
  double steps_before = 0, steps_after = 0;  // profiled steps per rank
  double gpu_before_us = 0, gpu_after_us = 0;  // all kernels' time per rank and step
  std::vector<KernelDelta> kernels;      // those that changed, the largest |change| first, at most `top`
  std::vector<KernelDelta> collectives;  // by collective (AllReduce, ...), changed or not, the largest |change| first
  std::size_t added = 0, vanished = 0;   // kernels new after, gone after (all, not only the top)
  std::size_t unchanged = 0;             // kernels whose time is the same on both sides
  std::vector<RankDelta> ranks;
};

// The GPU trace files of a configuration's runs, as the study read them.
std::vector<std::filesystem::path> trace_files_of(const Study& study, const Summary& summary, const ConfigurationSummary& c);

TraceDiff diff_trace_sets(const trace::TraceSet& before, const trace::TraceSet& after, std::size_t top);

}  // namespace scalelens
