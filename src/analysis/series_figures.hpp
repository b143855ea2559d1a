#pragma once
// What one GPU's (and one host's) samples say over a run's window: the per-GPU half of the run's
// GPU figures (run_metrics.cpp adds them up over the run's GPUs), computed by one function over
// one series, so that it can run where the series is read, once the window is known, and the
// samples need not be kept (issue 17, part 2): the figures are the same wherever it runs. Also the
// reduction itself (reduce_*: figures and a chart in place of the samples) and the chart's points.
#include <cstddef>
#include <cstdint>
#include <optional>
#include <vector>

#include "model/study.hpp"

namespace scalelens {


// Over [t0, t1] for measured times; over every sample for nominal times (they start at 0, not at a
// wall-clock time).
GpuSeriesFigures gpu_series_figures(const GpuSeries& g, std::int64_t t0, std::int64_t t1);

// The series' figures over [t0, t1]: those taken when it was reduced (over the same window, which
// is checked: std::logic_error otherwise), else computed from its samples.
GpuSeriesFigures figures_of(const GpuSeries& g, std::int64_t t0, std::int64_t t1);
// One GPU's figures over two stretches of samples one after the other (a rotated or restarted
// log: two files), as one series' would be but for the stretch between the two files, whose time
// inside the window [t0, t1] is left out of the energy as a gap is (said where longer than one).
GpuSeriesFigures one_after_another(const GpuSeriesFigures& a, const GpuSeriesFigures& b, std::int64_t t0, std::int64_t t1);

// At most `max_points` points of the series for a chart: every point when it has no more, else the
// first, the last and each bucket's lowest and highest utilization and power (decimate_indices).
// From the samples, or from the chart kept when it was reduced.
std::vector<GpuChartPoint> gpu_chart_points(const GpuSeries& g, std::size_t max_points);

// A host's CPU package energy over [t0, t1] from its counter (first to last reading inside,
// wraps unwrapped); none without two readings that rise. Taken when reduced, else from the samples.
std::optional<double> host_series_energy_j(const HostSeries& h, std::int64_t t0, std::int64_t t1);
// The energy in place of the samples, for a series whose run's window is final when it is read.
void reduce_host_series(HostSeries& h, std::int64_t t0, std::int64_t t1);

// Figures over [t0, t1] and a chart of at most `max_points` points in place of the samples, whose
// memory is given back: for a series whose run's window is final when it is read.
void reduce_gpu_series(GpuSeries& g, std::int64_t t0, std::int64_t t1, std::size_t max_points);

}  // namespace scalelens
