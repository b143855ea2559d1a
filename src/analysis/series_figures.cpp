#include "analysis/series_figures.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <stdexcept>
#include <string>
#include <vector>

#include "analysis/analyze.hpp"
#include "common/decimate.hpp"
#include "model/limits.hpp"

namespace scalelens {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// The first reading of an energy counter (mJ) that rose by more than a GPU can draw since the
// reading before it (model/limits.hpp): a reset restarts from 0, so after one the reading itself is
// the gain. npos when every step is possible.
std::size_t first_impossible_counter_step(const std::vector<std::int64_t>& t_ns, const std::vector<double>& mj) {
  std::size_t prev = std::string::npos;
  for (std::size_t i = 0; i < mj.size(); ++i) {
    if (std::isnan(mj[i])) continue;
    if (prev != std::string::npos) {
      const double gain = mj[i] >= mj[prev] ? mj[i] - mj[prev] : mj[i];
      if (gain > limits::max_counter_gain_mj(t_ns[i] - t_ns[prev])) return i;
    }
    prev = i;
  }
  return std::string::npos;
}

// A GPU's samples as the columns the integrals and the chart take, converted once when a series is
// reduced (the figures and the chart both read them).
struct SampleColumns {
  std::vector<std::int64_t> t_ns;
  std::vector<double> util, power, counter;
};

SampleColumns columns_of(const std::vector<GpuSample>& samples) {
  SampleColumns c;
  c.t_ns.reserve(samples.size());
  c.util.reserve(samples.size());
  c.power.reserve(samples.size());
  c.counter.reserve(samples.size());
  for (const auto& s : samples) {
    c.t_ns.push_back(s.t_ns);
    c.util.push_back(s.util_pct);
    c.power.push_back(s.power_w);
    c.counter.push_back(s.energy_mj);
  }
  return c;
}

// The figures of gpu_series_figures from the series' columns (`columns.counter` is used up).
GpuSeriesFigures figures_from_columns(const GpuSeries& g, SampleColumns& columns, std::int64_t run_t0, std::int64_t run_t1) {
  GpuSeriesFigures f;
  const std::int64_t t0 = g.nominal_timestamps ? std::numeric_limits<std::int64_t>::min() : run_t0;
  const std::int64_t t1 = g.nominal_timestamps ? std::numeric_limits<std::int64_t>::max() : run_t1;
  const std::vector<std::int64_t>& ts = columns.t_ns;
  const std::vector<double>& util = columns.util;
  const std::vector<double>& power = columns.power;
  std::vector<double>& counter = columns.counter;
  for (const auto& s : g.samples) {
    if (s.t_ns >= t0 && s.t_ns <= t1) {
      ++f.samples_inside;
      if (!std::isnan(s.mem_used_bytes))
        f.peak_mem_bytes = std::max(f.peak_mem_bytes.value_or(0.0), static_cast<double>(s.mem_used_bytes));
    }
  }
  for (std::size_t k = 1; k < ts.size() && f.spacing_s == 0; ++k)
    if (ts[k] > ts[k - 1]) f.spacing_s = static_cast<double>(ts[k] - ts[k - 1]) * 1e-9;

  if (g.nominal_timestamps) {
    // No measured times (itwinai's CSV layouts): each sample stands for one probing interval, as
    // itwinai itself counts it (power x interval per sample; utilization a plain mean).
    double util_sum = 0;
    std::size_t n_util = 0;
    for (std::size_t k = 0; k < ts.size(); ++k) {
      if (!std::isnan(power[k])) {
        f.power_sum_w += power[k];
        ++f.power_samples;
      }
      if (!std::isnan(util[k])) {
        util_sum += util[k];
        ++n_util;
      }
    }
    if (n_util) f.util_pct = util_sum / static_cast<double>(n_util);
    return f;
  }
  auto u = integrate_samples(ts, util, t0, t1);
  if (u.covered_s > 0) {
    f.util_pct = u.value / u.covered_s;
  } else {
    // One sample (or all at one instant): its plain mean is all there is.
    double sum = 0;
    std::size_t n = 0;
    for (std::size_t k = 0; k < ts.size(); ++k)
      if (!std::isnan(util[k]) && ts[k] >= t0 && ts[k] <= t1) {
        sum += util[k];
        ++n;
      }
    if (n) f.util_pct = sum / static_cast<double>(n);
  }
  // Energy: the counter when it has two readings in the window, else the power integral. A
  // counter that jumps by more than the GPU can draw is not an energy counter: power is used.
  if (auto bad = first_impossible_counter_step(ts, counter); bad != std::string::npos) {
    f.impossible_counter_mj = counter[bad];
    f.impossible_counter_t_ns = ts[bad];
    std::fill(counter.begin(), counter.end(), kNaN);
  }
  auto unwrapped = unwrap_counter(counter);
  double first = kNaN, last = kNaN;
  std::size_t counter_readings = 0;
  for (std::size_t k = 0; k < ts.size(); ++k) {
    if (std::isnan(unwrapped[k]) || ts[k] < t0 || ts[k] > t1) continue;
    ++counter_readings;
    if (std::isnan(first)) first = unwrapped[k];
    last = unwrapped[k];
  }
  if (counter_readings >= 2) {
    f.energy_j = (last - first) * 1e-3;  // mJ → J, between the first and last readings inside
    f.energy_from = GpuSeriesFigures::EnergyFrom::counter;
    return f;
  }
  auto p = integrate_samples(ts, power, t0, t1, energy_gap_threshold_ns(ts, power));
  if (p.covered_s > 0) {
    f.energy_j = p.value;
    f.energy_from = GpuSeriesFigures::EnergyFrom::power;
  }
  f.skipped_s = p.skipped_s;
  f.longest_skipped_s = p.longest_skipped_s;
  return f;
}

// At most `max_points` of a series for its chart, the extremes of utilization and power kept.
std::vector<GpuChartPoint> chart_from_columns(const std::vector<std::int64_t>& t_ns, const std::vector<double>& util,
                                              const std::vector<double>& power, std::size_t max_points) {
  std::vector<const std::vector<double>*> values;
  auto any_value = [](const std::vector<double>& v) {
    return std::any_of(v.begin(), v.end(), [](double x) { return !std::isnan(x); });
  };
  if (any_value(util)) values.push_back(&util);
  if (any_value(power)) values.push_back(&power);
  std::vector<GpuChartPoint> chart;
  for (std::size_t i : decimate_indices(t_ns.size(), max_points, values))
    chart.push_back({t_ns[i], static_cast<float>(util[i]), static_cast<float>(power[i])});
  return chart;
}

}  // namespace

