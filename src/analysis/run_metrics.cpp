// Figures of one run: epoch times, throughput, GPU utilization, energy, trace breakdown.
#include <algorithm>
#include <cmath>
#include <limits>
#include <map>
#include <set>
#include <stdexcept>
#include <tuple>

#include <fmt/format.h>

#include "analysis/analyze.hpp"
#include "analysis/series_figures.hpp"
#include "common/decimate.hpp"
#include "common/text.hpp"
#include "model/limits.hpp"
#include "trace/collectives.hpp"
#include "trace/step_alignment.hpp"

namespace scalelens {

namespace {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A GPU as messages name it: its UUID, else its index, and its node where the source names one
// (MLflow and itwinai do not).
std::string gpu_name(const GpuSeries& g) {
  const std::string id = g.uuid.empty() ? std::to_string(g.index) : g.uuid;
  return g.node.empty() ? "GPU " + id : fmt::format("GPU {} of node '{}'", id, g.node);
}

// A warning about a run. The configuration it names is the one the run is placed in, known only
// once every run is summarized (its ranks may move it from its stated world size, a split tag its
// label, other systems its curve's name): analyze_study names it on every warning the run gives.
Diagnostic run_warning(const Run& run, std::string code, std::string message, Severity sev = Severity::warning) {
  return {sev, std::move(code), std::move(message), run.path, 0, {}};
}

// Ranks are numbered 0..N-1: a rank at or past the run's world size, or a trace recorded in a
// larger world, means the stated world size is wrong or the files are of several runs. Kept at its
// stated 4 GPUs, 8 ranks' epochs read as 200% efficient beside the warning. The ranks in its files
// are what ran: the run is placed at the least world size they allow (its highest rank + 1), and the
// warning says so. A trace's distributedInfo.world_size is a statement like the manifest's, not a
// rank seen: alone, it is said and moves nothing. Runs formed from traces alone say it as
// `missing-ranks`.
// What shows them, unformatted: the world size to place the run at is wanted apart from the
// warning (placed_world_size, for --batch-per-gpu), which is written only where it is given.
struct RanksBeyond {
  struct Shown {
    const char* what;  // "epochs", "traces" …
    int first, last;   // its lowest and highest rank
  };
  int stated = 0;
  std::vector<Shown> shown;         // the files with a rank at or past the stated world size
  std::optional<int> trace_world;   // the largest distributedInfo.world_size past it
  std::vector<int> beyond;          // the ranks seen at or past it, in order
  std::optional<int> placed_at() const { return beyond.empty() ? std::nullopt : std::optional<int>(beyond.back() + 1); }
};
std::optional<RanksBeyond> ranks_beyond_world_size(const Run& run) {
  if (!run.world_size || run.format == "kineto") return std::nullopt;
  RanksBeyond b;
  b.stated = *run.world_size;
  std::set<int> seen;
  auto note_ranks = [&](const char* what, const std::set<int>& ranks) {
    if (ranks.empty() || *ranks.rbegin() < b.stated) return;
    seen.insert(ranks.begin(), ranks.end());
    b.shown.push_back({what, *ranks.begin(), *ranks.rbegin()});
  };
  std::set<int> ranks;
  for (const auto& e : run.epochs) ranks.insert(e.rank);
  note_ranks("epochs", ranks);
  ranks.clear();
  for (const auto& s : run.steps) ranks.insert(s.rank);
  if (run.step_table)
    for (const auto& c : run.step_table->ranks) ranks.insert(c.rank);
  note_ranks("steps", ranks);
  ranks.clear();
  // A launcher's wrappers record one per node, numbered by node: not the training's ranks.
  if (run.launcher.empty())
    for (const auto& rk : run.ranks) ranks.insert(rk.rank);
  note_ranks("rank records", ranks);
  ranks.clear();
  for (const auto& r : run.breakdown)
    if (!r.from_mpi) {
      ranks.insert(r.rank);
      if (r.world_size && *r.world_size > b.stated) b.trace_world = std::max(b.trace_world.value_or(0), *r.world_size);
    }
  note_ranks("traces", ranks);
  ranks.clear();
  for (const auto& r : run.breakdown)
    if (r.from_mpi) ranks.insert(r.rank);
  note_ranks("comm/ records", ranks);
  if (b.shown.empty() && !b.trace_world) return std::nullopt;
  b.beyond.assign(seen.lower_bound(b.stated), seen.end());
  return b;
}

// The world size the run is placed at, as ranks_beyond_world_size found it.
std::optional<int> placed_world_size(const Run& run, const std::optional<RanksBeyond>& beyond) {
  return beyond && beyond->placed_at() ? beyond->placed_at() : run.world_size;
}

// The run's `ranks-beyond-world-size`, its counts in the study's unit (GPUs, or ranks where no run
// used a GPU).
Diagnostic ranks_beyond_warning(const Run& run, const RanksBeyond& b, const std::string& unit) {
  std::string what;
  for (const auto& s : b.shown) what += fmt::format("{}{} of ranks {}–{}", what.empty() ? "" : ", ", s.what, s.first, s.last);
  if (b.trace_world)
    what += fmt::format("{}traces recorded in a world of {} (distributedInfo.world_size)", what.empty() ? "" : ", ", *b.trace_world);
  const std::string placed = b.placed_at()
                                 ? fmt::format("The run is placed at the {} its ranks show, not its stated {}", count_of(*b.placed_at(), unit), b.stated)
                                 : fmt::format("The run stays at its stated {}, which its ranks fill, so its "
                                               "speedup and efficiency may be overstated", count_of(b.stated, unit));
  return run_warning(run, "ranks-beyond-world-size",
                     fmt::format("the run's world size is {}, but its files show more ({}{}{}): the world size is wrong, or "
                                 "the files are of several runs. {}; correct world_size in its scalelens.json, or keep "
                                 "other runs' files out of its folder",
                                 b.stated, what, b.beyond.empty() ? "" : "; ranks beyond it: ", list_ranks(b.beyond, b.beyond.size()),
                                 placed));
}

// GPUs logged other than the run's: an nvidia-smi log of a whole node (no -i) counts GPUs the run
// did not use, whose idle time lowers the utilization and whose draw adds to the energy (a 1-GPU
// run on a 4-GPU node read 24% busy); fewer GPUs, or GPUs without power readings ([Not
// Supported]), leave part of the run's energy out. Either way the figures are not the run's
// GPUs', which must be said. itwinai's own partial logging is said where its energy is
// extrapolated (summarize_run). Against the world size the run is placed at (above), which its GPU
// digest, made as its GPU log was read, may not yet have known.
std::optional<Diagnostic> gpus_against_world_size(const Run& run, int world_size, const GpuDigest& digest) {
  const GpuFigures& figures = *digest.figures;
  const auto world = static_cast<std::size_t>(world_size);
  if (digest.gpus == 0 || run.format.rfind("itwinai", 0) == 0) return std::nullopt;
  if (digest.gpus > world)
    return run_warning(run, "gpus-beyond-world-size",
                       fmt::format("{} GPUs have samples where the run's world size is {}: its GPU utilization and energy "
                                   "include GPUs it may not have used (a log of a whole node? nvidia-smi -i, or scalelens "
                                   "run, logs the run's own)",
                                   digest.gpus, world));
  if (figures.energy_gpus < world && (figures.energy_j || figures.util_pct))
    return run_warning(run, "energy-from-some-gpus",
                       fmt::format("energy from {} of the run's {} GPUs ({} with samples{}): the others' draw is not in it, "
                                   "and nothing is extrapolated",
                                   figures.energy_gpus, world, digest.gpus,
                                   figures.energy_gpus < digest.gpus ? ", some without a power reading inside the run" : ""));
  return std::nullopt;
}

}  // namespace

// Epoch time of epoch e = max over the ranks that logged e of (end − start); its samples, the sum
// over them where every one gave some. Summed in the intervals' order, so that a table made where
// a run folder's files are merged (ingest) gives the figures tabulating them later would.
std::vector<EpochRow> tabulate_epochs(const std::vector<Interval>& epochs) {
  struct Sums {
    double seconds = 0, samples = 0;
    bool missing = false;
  };
  std::map<std::int64_t, Sums> by_index;
  for (const auto& e : epochs) {
    auto& s = by_index[e.index];
    s.seconds = std::max(s.seconds, e.seconds());
    if (e.samples) s.samples += *e.samples;
    else s.missing = true;
  }
  std::vector<EpochRow> rows;
  rows.reserve(by_index.size());
  for (const auto& [index, s] : by_index) rows.push_back({s.seconds, s.missing ? NanOptional() : NanOptional(s.samples)});
  return rows;
}

// Step time of step s = max over the ranks that logged s of (end − start), as the summary reads it;
// and the steps' extent and samples, for throughput over it (from the samples column, else the
// global batch and the step count).
StepTable tabulate_steps(const std::vector<Interval>& steps) {
  StepTable t;
  std::map<std::int64_t, double> slowest;
  double samples = 0;
  bool all_samples = !steps.empty();
  for (const auto& s : steps) {
    auto& v = slowest[s.index];
    v = std::max(v, s.seconds());
    t.begin_ns = std::min(t.begin_ns, s.start_ns);
    t.end_ns = std::max(t.end_ns, s.end_ns);
    if (s.samples) samples += *s.samples;
    else all_samples = false;
  }
  if (all_samples) t.samples = samples;
  t.slowest.reserve(slowest.size());
  for (const auto& [number, seconds] : slowest) t.slowest.push_back({number, seconds});
  return t;
}

std::vector<RankStepChart> rank_step_charts(const std::vector<Interval>& steps, std::optional<std::size_t> log_points) {
  std::map<int, std::vector<const Interval*>> by_rank;
  for (const auto& s : steps) by_rank[s.rank].push_back(&s);
  const std::size_t max_points = log_points ? chart_points_per_series(*log_points, by_rank.size()) : 0;
  std::vector<RankStepChart> out;
  out.reserve(by_rank.size());
  for (auto& [rank, list] : by_rank) {
    std::stable_sort(list.begin(), list.end(), [](auto* a, auto* b) { return a->index < b->index; });
    RankStepChart r{rank, list.size(), {}, std::vector<double>(list.size())};
    for (std::size_t i = 0; i < list.size(); ++i) r.ms[i] = list[i]->seconds() * 1000;
    r.mean_ms = mean_of(r.ms);
    if (!max_points) {  // every step: the times as they are
      for (const Interval* s : list) r.step.push_back(static_cast<double>(s->index));
    } else {
      const std::vector<std::size_t> keep = decimate_indices(list.size(), max_points, {&r.ms});
      std::vector<double> ms;
      ms.reserve(keep.size()), r.step.reserve(keep.size());
      for (std::size_t i : keep) r.step.push_back(static_cast<double>(list[i]->index)), ms.push_back(r.ms[i]);
      r.ms = std::move(ms);
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::vector<double> unwrap_counter(const std::vector<double>& v) {
  std::vector<double> out(v.size(), kNaN);
  double offset = 0, prev = kNaN;
  for (std::size_t i = 0; i < v.size(); ++i) {
    if (std::isnan(v[i])) continue;
    if (!std::isnan(prev) && v[i] < prev) offset += prev;  // reset: the counter restarted from 0
    prev = v[i];
    out[i] = v[i] + offset;
  }
  return out;
}

Integral integrate_samples(const std::vector<std::int64_t>& t_ns, const std::vector<double>& v, std::int64_t t0,
                           std::int64_t t1, std::int64_t max_gap_ns) {
  Integral r;
  std::int64_t prev_t = 0;
  double prev_v = kNaN;
  for (std::size_t i = 0; i < t_ns.size(); ++i) {
    if (std::isnan(v[i])) continue;
    if (!std::isnan(prev_v)) integrate_segment(r, prev_t, prev_v, t_ns[i], v[i], t0, t1, max_gap_ns);
    prev_t = t_ns[i];
    prev_v = v[i];
  }
  return r;
}

std::int64_t energy_gap_threshold_ns(const std::vector<std::int64_t>& t_ns, const std::vector<double>& v) {
  std::vector<std::int64_t> steps;
  std::int64_t prev = 0;
  bool have_prev = false;
  for (std::size_t i = 0; i < t_ns.size(); ++i) {
    if (std::isnan(v[i])) continue;
    // Hostile timestamps can be far apart: a difference or product past int64 saturates.
    std::int64_t step = 0;
    if (have_prev && t_ns[i] > prev)
      steps.push_back(__builtin_sub_overflow(t_ns[i], prev, &step) ? std::numeric_limits<std::int64_t>::max() : step);
    prev = t_ns[i];
    have_prev = true;
  }
  if (steps.size() < 2) return 0;
  auto mid = steps.begin() + static_cast<std::ptrdiff_t>(steps.size() / 2);
  std::nth_element(steps.begin(), mid, steps.end());
  std::int64_t threshold = 0;
  if (__builtin_mul_overflow(*mid, kEnergyGapIntervals, &threshold)) threshold = std::numeric_limits<std::int64_t>::max();
  return std::max(threshold, kEnergyGapMinNs);
}

void keep_top_losses(std::vector<OpLoss>& ops) {
  std::sort(ops.begin(), ops.end(), [](const OpLoss& a, const OpLoss& b) {
    return a.lost_us != b.lost_us ? a.lost_us > b.lost_us : std::tie(a.name, a.shapes) < std::tie(b.name, b.shapes);
  });
  if (ops.size() > 5) ops.resize(5);
}

std::vector<const RankBreakdown*> measured_breakdown(const Run& run) {
  const bool any_trace = std::any_of(run.breakdown.begin(), run.breakdown.end(), [](auto& b) { return !b.from_mpi; });
  std::vector<const RankBreakdown*> parts;
  for (const auto& b : run.breakdown)
    if (b.from_mpi == !any_trace) parts.push_back(&b);
  return parts;
}

std::optional<double> RunSummary::time_on(std::string_view basis) const {
  auto mean = [](const std::vector<double>& v) {
    double sum = 0;
    for (double x : v) sum += x;
    return sum / static_cast<double>(v.size());
  };
  if (basis == "epoch") return epoch_times_s.empty() ? std::nullopt : std::optional<double>(mean(epoch_times_s));
  if (basis == "run") return run_time_s;
  if (basis == "step") return step_times_s.empty() ? std::nullopt : std::optional<double>(mean(step_times_s));
  return std::nullopt;
}

namespace {

// The span a GPU's log is held against for a head or tail it did not measure (DESIGN.md,
// "Energy"): the run's start and end; where its source states not both (a hand-written manifest, a
// run killed before its end was written), the first start and last end of its epochs and steps
// stand in for what it lacks, where they are wall-clock times as the GPU logs' are (epochs.csv's
// and steps.csv's are Unix-epoch CLOCK_REALTIME; formats that give only durations start them at
// 0). The run began before its first epoch and ended after its last, so a log that misses part of
// them missed at least that part of the run. `stated`: from the run's own start and end.
struct CheckedSpan {
  std::int64_t t0 = 0, t1 = 0;
  bool stated = false;
};
std::optional<CheckedSpan> span_to_check(const Run& run) {
  if (run.start_ns && run.end_ns) {
    if (*run.end_ns <= *run.start_ns) return std::nullopt;
    return CheckedSpan{*run.start_ns, *run.end_ns, true};
  }
  std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = std::numeric_limits<std::int64_t>::min();
  auto add = [&](std::int64_t start, std::int64_t end) {
    if (!limits::wall_clock_ns(start) || !limits::wall_clock_ns(end)) return;
    first = std::min(first, start), last = std::max(last, end);
  };
  for (const auto* intervals : {&run.epochs, &run.steps})
    for (const Interval& i : *intervals) add(i.start_ns, i.end_ns);
  if (run.step_table && !run.step_table->slowest.empty()) add(run.step_table->begin_ns, run.step_table->end_ns);
  const std::int64_t t0 = run.start_ns.value_or(first), t1 = run.end_ns.value_or(last);
  if (!limits::wall_clock_ns(t0) || !limits::wall_clock_ns(t1) || t1 <= t0) return std::nullopt;
  return CheckedSpan{t0, t1, false};
}

}  // namespace

GpuDigest digest_gpus(const Run& run, const std::vector<GpuSeries>& gpus) {
  GpuDigest d;
  GpuFigures figures;
  // Each physical GPU counted once, whichever sources saw it.
  const std::int64_t run_t0 = run.start_ns.value_or(std::numeric_limits<std::int64_t>::min());
  const std::int64_t run_t1 = run.end_ns.value_or(std::numeric_limits<std::int64_t>::max());
  std::map<std::string, const GpuSeries*> chosen;
  // The figures of a GPU's further series that follow its first one in time (a log rotated or
  // restarted: two files one after the other), counted with it; and its first's, made to compare.
  std::map<std::string, std::vector<GpuSeriesFigures>> later;
  std::map<std::string, GpuSeriesFigures> first_figures;
  // A GPU known by node and index in one source (an nvidia-smi log queried without `uuid`) and by
  // its UUID in another of that node (gpu.csv names both) is one GPU: counted apart, a run's
  // energy doubled. The UUIDs each node's indexes have, to key such a GPU by its UUID.
  std::map<std::pair<std::string, int>, std::set<std::string>> uuids_at;
  for (const auto& g : gpus)
    if (!g.uuid.empty() && !g.node.empty()) uuids_at[{g.node, g.index}].insert(g.uuid);
  for (const auto& g : gpus) {
    // A UUID names one GPU wherever it is found: under two node folders (a log copied, or a node
    // named twice) it is the same GPU, which was counted twice.
    std::string key = g.uuid.empty() ? g.node + "/" + std::to_string(g.index) : "uuid " + g.uuid;
    if (auto at = g.uuid.empty() && !g.node.empty() ? uuids_at.find({g.node, g.index}) : uuids_at.end(); at != uuids_at.end()) {
      if (at->second.size() == 1) {
        key = "uuid " + *at->second.begin();
      } else {  // the node's sources give that index several UUIDs: which one it is cannot be told
        std::string listed;
        for (const auto& u : at->second) listed += (listed.empty() ? "" : ", ") + u;
        Diagnostic w = run_warning(run, "energy-double-counted",
                                   fmt::format("{} ({}) has no UUID, and other sources of that node give index {} the "
                                               "UUIDs {}: which GPU it is cannot be told, so it is counted apart, and "
                                               "its energy may be counted twice",
                                               gpu_name(g), g.source, g.index, listed));
        w.path = g.source;
        figures.warnings.push_back(std::move(w));
      }
    }
    auto [it, inserted] = chosen.emplace(key, &g);
    if (inserted) continue;
    // Two series of measured times that do not overlap are one GPU's log in two parts.
    const GpuSeries& first = *it->second;
    if (!g.nominal_timestamps && !first.nominal_timestamps && g.sample_count() > 0 && first.sample_count() > 0) {
      auto& pieces = later[key];
      auto [f0, fresh] = first_figures.try_emplace(key);
      if (fresh) f0->second = figures_of(first, run_t0, run_t1);
      GpuSeriesFigures fg = figures_of(g, run_t0, run_t1);
      auto apart_from = [&](const GpuSeriesFigures& o) { return fg.last_t_ns < o.first_t_ns || fg.first_t_ns > o.last_t_ns; };
      if (apart_from(f0->second) && std::all_of(pieces.begin(), pieces.end(), apart_from)) {
        pieces.push_back(fg);
        continue;
      }
    }
    figures.warnings.push_back(run_warning(run, "energy-double-counted",
                                     fmt::format("{} appears in two sources ({} and {}) whose samples overlap in time; it is "
                                                 "counted once, from the first",
                                                 gpu_name(g), it->second->source, g.source)));
  }
  const std::optional<CheckedSpan> checked = span_to_check(run);
  std::vector<UtilHistogram> util_times;  // each GPU's shares, for the run's utilization over time
  double energy = 0;
  bool any_energy = false, used_counter = false, used_power = false, nominal = false;
  std::size_t energy_gpus = 0;
  std::size_t min_samples = std::numeric_limits<std::size_t>::max();
  std::size_t outside = 0;  // GPUs with samples, none inside the run
  const GpuSeries* first_outside = nullptr;
  double gap_s = 0, longest_gap_s = 0;  // power-series time left out of energy (DESIGN.md, "Energy")
  std::size_t gap_gpus = 0;
  const GpuSeries* longest_gap_gpu = nullptr;
  // GPUs whose power readings inside the run span no time (all stamped at one instant): no energy.
  std::size_t timeless_gpus = 0;
  const GpuSeries* first_timeless_gpu = nullptr;
  std::size_t first_timeless_readings = 0;
  // GPUs whose energy counter holds one value all through its log while power gave their energy.
  std::size_t stuck_gpus = 0;
  const GpuSeries* first_stuck_gpu = nullptr;
  double first_stuck_mj = 0;
  bool first_stuck_all_through = true;  // else stuck over the run alone
  for (const auto& [key, g] : chosen) {
    GpuSeriesFigures f = first_figures.contains(key) ? first_figures[key] : figures_of(*g, run_t0, run_t1);
    if (auto& pieces = later[key]; !pieces.empty()) {
      // Joined in time order (files are read in name order: a rotated nvsmi.log is the newest), so
      // that each stretch between two files is the one between neighbours in time.
      pieces.push_back(f);
      std::sort(pieces.begin(), pieces.end(), [](const GpuSeriesFigures& x, const GpuSeriesFigures& y) { return x.first_t_ns < y.first_t_ns; });
      f = pieces.front();
      for (std::size_t i = 1; i < pieces.size(); ++i) f = one_after_another(f, pieces[i], run_t0, run_t1);
    }
    if (f.peak_mem_bytes) figures.peak_mem_bytes = std::max(figures.peak_mem_bytes.value_or(0.0), *f.peak_mem_bytes);
    nominal |= g->nominal_timestamps;
    // A GPU with samples, none inside the run, is said apart (below), not as coarse sampling.
    if (f.samples_inside == 0 && g->sample_count() > 0 && !g->nominal_timestamps && run.start_ns) {
      if (outside++ == 0) first_outside = g;
    } else {
      min_samples = std::min(min_samples, f.samples_inside);
    }
    if (f.util_pct) {
      if (!figures.util_pct) figures.util_pct = RangeStat{0, *f.util_pct, *f.util_pct};
      RangeStat& u = *figures.util_pct;
      u.mean += *f.util_pct;  // summed here, divided by the GPUs below
      u.min = std::min(u.min, *f.util_pct);
      u.max = std::max(u.max, *f.util_pct);
      util_times.push_back(util_shares(f.util_time));
    }
    if (g->nominal_timestamps) {
      // Each sample stands for one probing interval: the run's, else the series' own spacing.
      const double dt = run.sampling_interval_s && *run.sampling_interval_s > 0 ? *run.sampling_interval_s : f.spacing_s;
      if (f.power_samples && dt > 0) {
        energy += f.power_sum_w * dt;
        any_energy = used_power = true;
        ++energy_gpus;
      }
      continue;
    }
    if (f.impossible_counter_mj) {
      Diagnostic w = run_warning(
          run, "implausible-value",
          fmt::format("energy_mj of {} jumps to {:.6g} mJ at t_ns {}, more than {:g} W per GPU allows since the "
                      "reading before; its energy counter is left out and its energy taken from power_w where it has it",
                      gpu_name(*g), *f.impossible_counter_mj,
                      f.impossible_counter_t_ns, limits::kMaxGpuPowerW));
      w.path = g->source;
      figures.warnings.push_back(std::move(w));
    }
    // Stuck all through its log, or only over the window (moving outside it: held_still).
    const bool stuck_all_through = !std::isnan(f.first_counter_mj) && f.first_counter_mj == f.last_counter_mj &&
                                   f.first_counter_t_ns < f.last_counter_t_ns;
    if (f.energy_from == GpuSeriesFigures::EnergyFrom::power && !f.impossible_counter_mj && f.energy_j > 0 &&
        (stuck_all_through || f.counter_use == GpuSeriesFigures::CounterUse::held_still) && stuck_gpus++ == 0)
      first_stuck_gpu = g, first_stuck_mj = f.first_counter_mj, first_stuck_all_through = stuck_all_through;
    if (f.energy_from != GpuSeriesFigures::EnergyFrom::none) {
      energy += f.energy_j;
      any_energy = true;
      (f.energy_from == GpuSeriesFigures::EnergyFrom::counter ? used_counter : used_power) = true;
      ++energy_gpus;
    }
    // Timings of the run's own (no stated start and end) on another clock than the log's share no
    // time with it: which part of them it missed cannot be told.
    if (f.energy_from != GpuSeriesFigures::EnergyFrom::none && checked &&
        (checked->stated || (f.last_t_ns >= checked->t0 && f.first_t_ns <= checked->t1))) {
      // A log that begins after the run's start or ends before its end (the sampler started late or
      // died, a node's log was lost) measures none of that head or tail: left out as a gap is, and
      // said with the gaps, beyond the sampler's own lag (its interval twice, and 1 s). The counter
      // covers from its first reading to its last (one before or after the window covers its end);
      // power from the first sample to the last (power missing within them is counted above).
      const bool by_counter = f.counter_use == GpuSeriesFigures::CounterUse::measured_all &&
                              !std::isnan(f.first_counter_mj) && !std::isnan(f.last_counter_mj);
      const std::int64_t from = by_counter ? f.first_counter_t_ns : f.first_t_ns;
      const std::int64_t to = by_counter ? f.last_counter_t_ns : f.last_t_ns;
      const double interval_s = run.sampling_interval_s && *run.sampling_interval_s > 0 ? *run.sampling_interval_s : f.spacing_s;
      const double lag_s = std::max(kEnergyEdgeIntervals * interval_s, kEnergyGapMinNs * 1e-9);
      const double head_s = limits::span_s(checked->t0, std::clamp(from, checked->t0, checked->t1));
      const double tail_s = limits::span_s(std::clamp(to, checked->t0, checked->t1), checked->t1);
      for (const double edge_s : {head_s, tail_s})
        if (edge_s > lag_s) f.skipped_s += edge_s, f.longest_skipped_s = std::max(f.longest_skipped_s, edge_s);
    }
    if (f.energy_from == GpuSeriesFigures::EnergyFrom::none && f.power_samples > 0 && f.skipped_s == 0 &&
        timeless_gpus++ == 0)
      first_timeless_gpu = g, first_timeless_readings = f.power_samples;
    if (f.skipped_s > 0) {
      gap_s += f.skipped_s;
      ++gap_gpus;
      if (f.longest_skipped_s > longest_gap_s) {
        longest_gap_s = f.longest_skipped_s;
        longest_gap_gpu = g;
      }
    }
  }
  d.gpus = chosen.size();
  if (figures.util_pct) {
    figures.util_pct->mean /= static_cast<double>(util_times.size());
    std::vector<const UtilHistogram*> each;
    for (const auto& h : util_times) each.push_back(&h);
    if (auto mean = mean_of_shares(each))
      figures.util_time_share = std::make_shared<const SparseUtilHistogram>(SparseUtilHistogram::of(*mean));
  }
  if (any_energy) {
    figures.energy_j = energy;
    figures.energy_from = used_counter && used_power ? "counter+power" : used_counter ? "counter" : "power";
    figures.energy_gpus = energy_gpus;
    figures.energy_j_per_gpu = energy / static_cast<double>(energy_gpus);
  }
  // GPUs with samples, none inside the run: a log of another time (nvidia-smi stamps the node's
  // local time, read as UTC) or of another job. "Only 0 samples: sample more often" misled.
  if (outside > 0) {
    const double hours = static_cast<double>(first_outside->first_t_ns() - *run.start_ns) / 3.6e12;
    Diagnostic w = run_warning(
        run, "gpu-samples-outside-run",
        fmt::format("{} of {} GPUs have samples, none inside the run ({} begins {:.2f} h {} the run's start): no "
                    "utilization or energy from {}; a log of another job, or one stamped in another time zone (nvidia-smi "
                    "writes the node's local time, read as UTC: run it with TZ=UTC)",
                    outside, chosen.size(), gpu_name(*first_outside), std::abs(hours), hours >= 0 ? "after" : "before",
                    outside == 1 ? "it" : "them"));
    w.path = first_outside->source;
    figures.warnings.push_back(std::move(w));
  }
  if (min_samples < 20)
    figures.warnings.push_back(run_warning(run, "coarse-sampling",
                                     fmt::format("a GPU has only {} sample{} inside the run (fewer than 20): utilization and energy "
                                                 "are rough; sample more often (scalelens run --interval)",
                                                 min_samples, min_samples == 1 ? "" : "s")));
  if (gap_gpus > 0)
    figures.warnings.push_back(run_warning(
        run, "energy-gaps",
        fmt::format("{:.1f} s of GPU time (summed over {} GPU{}) left out of the energy: power samples stop for longer "
                    "than {} sampling intervals, stop while its other readings go on, stop between a GPU's log files with "
                    "no counter that goes on across, or begin after the run's start or end before its end (the logger "
                    "paused, started late or was restarted, the node was drained, nvidia-smi read [GPU is lost]?); the "
                    "longest gap, {:.1f} s, "
                    "is {} in {}",
                    gap_s, gap_gpus, gap_gpus == 1 ? "" : "s", kEnergyGapIntervals, longest_gap_s,
                    gpu_name(*longest_gap_gpu), longest_gap_gpu->source)));
  if (stuck_gpus > 0) {
    Diagnostic w = run_warning(
        run, "energy-counter-stuck",
        first_stuck_all_through
            ? fmt::format("the energy counter (energy_mj) of {} holds one value all through the log while power_w "
                          "shows drawing ({}: {:.10g} mJ on every reading): stuck, it measured nothing; the energy is "
                          "taken from power_w",
                          count_of(static_cast<long long>(stuck_gpus), "GPUs"), gpu_name(*first_stuck_gpu), first_stuck_mj)
            : fmt::format("the energy counter (energy_mj) of {} holds one value all through the run while power_w "
                          "shows drawing, though it moves before or after the run ({}: one value on every reading "
                          "inside the run): stuck, it measured nothing of the run; the energy is taken from power_w",
                          count_of(static_cast<long long>(stuck_gpus), "GPUs"), gpu_name(*first_stuck_gpu)));
    w.path = first_stuck_gpu->source;
    figures.warnings.push_back(std::move(w));
  }
  if (timeless_gpus > 0) {
    Diagnostic w = run_warning(
        run, "energy-no-time",
        fmt::format("{} GPU{} left out of the energy: {} power readings inside the run lie at one instant "
                    "({}: {} reading{}), and an energy needs readings spread over time",
                    timeless_gpus, timeless_gpus == 1 ? "" : "s", timeless_gpus == 1 ? "its" : "their",
                    gpu_name(*first_timeless_gpu), first_timeless_readings, first_timeless_readings == 1 ? "" : "s"));
    w.path = first_timeless_gpu->source;
    figures.warnings.push_back(std::move(w));
  }
  if (nominal)
    figures.warnings.push_back(run_warning(run, "nominal-timestamps",
                                     "GPU sample times were rebuilt from sample index × probing interval, not measured; "
                                     "energy counts each sample for one probing interval (as itwinai does), assuming "
                                     "the sampler kept its interval exactly",
                                     Severity::note));

  std::set<std::string> nodes;
  for (const auto& g : gpus) {
    nodes.insert(g.node);
    ++(g.uuid.empty() ? d.by_index : d.with_uuid);
    if (figures.name.empty()) figures.name = g.name;
  }
  figures.nodes.assign(nodes.begin(), nodes.end());
  d.figures = std::make_shared<const GpuFigures>(std::move(figures));
  return d;
}

namespace {

// Why a run failed ("" when it did not) and the exit status it gets: its own where not 0 (MLPerf's
// run_stop "aborted", MLflow FAILED/KILLED, as the readers state it), else that of the
// lowest-numbered rank whose record has one (the manifest holds rank 0's alone), so that a run
// said to have failed never reads exit status 0.
struct Failure {
  std::string how;
  std::optional<int> exit_status;
};

Failure failure_of(const Run& run) {
  if (run.exit_status && *run.exit_status != 0) {
    const auto from = run.detected_from.find("exit_status");
    return {from != run.detected_from.end() ? from->second : fmt::format("exit status {}", *run.exit_status), run.exit_status};
  }
  const RankRecord* first = nullptr;
  std::size_t failed_ranks = 0;
  for (const auto& rk : run.ranks)
    if (rk.exit_status && *rk.exit_status != 0 && (++failed_ranks, !first || rk.rank < first->rank)) first = &rk;
  if (!first) return {"", run.exit_status};
  std::string how = fmt::format("rank {} exited with status {}", first->rank, *first->exit_status);
  if (failed_ranks > 1) how += fmt::format(", and {} more rank{}", failed_ranks - 1, failed_ranks == 2 ? "" : "s");
  return {how, first->exit_status};
}

}  // namespace

std::optional<int> placed_world_size(const Run& run) { return placed_world_size(run, ranks_beyond_world_size(run)); }

RunSummary summarize_run(const Run& run, const AnalysisOptions& options, std::vector<Diagnostic>& warnings,
                         const std::string& unit) {
  RunSummary r;
  r.run_id = run.run_id;
  // Spaces around a label or system are no part of its identity ("juwels " is juwels): a run
  // written so was a curve of its own, its rows looking like another's.
  r.label = trim(run.label);
  r.path = run.path;
  r.format = run.format;
  r.system = trim(run.system);
  for (const auto& [what, written, read] : {std::tuple{"label", &run.label, &r.label}, std::tuple{"system", &run.system, &r.system}})
    if (written->size() != read->size())
      warnings.push_back({Severity::note, "name-trimmed",
                          fmt::format("{} '{}' read as '{}': spaces around a name are no part of it", what, *written, *read),
                          run.path, 0, {}});
  if (const RunDetails& d = run.details();
      !d.benchmark.empty() || !d.division.empty() || !d.instance_of.empty() || d.instance_id || d.profiler_averages) {
    RunSummaryDetails& to = r.details_to_fill();
    to.benchmark = d.benchmark;
    to.division = d.division;
    to.instance_of = d.instance_of;
    to.instance_id = d.instance_id;
    to.profiler_averages = d.profiler_averages;
  }
  const auto beyond = ranks_beyond_world_size(run);
  r.world_size = placed_world_size(run, beyond);
  r.world_size_from_ranks = beyond && beyond->placed_at();
  r.nodes = run.nodes;
  r.gpus_per_node = run.gpus_per_node;
  r.global_batch_size = run.global_batch_size;
  r.gpu_model = run.gpu_model;
  // Its GPUs summarized: where they were read, else here (one function either way).
  std::optional<GpuDigest> digested_here;
  if (!run.gpu_digest) digested_here = digest_gpus(run, run.gpus);
  const GpuDigest& digest = run.gpu_digest ? *run.gpu_digest : *digested_here;
  if (!digest.figures)
    throw std::logic_error("the GPU figures of run '" + run.run_id + "' were let go when it was summarized");
  const GpuFigures& gpus = *digest.figures;
  // Without a declared model, the GPUs' own names (nvidia-smi's `name`) say what ran.
  if (r.gpu_model.empty()) r.gpu_model = gpus.name;
  // A run that failed ran for no whole training: its span is no run time. Its whole epochs were
  // timed as any others.
  const auto [how, exit_status] = failure_of(run);
  r.exit_status = exit_status;
  const bool failed = !how.empty();
  if (failed) {
    warnings.push_back(run_warning(run, "failed-run",
                                   fmt::format("the run failed ({}): its span is not a whole training's, so it has no run "
                                               "time; its whole epochs, if any, are timed as others",
                                               how)));
  }
  if (run.start_ns && run.end_ns && !failed) {
    // Each reader refuses an end not after its start; a run's start and end may still come from
    // two files (a manifest's start, an MLPerf log's run_stop).
    if (*run.end_ns > *run.start_ns) r.run_time_s = limits::span_s(*run.start_ns, *run.end_ns);
    else
      warnings.push_back(run_warning(run, "implausible-value",
                                     fmt::format("the run ends (end_ns {}) {} it starts (start_ns {}), as its files state "
                                                 "them together; its run time is left out",
                                                 *run.end_ns, *run.end_ns == *run.start_ns ? "when" : "before", *run.start_ns)));
  }

  // Epochs, with the first `warmup_epochs` left out when the run has more than that.
  // Held as a table once a run folder's files are merged (ingest), else tabulated here.
  std::vector<EpochRow> tabulated;
  const std::vector<EpochRow>& table = run.epochs.empty() ? run.epoch_table : (tabulated = tabulate_epochs(run.epochs));
  r.epochs_logged = table.size();
  std::size_t skip = 0;
  if (options.warmup_epochs > 0 && r.epochs_logged > 0) {
    if (r.epochs_logged > static_cast<std::size_t>(options.warmup_epochs)) {
      skip = static_cast<std::size_t>(options.warmup_epochs);
    } else {
      warnings.push_back(run_warning(run, "warmup-not-excluded",
                                     fmt::format("the run logged {} epoch{}, so the {} warm-up epoch{} could not be left out; "
                                                 "its epoch time includes start-up costs",
                                                 r.epochs_logged, r.epochs_logged == 1 ? "" : "s", options.warmup_epochs,
                                                 options.warmup_epochs == 1 ? "" : "s")));
    }
  }
  r.warmup_excluded = skip;
  double kept_seconds = 0, kept_samples = 0;
  bool kept_have_samples = true;
  std::size_t i = 0;
  // Exactly the epochs kept: a study holds one such list per run summary, and growing it by
  // doubling left up to half of its block unused (issue 17, part 2).
  r.epoch_times_s.reserve(table.size() - std::min(skip, table.size()));
  for (const auto& epoch : table) {
    if (i++ < skip) continue;
    r.epoch_times_s.push_back(epoch.seconds);
    kept_seconds += epoch.seconds;
    if (epoch.samples) kept_samples += *epoch.samples;
    else kept_have_samples = false;
  }

  // Step time: per step number, the slowest rank's duration; the profiler's steps where the run
  // has traces, else the steps the program logged (steps.csv). Only the steps every traced rank
  // profiled: one that some did not has no slowest rank to tell.
  std::map<std::int64_t, double> slowest_step_s;
  const std::vector<const RankBreakdown*> parts = measured_breakdown(run);
  std::vector<std::pair<int, const std::vector<std::int64_t>*>> steps_of;
  for (const auto* b : parts)
    if (!b->from_mpi) steps_of.emplace_back(b->rank, &b->step_numbers);
  const auto alignment = trace::align_steps(steps_of);
  if (!alignment.misaligned.empty())
    warnings.push_back(run_warning(run, "misaligned-steps",
                                   alignment.misaligned + " (the step time, the straggler spread and the collectives' wait)"));
  for (const auto* b : parts) {
    if (b->from_mpi || b->step_ids.size() != b->step_times_us.size()) continue;
    for (std::size_t k = 0; k < b->step_ids.size(); ++k) {
      if (!alignment.common.count(b->step_ids[k])) continue;
      auto& s = slowest_step_s[b->step_ids[k]];
      s = std::max(s, b->step_times_us[k] * 1e-6);
    }
  }
  // steps.csv: held as a table once a run folder's only step log is read (ingest), else tabulated here.
  StepTable tabulated_steps;
  const StepTable& steps = run.step_table ? *run.step_table : (tabulated_steps = tabulate_steps(run.steps));
  const bool steps_from_traces = !slowest_step_s.empty();
  if (slowest_step_s.empty())
    for (const auto& row : steps.slowest) slowest_step_s.emplace_hint(slowest_step_s.end(), row.number, row.seconds);
  r.steps_timed = slowest_step_s.size();
  const bool time_is_steps = r.epochs_logged == 0 && !r.run_time_s;
  std::size_t skip_steps = 0;
  if (options.warmup_steps > 0 && r.steps_timed > 0) {
    if (r.steps_timed > static_cast<std::size_t>(options.warmup_steps))
      skip_steps = static_cast<std::size_t>(options.warmup_steps);
    else if (time_is_steps)
      warnings.push_back(run_warning(run, "warmup-not-excluded",
                                     fmt::format("the run has {} timed step{}, so the {} warm-up step{} could not be left out; "
                                                 "its step time may include start-up costs (profile more steps, e.g. "
                                                 "schedule(wait=1, warmup=1, active=5))",
                                                 r.steps_timed, r.steps_timed == 1 ? "" : "s", options.warmup_steps,
                                                 options.warmup_steps == 1 ? "" : "s")));
  }
  r.warmup_steps_excluded = skip_steps;
  // The profiled steps the step time is measured over: the lost-time account explains these alone.
  std::set<std::int64_t> timed_trace_steps;
  r.step_times_s.reserve(slowest_step_s.size() - std::min(skip_steps, slowest_step_s.size()));  // exactly, as the epochs
  for (const auto& [number, secs] : slowest_step_s)
    if (skip_steps > 0) --skip_steps;
    else {
      r.step_times_s.push_back(secs);
      if (steps_from_traces) timed_trace_steps.insert(number);
    }

  // Throughput, from the best source there is (DESIGN.md, "Throughput").
  const std::int64_t steps_begin = steps.begin_ns, steps_end = steps.end_ns;
  if (!r.epoch_times_s.empty() && kept_have_samples && kept_seconds > 0) {
    r.throughput_samples_per_s = kept_samples / kept_seconds;
    r.throughput_from = "samples column";
  } else if (!steps.slowest.empty() && steps.samples && steps_end > steps_begin) {
    r.throughput_samples_per_s = *steps.samples / (static_cast<double>(steps_end - steps_begin) * 1e-9);
    r.throughput_from = "samples column";
  } else if (!r.epoch_times_s.empty() && run.samples_per_epoch && kept_seconds > 0) {
    r.throughput_samples_per_s = *run.samples_per_epoch * static_cast<double>(r.epoch_times_s.size()) / kept_seconds;
    r.throughput_from = "samples_per_epoch";
  } else if (!steps.slowest.empty() && run.global_batch_size && steps_end > steps_begin) {
    r.throughput_samples_per_s = *run.global_batch_size * static_cast<double>(steps.slowest.size()) /
                                 (static_cast<double>(steps_end - steps_begin) * 1e-9);
    r.throughput_from = "global_batch_size x steps";
  } else if (!r.step_times_s.empty() && run.global_batch_size && time_is_steps) {
    double sum = 0;
    for (double s : r.step_times_s) sum += s;
    if (sum > 0) {
      r.throughput_samples_per_s = *run.global_batch_size * static_cast<double>(r.step_times_s.size()) / sum;
      r.throughput_from = "global_batch_size / step time";
    }
  }
  // A declared global batch that the steps' samples column contradicts (by more than the one short
  // last batch a loader may give): one of them is not this run's; the logged samples are counted.
  if (!steps.slowest.empty() && steps.samples && run.global_batch_size && *run.global_batch_size > 0) {
    const double declared = *run.global_batch_size * static_cast<double>(steps.slowest.size());
    if (std::abs(declared - *steps.samples) >= *run.global_batch_size)
      warnings.push_back(run_warning(
          run, "batch-disagrees-with-samples",
          fmt::format("global_batch_size {:g} x {} steps is {:g} samples, but its steps.csv samples column sums to {:g} "
                      "({:.4g} a step): the run's throughput and samples count the logged samples, not the declared batch",
                      *run.global_batch_size, steps.slowest.size(), declared, *steps.samples,
                      *steps.samples / static_cast<double>(steps.slowest.size()))));
  }
  // A declared samples_per_epoch that epochs.csv's samples column contradicts, the same way: by a
  // (short last) global batch an epoch or more where the batch is declared, else by 1% or more (a
  // last batch's share of any real epoch); the logged samples are counted (throughput above).
  if (run.samples_per_epoch && *run.samples_per_epoch > 0) {
    double logged = 0;
    std::size_t with_samples = 0;
    for (const auto& e : table)
      if (e.samples) {
        logged += *e.samples;
        ++with_samples;
      }
    const double epochs = static_cast<double>(with_samples);
    const double declared = *run.samples_per_epoch * epochs;
    const double slack = run.global_batch_size && *run.global_batch_size > 0 ? *run.global_batch_size * epochs : 0.01 * declared;
    const double off = std::abs(declared - logged);
    if (with_samples > 0 && off > 0 && off >= slack)
      warnings.push_back(run_warning(
          run, "batch-disagrees-with-samples",
          fmt::format("samples_per_epoch {:g} x {} epoch{} is {:g} samples, but its epochs.csv samples column sums to {:g} "
                      "({:.4g} an epoch): the run's throughput and samples count the logged samples, not the declared figure",
                      *run.samples_per_epoch, with_samples, with_samples == 1 ? "" : "s", declared, logged, logged / epochs)));
  }
  // Samples processed in the whole run, for energy per sample (energy covers the whole run).
  if (!table.empty() && std::all_of(table.begin(), table.end(), [](const EpochRow& e) { return e.samples.has_value(); })) {
    double total = 0;
    for (const auto& e : table) total += *e.samples;
    r.samples = total;
  } else if (!steps.slowest.empty() && steps.samples) {
    r.samples = *steps.samples;
  } else if (!table.empty() && run.samples_per_epoch) {
    r.samples = *run.samples_per_epoch * static_cast<double>(table.size());
  } else if (!steps.slowest.empty() && run.global_batch_size) {
    r.samples = *run.global_batch_size * static_cast<double>(steps.slowest.size());
  }

  // GPUs (above): each physical GPU counted once, whichever sources saw it.
  r.peak_gpu_memory_bytes = gpus.peak_mem_bytes;
  r.gpus = digest.gpus;
  if (gpus.util_pct) {
    r.gpu_util_pct = gpus.util_pct;
    r.gpu_util_time_share = gpus.util_time_share;
    if (r.gpu_util_time_share) r.gpu_util_percentiles = percentiles_of(r.gpu_util_time_share->dense());
  }
  if (gpus.energy_j) {
    r.energy_j = gpus.energy_j;
    r.energy_from = gpus.energy_from;
    r.energy_gpus = gpus.energy_gpus;
    r.energy_j_per_gpu = gpus.energy_j_per_gpu;
    // itwinai logs GPU metrics only on the ranks of `log_on_workers` (rank 0 by default), one GPU
    // each: the job's energy is then the measured GPUs' mean times the GPUs the run is placed at
    // (its ranks', where they go beyond its stated world size), marked as such.
    if (run.format.rfind("itwinai", 0) == 0 && r.world_size && gpus.energy_gpus < static_cast<std::size_t>(*r.world_size)) {
      r.energy_extrapolated = true;
      r.energy_j = *gpus.energy_j_per_gpu * *r.world_size;
      warnings.push_back(run_warning(
          run, "partial-gpu-data",
          fmt::format("GPU data for {} of {} GPUs (itwinai logs GPU metrics only on the ranks in log_on_workers, rank 0 "
                      "by default): GPU utilization is theirs; energy is {:.4g} Wh per GPU measured, and the job's "
                      "{:.4g} Wh is extrapolated (x {} GPUs, as if each drew as much)",
                      gpus.energy_gpus, *r.world_size, *gpus.energy_j_per_gpu / 3600, *r.energy_j / 3600, *r.world_size)));
    }
    if (r.samples && *r.samples > 0) r.energy_j_per_sample = *r.energy_j / *r.samples;
  }
  warnings.insert(warnings.end(), gpus.warnings.begin(), gpus.warnings.end());
  if (r.world_size)
    if (auto w = gpus_against_world_size(run, *r.world_size, digest)) warnings.push_back(std::move(*w));

  // Host CPU energy, per node from its package-energy counter.
  const std::int64_t run_t0 = run.start_ns.value_or(std::numeric_limits<std::int64_t>::min());
  const std::int64_t run_t1 = run.end_ns.value_or(std::numeric_limits<std::int64_t>::max());
  double host_energy = 0;
  bool any_host = false;
  for (const auto& h : run.host_series)
    if (auto e = host_series_energy_j(h, run_t0, run_t1)) {
      host_energy += *e;
      any_host = true;
    }
  if (any_host) r.host_energy_j = host_energy;

  // More ranks than CPUs on a node: ranks share cores, so time and speedup are not what the
  // hardware could do with one core per rank. More ranks than the GPUs its nodes have (world_size 8
  // on 2 nodes × 2 GPUs): its world size, nodes or gpus_per_node is wrong, and with it where the
  // run stands on its curve, or ranks share GPUs.
  if (r.world_size) {
    const int nodes = run.nodes.value_or(1);
    const int per_node = (*r.world_size + nodes - 1) / nodes;
    if (run.cpus_per_node && per_node > *run.cpus_per_node)
      warnings.push_back(run_warning(run, "oversubscribed",
                                     fmt::format("{} ranks per node on {} logical CPUs: ranks share cores, so its time and "
                                                 "speedup understate what one core per rank would give",
                                                 per_node, *run.cpus_per_node)));
    if (run.gpus_per_node && per_node > *run.gpus_per_node)
      warnings.push_back(run_warning(
          run, "world-size-beyond-gpus",
          fmt::format("the run's world size is {}, but its scalelens.json says {} node{} × {} GPUs per node = {} GPUs: "
                      "its world size, nodes or gpus_per_node is wrong, or ranks share GPUs; it is placed at world size {}",
                      *r.world_size, nodes, nodes == 1 ? "" : "s", *run.gpus_per_node, nodes * *run.gpus_per_node,
                      *r.world_size)));
  }

  // Missing ranks or nodes: the run says how many there should be. Wrappers around a launcher
  // are one per node, and each writes one record for the ranks its launcher started.
  if (r.world_size && !run.ranks.empty()) {
    std::set<int> ranks;
    for (const auto& rk : run.ranks) ranks.insert(rk.rank);
    const bool wrappers = !run.launcher.empty();
    const int expected = wrappers ? run.nodes.value_or(1) : *r.world_size;
    if (static_cast<int>(ranks.size()) < expected)
      warnings.push_back(run_warning(
          run, "missing-ranks",
          wrappers ? fmt::format("{} of {} nodes' wrappers (scalelens run around {}) left a rank record; the others may have "
                                 "failed to start",
                                 ranks.size(), expected, run.launcher)
                   : fmt::format("{} of {} ranks left a rank record; the others may have failed to start", ranks.size(),
                                 expected)));
  }
  if (beyond) warnings.push_back(ranks_beyond_warning(run, *beyond, unit));
  if (run.nodes && (run.has_gpus() || !run.host_series.empty())) {
    std::set<std::string> nodes(gpus.nodes.begin(), gpus.nodes.end());
    for (const auto& h : run.host_series) nodes.insert(h.node);
    if (static_cast<int>(nodes.size()) < *run.nodes)
      warnings.push_back(run_warning(run, "missing-nodes",
                                     fmt::format("samples from {} of {} nodes; GPU utilization and energy cover only those",
                                                 nodes.size(), *run.nodes)));
  }

  // Trace breakdown summed over ranks and steps (`parts`: the ranks' breakdowns, above).
  const bool any_trace = !parts.empty() && !parts.front()->from_mpi;
  if (!parts.empty()) {
    RunTraceFigures& t = r.trace_to_fill();
    // Shares of what the page and the trace table take as the whole: a rank's steps, or its GPU
    // work's span where that outlasts them (an idle share of 1.38 came of a real trace otherwise).
    double comp = 0, comm = 0, overlap = 0, exposed = 0, idle = 0, mem = 0, step = 0;
    for (const auto* pb : parts) {
      const auto& b = *pb;
      comp += b.comp_us; comm += b.comm_us; overlap += b.overlap_us; exposed += b.exposed_comm_us;
      idle += b.idle_us; mem += b.mem_us; step += b.breakdown_whole_us();
    }
    if (comp + exposed > 0) t.computation_score = comp / (comp + exposed);
    if (comp + comm > 0) t.comp_comm_raw_share = comp / (comp + comm);
    {  // GPU traces, else the MPI interposer (computation = time outside MPI; all MPI time exposed)
      // Over the steps the step time is measured over (after --warmup-steps, those every traced
      // rank profiled), where a rank's trace has each step's parts; else over all its steps.
      RunSummary::TraceStep ts;
      for (const auto* b : parts) {
        if (b->steps <= 0) continue;
        RankStepParts sum;
        double step_sum = 0, n = 0;
        if (!timed_trace_steps.empty() && b->step_parts.size() == b->step_ids.size() &&
            b->step_ids.size() == b->step_times_us.size()) {
          for (std::size_t k = 0; k < b->step_ids.size(); ++k) {
            if (!timed_trace_steps.count(b->step_ids[k])) continue;
            const auto& sp = b->step_parts[k];
            step_sum += b->step_times_us[k];
            sum.comp_us += sp.comp_us, sum.exposed_comm_us += sp.exposed_comm_us, sum.idle_us += sp.idle_us;
            sum.dataloader_gpu_idle_us += sp.dataloader_gpu_idle_us, sum.span_us += sp.span_us;
            ++n;
          }
          if (n == 0) continue;
        } else {
          step_sum = b->step_time_us, n = b->steps;
          sum = {b->comp_us, b->exposed_comm_us, b->idle_us, b->dataloader_gpu_idle_us, b->span_us};
        }
        ts.step_us = std::max(ts.step_us, step_sum / n);
        ts.comp_max_us = std::max(ts.comp_max_us, sum.comp_us / n);
        // Per rank, against its own steps: the rank that ran behind is the one whose CPU ran
        // ahead, with the shorter steps, which the slowest rank's step would hide.
        ts.gpu_behind |= gpu_ran_behind(sum.span_us, step_sum);
        ts.comp_sum_us += sum.comp_us / n;
        ts.exposed_comm_us += sum.exposed_comm_us / n;
        ts.idle_us += sum.idle_us / n;
        ts.dataloader_idle_us += sum.dataloader_gpu_idle_us / n;
        ++ts.ranks;
      }
      // The time accounted for is the step time measured (the slowest rank's, per step), so that
      // the account's parts add up to it.
      if (!timed_trace_steps.empty() && !r.step_times_s.empty()) {
        double sum = 0;
        for (double secs : r.step_times_s) sum += secs;
        ts.step_us = 1e6 * sum / static_cast<double>(r.step_times_s.size());
      }
      if (ts.ranks > 0 && ts.step_us > 0) {
        ts.comp_mean_us = ts.comp_sum_us / ts.ranks;
        ts.exposed_comm_us /= ts.ranks;
        ts.idle_us /= ts.ranks;
        ts.dataloader_idle_us /= ts.ranks;
        t.trace_step = ts;
      }
    }
    if (step > 0) {  // each part's share of the whole, as the breakdown figure and the page draw them
      BreakdownShares s{std::max(comp - overlap, 0.0) / step, overlap / step, exposed / step, mem / step, idle / step, 0};
      s.other = std::max(0.0, 1 - (s.computation + s.overlapped_comm + s.exposed_comm + s.memory + s.idle));
      t.breakdown_shares = s;
    }
    if (comm > 0) t.overlap_ratio = overlap / comm;
    if (step > 0) {
      t.exposed_comm_share = exposed / step;
      // The MPI interposer sees CPU time only: GPU idle time is unknown there, not zero.
      if (any_trace) t.idle_share = idle / step;
    }
    // Straggler spread: per step, (slowest − fastest rank) / mean; averaged over steps. Traced
    // steps by their number, those every rank profiled; the MPI records' steps by their place.
    std::map<std::int64_t, std::vector<double>> times_of_step;
    for (const auto* b : parts) {
      const bool numbered = !b->from_mpi && b->step_ids.size() == b->step_times_us.size();
      for (std::size_t s = 0; s < b->step_times_us.size(); ++s) {
        if (numbered && !alignment.common.count(b->step_ids[s])) continue;
        times_of_step[numbered ? b->step_ids[s] : static_cast<std::int64_t>(s)].push_back(b->step_times_us[s]);
      }
    }
    double spread = 0;
    std::size_t counted = 0;
    if (parts.size() > 1)  // a single rank has no spread
      for (const auto& [step, times] : times_of_step) {
        double lo = std::numeric_limits<double>::max(), hi = 0, sum = 0;
        std::size_t n = 0;
        for (double v : times) {
          lo = std::min(lo, v); hi = std::max(hi, v); sum += v; ++n;
        }
        if (n > 1 && sum > 0) {
          spread += (hi - lo) / (sum / static_cast<double>(n));
          ++counted;
        }
      }
    if (counted) t.straggler_spread = spread / static_cast<double>(counted);
    // MFU per rank = FLOPs / step time / peak FLOP/s (DESIGN.md); ranks without either are left out.
    double mfu_sum = 0;
    std::size_t mfu_ranks = 0;
    for (const auto* b : parts) {
      if (const auto m = b->mfu()) {
        mfu_sum += *m;
        ++mfu_ranks;
      }
    }
    if (mfu_ranks) t.mfu = mfu_sum / static_cast<double>(mfu_ranks);
    // Collective calls matched across the run's traced ranks: the share of their kernel time spent
    // waiting for the last rank to arrive (the rest is transfer).
    if (any_trace) {
      std::vector<trace::RankCalls> calls;
      for (const auto* b : parts) calls.push_back({b->rank, b->start_ns.has_value(), &b->calls});
      const auto match = trace::match_collectives(calls);
      if (!match.clock_conflict.empty()) warnings.push_back(run_warning(run, "clock-conflict", match.clock_conflict));
      if (auto said = trace::send_recv_by_order_note(match); !said.empty())
        warnings.push_back(run_warning(run, "send-recv-by-order", std::move(said), Severity::note));
      double wait = 0, transfer = 0, exposed_wait = 0, exposed_transfer = 0;
      for (const auto& s : match.ranks) {
        wait += s.wait_us;
        transfer += s.transfer_us;
        exposed_wait += s.exposed_wait_us;
        exposed_transfer += s.exposed_transfer_us;
      }
      if (wait + transfer > 0) t.comm_wait_share = wait / (wait + transfer);
      if (exposed_wait + exposed_transfer > 0) t.exposed_comm_wait_share = exposed_wait / (exposed_wait + exposed_transfer);
      // A share missing because calls could not be matched is said with why (`trace` lists every note).
      if (!t.comm_wait_share && !match.notes.empty())
        warnings.push_back(run_warning(
            run, "missing-figure",
            fmt::format("communication waiting share not computed: {}{}", list_first(match.notes, match.notes.size(), 1),
                        match.notes.size() > 1 ? " (scalelens trace lists them)" : ""),
            Severity::note));
      t.collective_bandwidth = trace::bandwidth_by_size(match.instances);
      // Ops against the roofline, per step and traced rank: Σ over ranks / Σ of their steps.
      std::map<std::pair<std::string, std::string>, OpLoss> ops;
      double steps_traced = 0;
      for (const auto* b : parts) {
        steps_traced += b->steps;
        for (const auto& o : b->op_losses) {
          auto& t = ops[{o.name, o.shapes}];
          if (t.name.empty()) t = OpLoss{o.name, o.shapes, o.bound, 0, 0};
          t.gpu_us += o.gpu_us;
          t.lost_us += o.lost_us;  // NaN stays NaN: unknown on some rank
        }
      }
      if (steps_traced > 0)
        for (auto& [key, o] : ops) {
          o.gpu_us /= steps_traced;
          o.lost_us /= steps_traced;
          t.op_times.push_back(o);
          if (std::isfinite(o.lost_us) && !o.bound.empty()) t.roofline_ops.push_back(o);
        }
      keep_top_losses(t.roofline_ops);
    }
  }
  return r;
}

}  // namespace scalelens
