#include "analysis/series_figures.hpp"

#include <algorithm>
#include <array>
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

// Where a sample lies against the window, and the spacing of the samples: the same whichever kind
// of timestamps a series has.
struct SampleCount {
  std::size_t inside = 0;
  double peak_mem = 0;
  bool have_peak_mem = false;
  double spacing_s = 0;  // the first step between samples that moves forward
  void add(const GpuSample& s, const GpuSample* prev, bool in_window) {
    if (in_window) {
      ++inside;
      if (!std::isnan(s.mem_used_bytes)) peak_mem = std::max(peak_mem, static_cast<double>(s.mem_used_bytes)), have_peak_mem = true;
    }
    if (prev && spacing_s == 0 && s.t_ns > prev->t_ns) spacing_s = static_cast<double>(s.t_ns - prev->t_ns) * 1e-9;
  }
  void into(GpuSeriesFigures& f) const {
    f.samples_inside = inside;
    if (have_peak_mem) f.peak_mem_bytes = peak_mem;
    f.spacing_s = spacing_s;
  }
};

// Per-bin sums (in double: a float sum of a million small times would drift) packed as cumulative
// shares.
void store_histogram(const std::array<double, kUtilBins>& sums, PackedUtilHistogram& into) {
  double total = 0;
  for (double w : sums) total += w;
  if (!(total > 0)) return;
  double below = 0;
  for (std::size_t b = 0; b < kUtilBins; ++b) {
    below += sums[b];
    into[b] = static_cast<std::uint16_t>(std::lround(std::min(below / total, 1.0) * kPackedShareUnit));
  }
}

// No measured times (itwinai's CSV layouts): each sample stands for one probing interval, as
// itwinai itself counts it (power x interval per sample; utilization a plain mean).
GpuSeriesFigures nominal_figures(const std::vector<GpuSample>& samples) {
  GpuSeriesFigures f;
  SampleCount count;
  double util_sum = 0;
  std::size_t n_util = 0;
  std::array<double, kUtilBins> util_count{};
  for (std::size_t k = 0; k < samples.size(); ++k) {
    const GpuSample& s = samples[k];
    count.add(s, k ? &samples[k - 1] : nullptr, true);
    if (!std::isnan(s.power_w)) {
      f.power_sum_w += s.power_w;
      ++f.power_samples;
    }
    if (!std::isnan(s.util_pct)) {
      util_sum += s.util_pct;
      ++n_util;
      util_count[util_bin(s.util_pct)] += 1;
    }
  }
  count.into(f);
  if (n_util) f.util_pct = util_sum / static_cast<double>(n_util);
  store_histogram(util_count, f.util_time);
  return f;
}

