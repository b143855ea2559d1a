#include "analysis/energy_choice.hpp"

#include <algorithm>
#include <cmath>

#include <fmt/format.h>

#include "common/text.hpp"

namespace scalelens {
namespace {

// The configuration's mean time on its curve's basis (epoch, run or step).
std::optional<double> basis_time(const ConfigurationSummary& c) {
  const auto& s = c.time_on(c.time_from);
  return s ? std::optional<double>(s->mean) : std::nullopt;
}

struct Candidate {
  int p = 0;
  bool predicted = false;
  double time = 0;                 // per unit of the curve's time
  std::optional<double> energy;    // Wh per that unit
  std::optional<double> efficiency;
};

double score(const Candidate& c, const std::string& objective) {
  if (objective == "energy") return c.energy.value_or(INFINITY);
  if (objective == "edp") return c.energy ? *c.energy * 3600 * c.time : INFINITY;
  return c.time;
}

}  // namespace

void choose_gpu_counts(Summary& summary, const ChoiceOptions& options) {
  for (auto& c : summary.configurations) {
    c.time_to_solution_s = c.run_time_s ? std::optional<double>(c.run_time_s->mean)
                                        : c.epoch_time_s ? std::optional<double>(c.epoch_time_s->mean) : std::nullopt;
    if (!c.energy_wh) continue;
    if (c.time_to_solution_s) c.edp_js = *c.energy_wh * 3600 * *c.time_to_solution_s;
    if (options.carbon_g_per_kwh) c.co2e_g = *c.energy_wh / 1000 * *options.carbon_g_per_kwh;
    // Per unit of the curve's time: the run's energy at its mean power over that time.
    const auto t = basis_time(c);
    if (t && c.time_from == "run") c.energy_per_time_unit_wh = c.energy_wh;
    else if (t && c.run_time_s && c.run_time_s->mean > 0) c.energy_per_time_unit_wh = *c.energy_wh * *t / c.run_time_s->mean;
  }
  for (auto& cm : summary.curves) {
    std::vector<ConfigurationSummary*> mine;
    for (auto& c : summary.configurations)
      if (c.curve == cm.curve) mine.push_back(&c);
    // Pareto front of (time to solution, energy per run): no other configuration is both faster and cheaper.
    std::vector<std::tuple<double, double, int>> points;
    for (auto* c : mine)
      if (c->time_to_solution_s && c->energy_wh) points.emplace_back(*c->time_to_solution_s, *c->energy_wh, c->world_size);
    // Predictions join when the curve's time is a run's: then they are times to solution too.
    // Power per GPU at the largest configuration with energy, for the predicted energy.
    std::optional<double> watts_per_gpu;
    for (auto* c : mine)
      if (c->energy_per_time_unit_wh && basis_time(*c) && *basis_time(*c) > 0)
        watts_per_gpu = *c->energy_per_time_unit_wh * 3600 / (*basis_time(*c) * c->world_size);
    for (auto& p : cm.predictions) {
      if (watts_per_gpu) {
        p.energy_wh = *watts_per_gpu * p.world_size * p.time_s / 3600;
        p.energy_lower_wh = *watts_per_gpu * p.world_size * p.time_lower_s / 3600;
        p.energy_upper_wh = *watts_per_gpu * p.world_size * p.time_upper_s / 3600;
      }
      // A prediction at a measured count is not a point of its own: it would put the measured
      // configuration on the front however it measured.
      const bool measured = std::any_of(mine.begin(), mine.end(), [&](const ConfigurationSummary* c) { return c->world_size == p.world_size; });
      if (cm.time_from == "run" && p.energy_wh && !measured) points.emplace_back(p.time_s, *p.energy_wh, p.world_size);
    }
    std::sort(points.begin(), points.end());
    double best = INFINITY;
    for (const auto& [t, e, p] : points)
      if (e < best) {
        best = e;
        cm.pareto.push_back(p);
      }
    for (auto* c : mine) c->pareto = std::find(cm.pareto.begin(), cm.pareto.end(), c->world_size) != cm.pareto.end();

    // The recommendation: among measured and predicted counts at least min_efficiency efficient
    // (and at most max_gpus), the best for the objective.
    std::vector<Candidate> all;
    for (auto* c : mine)
      if (auto t = basis_time(*c))
        all.push_back({c->world_size, false, *t, c->energy_per_time_unit_wh,
                       c->efficiency ? c->efficiency : (c->baseline_world_size == c->world_size ? std::optional<double>(1.0) : std::nullopt)});
    // A model that missed its own self-check (the largest count, left out and predicted), or could
    // not make one, gives no count to recommend (warning model-self-check-failed); the reason says so.
    std::string predictions_left_out;
    if (!cm.model.self_check_failed())
      for (const auto& p : cm.predictions) all.push_back({p.world_size, true, p.time_s, p.energy_wh, p.efficiency});
    else if (!cm.predictions.empty())
      predictions_left_out = "; measured counts only: the model " + cm.model.self_check_failure();
    std::vector<Candidate> ok;
    for (const auto& c : all)
      if (c.efficiency && *c.efficiency >= options.min_efficiency && (!options.max_gpus || c.p <= *options.max_gpus) &&
          std::isfinite(score(c, options.objective)))
        ok.push_back(c);
    if (ok.empty()) {
      cm.not_recommended = all.empty() ? "no time on this curve"
                                       : fmt::format("no count is at least {:.4g}% efficient{}{}", 100 * options.min_efficiency,
                                                     options.max_gpus ? " within " + count_of(*options.max_gpus, summary.world_size_unit) : "",
                                                     options.objective == "time" ? "" : " with a known energy") +
                           predictions_left_out;
      continue;
    }
    const auto chosen = *std::min_element(ok.begin(), ok.end(), [&](const Candidate& a, const Candidate& b) {
      const double sa = score(a, options.objective), sb = score(b, options.objective);
      return sa != sb ? sa < sb : a.p < b.p;  // a tie: the fewer GPUs
    });
    const std::string unit = cm.time_from;
    std::string what = options.objective == "energy" ? fmt::format("{:.3g} Wh per {}", *chosen.energy, unit)
                       : options.objective == "edp"  ? fmt::format("energy × time {:.3g} J·s per {}", score(chosen, "edp"), unit)
                                                     : fmt::format("{:.3g} s per {}", chosen.time, unit);
    const std::string& gpus = summary.world_size_unit;
    // The threshold as given (0.705 is 70.5%, not 71%), each efficiency kept on its side of it.
    std::string reason = fmt::format("{}{}: the {} ({}) among the counts at least {:.4g}% efficient{} ({} here)",
                                     count_of(chosen.p, gpus), chosen.predicted ? " (predicted)" : "",
                                     options.objective == "time" ? "shortest time" : options.objective == "energy" ? "lowest energy" : "lowest energy-delay product",
                                     what, 100 * options.min_efficiency,
                                     options.max_gpus ? " within " + count_of(*options.max_gpus, gpus) : "",
                                     efficiency_percent(*chosen.efficiency, options.min_efficiency));
    // What the next larger count would cost, when there is one that was left out for efficiency.
    const Candidate* next = nullptr;
    for (const auto& c : all)
      if (c.p > chosen.p && (!next || c.p < next->p)) next = &c;
    if (next && next->efficiency && *next->efficiency < options.min_efficiency)
      reason += fmt::format("; {}{} would take {:.3g} s at {} efficiency", count_of(next->p, gpus), next->predicted ? " (predicted)" : "",
                            next->time, efficiency_percent(*next->efficiency, options.min_efficiency));
    reason += predictions_left_out;
    cm.recommended = CurveModel::Recommendation{chosen.p, options.objective, chosen.predicted, reason};
  }
}

}  // namespace scalelens
