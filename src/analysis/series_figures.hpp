#pragma once
// What one GPU's samples say over a run's window: the per-GPU half of the run's GPU figures
// (run_metrics.cpp adds them up over the run's GPUs). One pure function over one series, so that
// it can run where the series is read, once the window is known, and the samples need not be kept
// (issue 17, part 2): the figures are the same wherever it runs.
#include <cstddef>
#include <cstdint>
#include <optional>

#include "model/study.hpp"

namespace scalelens {

struct GpuSeriesFigures {
  std::size_t samples_inside = 0;         // samples within the window
  std::optional<double> peak_mem_bytes;   // the most memory in use within the window
  std::optional<double> util_pct;         // time-weighted mean utilization (plain mean when time-less)
  enum class EnergyFrom { none, counter, power } energy_from = EnergyFrom::none;
  double energy_j = 0;                    // from the counter, or the power integral (measured times)
  // Nominal times (rebuilt from sample index × interval): power summed over the samples, for the
  // caller to multiply by the interval the run states (else `spacing_s`).
  double power_sum_w = 0;
  std::size_t power_samples = 0;
  double spacing_s = 0;                   // the first step between two distinct sample times
  // Power-series time left out of the energy: pauses longer than the series' usual step.
  double skipped_s = 0, longest_skipped_s = 0;
  // An energy counter that rose by more than a GPU can draw: its reading and time (it is then not
  // used; the energy comes from power).
  std::optional<double> impossible_counter_mj;
  std::int64_t impossible_counter_t_ns = 0;
};

// Over [t0, t1] for measured times; over every sample for nominal times (they start at 0, not at a
// wall-clock time).
GpuSeriesFigures gpu_series_figures(const GpuSeries& g, std::int64_t t0, std::int64_t t1);

}  // namespace scalelens