// Measured times, over [t0, t1], in one pass over the samples (a large report reduces every GPU's
// samples once; separate passes over copied columns were a sixth of reading): the time-weighted
// utilization (integrate_samples' rule), and the energy from the counter over the window (its
// value at t0 and t1 interpolated between the readings either side, as the power integral cuts its
// segments; the first and last readings inside where none lies beyond), unwrapped at resets,
// unless the counter jumps by more than the GPU can
// draw between two readings (model/limits.hpp; a reset restarts from 0, so after one the reading
// itself is the gain): then it is not an energy counter, and the power integral stands instead.
GpuSeriesFigures measured_figures(const std::vector<GpuSample>& samples, std::int64_t t0, std::int64_t t1) {
  GpuSeriesFigures f;
  SampleCount count;
  Integral util;
  std::int64_t util_prev_t = 0;
  double util_prev = kNaN, util_sum_inside = 0;
  std::size_t util_n_inside = 0;
  std::array<double, kUtilBins> util_time{};
  auto util_piece = [&util_time](double secs, double from, double to) {
    util_time[util_bin(from)] += 0.5 * secs;
    util_time[util_bin(to)] += 0.5 * secs;
  };
  constexpr std::size_t kNone = std::numeric_limits<std::size_t>::max();
  std::size_t impossible = kNone;  // the first counter reading whose gain is impossible
  std::int64_t counter_prev_t = 0;
  double counter_prev = kNaN, offset = 0, first = kNaN, last = kNaN, before = kNaN, after = kNaN;
  std::int64_t first_t = 0, last_t = 0, before_t = 0, after_t = 0;
  // The counter's last reading that differs from the one before it (its first, else): from there
  // on it held still.
  double moved = kNaN;
  std::int64_t moved_t = 0;
  std::size_t counter_readings = 0;
  bool drew_inside = false;  // a power reading above 0 inside the window
  for (std::size_t k = 0; k < samples.size(); ++k) {
    const GpuSample& s = samples[k];
    const std::int64_t t = s.t_ns;
    const bool inside = t >= t0 && t <= t1;
    count.add(s, k ? &samples[k - 1] : nullptr, inside);
    if (!std::isnan(s.power_w)) {
      f.power_samples += inside;
      drew_inside = drew_inside || (inside && s.power_w > 0);
      if (std::isnan(f.first_power_w)) f.first_power_w = s.power_w;
      f.last_power_w = s.power_w;
    }
    if (const double u = s.util_pct; !std::isnan(u)) {
      if (!std::isnan(util_prev)) integrate_segment(util, util_prev_t, util_prev, t, u, t0, t1, 0, util_piece);
      util_prev_t = t, util_prev = u;
      if (inside) util_sum_inside += u, ++util_n_inside;
    }
    if (const double c = s.energy_mj; !std::isnan(c)) {
      if (std::isnan(f.first_counter_mj)) f.first_counter_mj = c, f.first_counter_t_ns = t;
      f.last_counter_mj = c, f.last_counter_t_ns = t;
      if (!std::isnan(counter_prev)) {
        const double gain = c >= counter_prev ? c - counter_prev : c;
        if (impossible == kNone && gain > limits::max_counter_gain_mj(t - counter_prev_t)) impossible = k;
        if (c < counter_prev) offset += counter_prev;  // reset: the counter restarted from 0
      }
      if (c != counter_prev) moved = c + offset, moved_t = t;
      counter_prev_t = t, counter_prev = c;
      if (const double unwrapped = c + offset; inside && !std::isnan(unwrapped)) {
        ++counter_readings;
        if (std::isnan(first)) first = unwrapped, first_t = t;
        last = unwrapped, last_t = t;
      } else if (t < t0) {
        before = unwrapped, before_t = t;
      } else if (t > t1 && std::isnan(after)) {
        after = unwrapped, after_t = t;
      }
    }
  }
  count.into(f);
  if (!samples.empty()) f.first_t_ns = samples.front().t_ns, f.last_t_ns = samples.back().t_ns;
  if (util.covered_s > 0) {
    f.util_covered_s = util.covered_s;
    f.util_pct = util.value / util.covered_s;
    store_histogram(util_time, f.util_time);
  } else if (util_n_inside) {  // one sample (or all at one instant): its plain mean is all there is
    f.util_pct = util_sum_inside / static_cast<double>(util_n_inside);
    std::array<double, kUtilBins> count{};  // rare: counted here, not on every sample above
    for (const GpuSample& s : samples)
      if (!std::isnan(s.util_pct) && s.t_ns >= t0 && s.t_ns <= t1) count[util_bin(s.util_pct)] += 1;
    store_histogram(count, f.util_time);
  }

  if (impossible != kNone) {
    f.impossible_counter_mj = samples[impossible].energy_mj;
    f.impossible_counter_t_ns = samples[impossible].t_ns;
    counter_readings = 0;
  }
  // The power readings, and the longest step between them that is no gap (energy_gap_threshold_ns):
  // made only where power is integrated, as most GPUs with a counter need neither.
  std::vector<std::int64_t> ts;
  std::vector<double> power;
  std::int64_t gap_ns = -1;
  auto power_gap_ns = [&] {
    if (gap_ns < 0) {
      ts.resize(samples.size()), power.resize(samples.size());
      for (std::size_t k = 0; k < samples.size(); ++k) ts[k] = samples[k].t_ns, power[k] = samples[k].power_w;
      gap_ns = energy_gap_threshold_ns(ts, power);
    }
    return gap_ns;
  };
  bool counter_held_still = false;  // over the window, while the GPU drew: power stands in (below)
  if (counter_readings >= 2) {
    // The counter at `t` on the straight line between two readings.
    auto at = [](std::int64_t t, std::int64_t ta, double a, std::int64_t tb, double b) {
      return a + (b - a) * (static_cast<double>(t - ta) / static_cast<double>(tb - ta));
    };
    // What the counter measured inside the window: from the window's start (a reading before it)
    // else its first reading inside, to the window's end (a reading after it) else its last.
    const std::int64_t from = !std::isnan(before) && first_t > t0 ? t0 : first_t;
    std::int64_t to = !std::isnan(after) && last_t < t1 ? t1 : last_t;
    const double start = from == t0 && first_t > t0 ? at(t0, before_t, before, first_t, first) : first;
    double end = to == t1 && last_t < t1 ? at(t1, last_t, last, after_t, after) : last;
    // A counter that stops while the GPU's samples go on (its field empty, or its last value
    // repeated, from some point on: a GPU drawing power moves it between two samples) measured
    // nothing of that head or tail: as over a gap, power stands in there, and what it lacks is
    // left out and said. Only beyond a gap's length (5 steps, and 1 s), as a counter may tick more
    // slowly than it is sampled.
    auto beyond_a_gap = [&](std::int64_t span_ns) {
      return span_ns > kEnergyGapMinNs && span_ns > power_gap_ns();
    };
    bool counter_measured = true;
    if (beyond_a_gap(to - std::max(moved_t, from))) {
      to = std::max(moved_t, from), end = moved_t >= from ? moved : start;
      counter_measured = to > from;  // else it held still throughout: power alone, below
    }
    // Nor one that held still over all the window while power shows the GPU drawing (NVML's total
    // energy stuck at its first value), however few steps the window spans: it measured nothing (a
    // short run's energy was 0 Wh), and power alone stands in, as where it stopped.
    // Likewise one that held still over all its readings inside the window, beyond a gap's length,
    // while moving outside it: the window's edges, interpolated towards the readings beyond, were
    // its whole energy (a 32 s run at 1.2 kW read a few joules).
    if (drew_inside && (end == start || (first == last && beyond_a_gap(last_t - first_t)))) counter_measured = false;
    const std::int64_t samples_from = std::max(t0, samples.front().t_ns), samples_to = std::min(t1, samples.back().t_ns);
    const bool head = beyond_a_gap(from - samples_from), tail = beyond_a_gap(samples_to - to);
    counter_held_still = !counter_measured;
    if (counter_measured) {
      f.energy_j = (end - start) * 1e-3;  // mJ → J
      f.energy_from = GpuSeriesFigures::EnergyFrom::counter;
      auto power_in_place = [&](std::int64_t a, std::int64_t b) {
        const Integral p = integrate_samples(ts, power, a, b, power_gap_ns());
        f.energy_j += p.value;
        const double left_out = static_cast<double>(b - a) * 1e-9 - p.covered_s;
        f.skipped_s += left_out;
        f.longest_skipped_s = std::max(f.longest_skipped_s, left_out);
      };
      if (head) power_in_place(samples_from, from);
      if (tail) power_in_place(to, samples_to);
      f.counter_use = head || tail ? GpuSeriesFigures::CounterUse::measured_with_power_at_ends
                                   : GpuSeriesFigures::CounterUse::measured_all;
      return f;
    }
  }
  power_gap_ns();
  auto p = integrate_samples(ts, power, t0, t1, gap_ns);
  if (p.covered_s > 0) {
    f.energy_j = p.value;
    f.energy_from = GpuSeriesFigures::EnergyFrom::power;
    // Power in place of a counter that held still over the window (above): said as stuck.
    if (counter_held_still) f.counter_use = GpuSeriesFigures::CounterUse::held_still;
  }
  f.skipped_s = p.skipped_s;
  f.longest_skipped_s = p.longest_skipped_s;
  // Power readings that stop while the GPU's other readings go on (nvidia-smi's [GPU is lost] or
  // [Unknown Error] from some point), or begin after them: that time is no gap between power
  // samples, yet the energy leaves it out the same; it is counted with the gaps, which are said.
  // A GPU with no power reading at all gives no energy, said apart (energy-from-some-gpus).
  if (p.covered_s > 0 && !samples.empty()) {
    const std::int64_t from = std::max(t0, samples.front().t_ns), to = std::min(t1, samples.back().t_ns);
    const double missing = static_cast<double>(to - from) * 1e-9 - p.covered_s - p.skipped_s;
    if (missing * 1e9 > static_cast<double>(gap_ns)) {
      f.skipped_s += missing;
      f.longest_skipped_s = std::max(f.longest_skipped_s, missing);
    }
  }
  return f;
}