GpuSeriesFigures gpu_series_figures(const GpuSeries& g, std::int64_t run_t0, std::int64_t run_t1) {
  SampleColumns columns = columns_of(g.samples);
  return figures_from_columns(g, columns, run_t0, run_t1);
}

namespace {

// Ingest reduces a series only where its run's window is final; a reduced series asked about
// another window is a mistake in the program, which must not pass as a figure.
void check_window(std::int64_t reduced_t0, std::int64_t reduced_t1, std::int64_t t0, std::int64_t t1,
                  const std::string& source) {
  if (reduced_t0 != t0 || reduced_t1 != t1)
    throw std::logic_error("internal error: the samples of " + source +
                           " were reduced over another window than the run's; please report this");
}

}  // namespace

GpuSeriesFigures figures_of(const GpuSeries& g, std::int64_t t0, std::int64_t t1) {
  if (!g.reduced) return gpu_series_figures(g, t0, t1);
  check_window(g.reduced->t0, g.reduced->t1, t0, t1, g.source);
  return g.reduced->figures;
}

std::vector<GpuChartPoint> gpu_chart_points(const GpuSeries& g, std::size_t max_points) {
  if (!g.reduced) {
    const SampleColumns c = columns_of(g.samples);
    return chart_from_columns(c.t_ns, c.util, c.power, max_points);
  }
  const auto& kept = g.reduced->chart;
  // Kept within its share already (the usual case): decimating would keep every point.
  if (kept.size() <= std::max<std::size_t>(max_points, 2)) return kept;
  std::vector<std::int64_t> t_ns(kept.size());
  std::vector<double> util(kept.size()), power(kept.size());
  for (std::size_t i = 0; i < kept.size(); ++i) t_ns[i] = kept[i].t_ns, util[i] = kept[i].util_pct, power[i] = kept[i].power_w;
  return chart_from_columns(t_ns, util, power, max_points);
}

namespace {

std::optional<double> energy_from_samples(const HostSeries& h, std::int64_t t0, std::int64_t t1) {
  std::vector<double> c;
  for (const auto& s : h.samples)
    if (s.t_ns >= t0 && s.t_ns <= t1) c.push_back(s.cpu_energy_uj);
  double first = kNaN, last = kNaN;
  for (double x : unwrap_counter(c))
    if (!std::isnan(x)) {
      if (std::isnan(first)) first = x;
      last = x;
    }
  if (std::isnan(first) || !(last > first)) return std::nullopt;
  return (last - first) * 1e-6;  // µJ → J
}

}  // namespace

std::optional<double> host_series_energy_j(const HostSeries& h, std::int64_t t0, std::int64_t t1) {
  if (!h.reduced) return energy_from_samples(h, t0, t1);
  check_window(h.reduced->t0, h.reduced->t1, t0, t1, h.source);
  return h.reduced->cpu_energy_j;
}

void reduce_host_series(HostSeries& h, std::int64_t t0, std::int64_t t1) {
  if (h.reduced) return;
  h.reduced = ReducedHostSeries{t0, t1, energy_from_samples(h, t0, t1), h.samples.size()};
  std::vector<HostSample>().swap(h.samples);
}

void reduce_gpu_series(GpuSeries& g, std::int64_t t0, std::int64_t t1, std::size_t max_points) {
  if (g.reduced) return;
  ReducedGpuSeries r;
  r.t0 = t0, r.t1 = t1;
  SampleColumns columns = columns_of(g.samples);
  r.chart = chart_from_columns(columns.t_ns, columns.util, columns.power, max_points);
  r.figures = figures_from_columns(g, columns, t0, t1);
  r.sample_count = g.samples.size();
  r.first_t_ns = g.samples.empty() ? 0 : g.samples.front().t_ns;
  r.chart.shrink_to_fit();
  std::vector<GpuSample>().swap(g.samples);
  g.reduced = std::move(r);
}

}  // namespace scalelens