// At most `max_points` of a series for its chart, the extremes of utilization and power kept;
// `Point` is a sample or a kept chart point (both have t_ns, util_pct and power_w).
template <class Point>
std::vector<GpuChartPoint> chart_of(const std::vector<Point>& points, std::size_t max_points) {
  float Point::* values[2];
  std::size_t series = 0;
  auto any_value = [&](float Point::* member) {
    return std::any_of(points.begin(), points.end(), [&](const Point& p) { return !std::isnan(p.*member); });
  };
  if (any_value(&Point::util_pct)) values[series++] = &Point::util_pct;
  if (any_value(&Point::power_w)) values[series++] = &Point::power_w;
  std::vector<GpuChartPoint> chart;
  const auto keep = decimate_indices_by(points.size(), max_points, series,
                                        [&](std::size_t k, std::size_t i) -> double { return points[i].*values[k]; });
  chart.reserve(keep.size());
  for (std::size_t i : keep) chart.push_back({points[i].t_ns, points[i].util_pct, points[i].power_w});
  return chart;
}

}  // namespace

GpuSeriesFigures one_after_another(const GpuSeriesFigures& a, const GpuSeriesFigures& b, std::int64_t t0, std::int64_t t1) {
  GpuSeriesFigures f = a;
  f.samples_inside += b.samples_inside;
  if (b.peak_mem_bytes) f.peak_mem_bytes = std::max(a.peak_mem_bytes.value_or(0.0), *b.peak_mem_bytes);
  // Utilization: the time-weighted mean over both stretches, and its time at each percent.
  if (a.util_pct && b.util_pct && a.util_covered_s > 0 && b.util_covered_s > 0) {
    const double wa = a.util_covered_s, wb = b.util_covered_s;
    f.util_covered_s = wa + wb;
    f.util_pct = (*a.util_pct * wa + *b.util_pct * wb) / (wa + wb);
    const UtilHistogram sa = util_shares(a.util_time), sb = util_shares(b.util_time);
    std::array<double, kUtilBins> sums{};
    for (std::size_t i = 0; i < kUtilBins; ++i) sums[i] = sa[i] * wa + sb[i] * wb;
    f.util_time = {};
    store_histogram(sums, f.util_time);
  } else if (!a.util_pct || (a.util_covered_s == 0 && b.util_covered_s > 0)) {
    f.util_pct = b.util_pct, f.util_covered_s = b.util_covered_s, f.util_time = b.util_time;
  }
  // Energy: the two stretches' sum, each as it was measured (counter or power).
  if (b.energy_from != GpuSeriesFigures::EnergyFrom::none) {
    f.energy_j = a.energy_j + b.energy_j;
    if (a.energy_from == GpuSeriesFigures::EnergyFrom::none) f.energy_from = b.energy_from;
  }
  f.power_samples += b.power_samples;
  f.skipped_s += b.skipped_s;
  f.longest_skipped_s = std::max(a.longest_skipped_s, b.longest_skipped_s);
  const auto& [earlier, later] = a.last_t_ns <= b.first_t_ns ? std::pair{&a, &b} : std::pair{&b, &a};
  // The stretch between the files. Where both have an energy counter that was not refused and it
  // goes on across it (the later file's first reading not below the earlier's last: no reset or
  // reboot, and no more than a GPU can draw in that time), the counter's gain is its energy, as
  // within one file; inside the window, the share of it the window holds (the counter taken as
  // straight between the two readings, as at the window's ends).
  auto has_counter = [](const GpuSeriesFigures& x) { return !x.impossible_counter_mj && !std::isnan(x.last_counter_mj); };
  const double counter_gain = later->first_counter_mj - earlier->last_counter_mj;
  const std::int64_t gain_from = earlier->last_counter_t_ns, gain_to = later->first_counter_t_ns;
  if (has_counter(a) && has_counter(b) && counter_gain >= 0 && gain_to > gain_from &&
      counter_gain <= limits::max_counter_gain_mj(gain_to - gain_from)) {
    const std::int64_t inside_ns = std::min(gain_to, t1) - std::max(gain_from, t0);
    if (inside_ns > 0) {
      f.energy_j += counter_gain * 1e-3 * static_cast<double>(inside_ns) / static_cast<double>(gain_to - gain_from);
      if (f.energy_from == GpuSeriesFigures::EnergyFrom::none) f.energy_from = GpuSeriesFigures::EnergyFrom::counter;
    }
  } else {
    // Otherwise, inside the window, as a step within one series is taken: up to a gap's length
    // (5 steps, and 1 s) the trapezoid between the last power reading of the one and the first of
    // the other; longer, or with no power reading to step over it, left-out time, said as a gap is.
    const double between = static_cast<double>(std::min(later->first_t_ns, t1) - std::max(earlier->last_t_ns, t0)) * 1e-9;
    const bool powered = !std::isnan(earlier->last_power_w) && !std::isnan(later->first_power_w);
    if (between > std::max(1.0, 5 * std::max(a.spacing_s, b.spacing_s)) ||
        (between > 0 && !powered && f.energy_from != GpuSeriesFigures::EnergyFrom::none)) {
      f.skipped_s += between;
      f.longest_skipped_s = std::max(f.longest_skipped_s, between);
    } else if (between > 0 && powered && f.energy_from != GpuSeriesFigures::EnergyFrom::none) {
      f.energy_j += between * 0.5 * (static_cast<double>(earlier->last_power_w) + later->first_power_w);
    }
  }
  f.first_power_w = earlier->first_power_w;
  f.last_power_w = later->last_power_w;
  f.first_counter_mj = earlier->first_counter_mj, f.first_counter_t_ns = earlier->first_counter_t_ns;
  f.last_counter_mj = later->last_counter_mj, f.last_counter_t_ns = later->last_counter_t_ns;
  if (!f.impossible_counter_mj && b.impossible_counter_mj)
    f.impossible_counter_mj = b.impossible_counter_mj, f.impossible_counter_t_ns = b.impossible_counter_t_ns;
  f.first_t_ns = std::min(a.first_t_ns, b.first_t_ns);
  f.last_t_ns = std::max(a.last_t_ns, b.last_t_ns);
  return f;
}

GpuSeriesFigures gpu_series_figures(const GpuSeries& g, std::int64_t run_t0, std::int64_t run_t1) {
  return g.nominal_timestamps ? nominal_figures(g.samples) : measured_figures(g.samples, run_t0, run_t1);
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
  if (!g.reduced) return chart_of(g.samples, max_points);
  const auto& kept = g.reduced->chart;
  // Kept within its share already (the usual case): decimating would keep every point.
  if (kept.size() <= std::max<std::size_t>(max_points, 2)) return kept;
  return chart_of(kept, max_points);
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
  r.chart = chart_of(g.samples, max_points);
  r.figures = gpu_series_figures(g, t0, t1);
  r.sample_count = g.samples.size();
  r.first_t_ns = g.samples.empty() ? 0 : g.samples.front().t_ns;
  std::vector<GpuSample>().swap(g.samples);
  g.reduced = std::move(r);
}

}  // namespace scalelens
