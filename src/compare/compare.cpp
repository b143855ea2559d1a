#include "compare/compare.hpp"

#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "common/text.hpp"

namespace scalelens {

const std::vector<MetricInfo>& compare_metrics() {
  static const std::vector<MetricInfo> metrics = {
      {"time", "time", "s", Better::lower},
      {"throughput", "throughput", "samples/s", Better::higher},
      {"efficiency", "efficiency", "", Better::higher},
      {"computation_score", "computation score", "", Better::higher},
      {"gpu_util", "GPU utilization", "%", Better::higher},
      {"energy_per_sample", "energy per sample", "J", Better::lower},
      {"peak_memory", "peak GPU memory", "GiB", Better::lower},
  };
  return metrics;
}

const MetricInfo* find_metric(std::string_view name) {
  static const std::map<std::string, std::string, std::less<>> aliases = {
      {"epoch_time", "time"}, {"run_time", "time"},         {"step_time", "time"},
      {"score", "computation_score"}, {"computation-score", "computation_score"},
      {"util", "gpu_util"},     {"utilization", "gpu_util"}, {"gpu-util", "gpu_util"},
      {"energy", "energy_per_sample"}, {"energy-per-sample", "energy_per_sample"},
      {"memory", "peak_memory"},       {"peak-memory", "peak_memory"},
  };
  auto alias = aliases.find(name);
  const std::string_view canonical = alias != aliases.end() ? std::string_view(alias->second) : name;
  for (const auto& m : compare_metrics())
    if (canonical == m.name) return &m;
  return nullptr;
}

Verdict ConfigurationComparison::worst() const {
  if (metrics.empty()) return Verdict::inconclusive;  // nothing compared: nothing shown unchanged
  Verdict w = Verdict::unchanged;
  for (const auto& m : metrics)
    if (severity_of(m.verdict) > severity_of(w)) w = m.verdict;
  return w;
}

std::string ConfigurationComparison::name() const {
  std::string s = label_after == label ? label : label + "→" + label_after;
  if (!system.empty() || !system_after.empty())
    s += " @ " + (system_after == system ? system : system + "→" + system_after);
  return s;
}

std::size_t Comparison::count(Verdict v) const {
  std::size_t n = 0;
  for (const auto& c : configurations)
    for (const auto& m : c.metrics) n += m.verdict == v;
  return n;
}

namespace {

std::string renamed(const std::map<std::string, std::string>& renames, const std::string& name) {
  auto it = renames.find(name);
  return it == renames.end() ? name : it->second;
}

std::string config_name(const ConfigurationSummary& c, const std::string& unit) {
  return fmt::format("{}{} {}", c.label, c.system.empty() ? "" : " @ " + c.system, count_of(c.world_size, unit));
}

// The runs' values of one figure.
std::vector<double> run_values(const Summary& s, const ConfigurationSummary& c,
                               const std::function<std::optional<double>(const RunSummary&)>& of) {
  std::vector<double> v;
  for (auto i : c.run_indices)
    if (auto x = of(s.runs[i]); x && std::isfinite(*x)) v.push_back(*x);
  return v;
}

// The time basis both sides can be compared on: the before side's choice where the after side has
// it too, else the first basis both have.
std::string common_basis(const Summary& a, const ConfigurationSummary& ca, const Summary& b, const ConfigurationSummary& cb) {
  std::vector<std::string> order = {ca.time_from, cb.time_from, "epoch", "run", "step"};
  for (const auto& basis : order) {
    if (basis.empty()) continue;
    auto has = [&](const Summary& s, const ConfigurationSummary& c) {
      return !run_values(s, c, [&](const RunSummary& r) { return r.time_on(basis); }).empty();
    };
    if (has(a, ca) && has(b, cb)) return basis;
  }
  return "";
}

const ConfigurationSummary* baseline_of(const Summary& s, const ConfigurationSummary& c) {
  if (!c.baseline_world_size) return nullptr;
  for (const auto& b : s.configurations)
    if (b.curve == c.baseline_label && b.world_size == *c.baseline_world_size) return &b;
  return nullptr;
}

// Per run, its throughput; the instances of one run (MLPerf weak scaling) summed.
std::vector<double> run_throughputs(const Summary& s, const ConfigurationSummary& c) {
  std::map<std::string, double> by_run;
  std::vector<double> v;
  for (auto i : c.run_indices) {
    const auto& r = s.runs[i];
    if (!r.throughput_samples_per_s || !std::isfinite(*r.throughput_samples_per_s)) continue;
    if (r.details().instance_of.empty()) v.push_back(*r.throughput_samples_per_s);
    else by_run[r.details().instance_of] += *r.throughput_samples_per_s;
  }
  for (const auto& [run, x] : by_run) v.push_back(x);
  return v;
}

std::string repeats_note(const ChangeEstimate& change, Verdict verdict, double threshold, double confidence) {
  if (verdict != Verdict::inconclusive) return "";
  if (!change.before || !change.after)
    return change.before ? "not measured after" : "not measured before";
  if (change.n_before < 2 || change.n_after < 2)
    return fmt::format("{} run{} before, {} after: an interval needs at least 2 repeats on each side", change.n_before,
                       change.n_before == 1 ? "" : "s", change.n_after);
  const auto n = repeats_to_decide(change, threshold, confidence);
  if (n == SIZE_MAX) return "the change is about the threshold: no practical number of repeats decides it";
  if (n == 0) return "";
  return fmt::format("about {} repeats on each side would decide it", n);
}

MetricComparison judged(const MetricInfo& metric, ChangeEstimate change, const ChangeOptions& options) {
  MetricComparison m;
  m.metric = &metric;
  m.verdict = judge(change, metric.better, options.threshold);
  m.note = repeats_note(change, m.verdict, options.threshold, options.confidence);
  m.change = std::move(change);
  return m;
}

// Efficiency = baseline time / time × p0/p (strong), throughput / baseline throughput × p0/p (weak):
// its relative change is that of a ratio of two independent changes, whose log differences
// subtract. The interval is centred on the summaries' own efficiencies.
struct Renames {
  const std::map<std::string, std::string>& labels;
  const std::map<std::string, std::string>& systems;
};

std::optional<MetricComparison> compare_efficiency(const MetricInfo& metric, const Summary& a, const ConfigurationSummary& ca,
                                                   const Summary& b, const ConfigurationSummary& cb, const ChangeOptions& options,
                                                   const Renames& options_renames) {
  if (!ca.efficiency && !cb.efficiency) return std::nullopt;
  MetricComparison m;
  m.metric = &metric;
  ChangeEstimate change;
  change.before = ca.efficiency;
  change.after = cb.efficiency;
  change.n_before = ca.runs;
  change.n_after = cb.runs;
  if (ca.efficiency && cb.efficiency && *ca.efficiency > 0) change.rel_change = *cb.efficiency / *ca.efficiency - 1;
  const auto* base_a = baseline_of(a, ca);
  const auto* base_b = baseline_of(b, cb);
  std::string why;
  if (!ca.efficiency || !cb.efficiency) {
    why = ca.efficiency ? "not measured after" : "not measured before";
  } else if (!base_a || !base_b || base_a->world_size != base_b->world_size ||
             renamed(options_renames.labels, base_a->label) != base_b->label ||
             renamed(options_renames.systems, base_a->system) != base_b->system) {
    why = "the two sides measure efficiency against different baselines";
  } else if (ca.scaling != cb.scaling) {
    why = fmt::format("{} scaling before, {} after", ca.scaling, cb.scaling);
  } else if (base_a == &ca) {
    return std::nullopt;  // the baseline itself: 1 by definition on both sides
  } else {
    const bool weak = ca.scaling == "weak";
    const std::string basis = weak ? "" : ca.time_from;
    auto values = [&](const Summary& s, const ConfigurationSummary& c) {
      return run_values(s, c, [&](const RunSummary& r) {
        return weak ? std::optional<double>(r.throughput_samples_per_s) : r.time_on(basis);
      });
    };
    // Strong scaling: each run's time with the weight it has in its configuration's pooled time
    // (its epochs or steps), so that the interval is of the efficiency the summaries state.
    auto weighted_times = [&](const Summary& s, const ConfigurationSummary& c) {
      std::vector<Weighted> v;
      for (auto i : c.run_indices) {
        const auto& r = s.runs[i];
        const auto t = r.time_on(basis);
        if (!t || !std::isfinite(*t)) continue;
        const std::size_t n = basis == "epoch" ? r.epoch_times_s.size() : basis == "step" ? r.step_times_s.size() : 1;
        v.push_back({*t, static_cast<double>(n)});
      }
      return v;
    };
    if (basis.empty() && !weak) {
      why = "no time basis";
    } else if (cb.time_from != ca.time_from && !weak) {
      why = fmt::format("times per {} before, per {} after", ca.time_from, cb.time_from);
    } else {
      auto at_p = weak ? log_difference(values(a, ca), values(b, cb))
                       : pooled_log_difference(weighted_times(a, ca), weighted_times(b, cb));
      auto at_base = weak ? log_difference(values(a, *base_a), values(b, *base_b))
                          : pooled_log_difference(weighted_times(a, *base_a), weighted_times(b, *base_b));
      if (at_p && at_base) {
        // Strong: log E = log T0 − log T; weak: log E = log X − log X0.
        LogDifference diff = weak ? *at_p : *at_base;
        diff -= weak ? *at_base : *at_p;
        auto interval = change_from_log_difference(diff, options);
        if (interval.method == "identical" && change.rel_change && std::abs(*change.rel_change) > 1e-9) {
          // The same runs on both sides, yet other efficiencies: a saved summary's figure is not its
          // runs' (edited by hand, or written otherwise), and "unchanged" would hide that.
          why = fmt::format("the runs are the same on both sides, but the saved efficiencies differ ({:.4g} before, "
                            "{:.4g} after): one summary's efficiency is not its runs'",
                            *ca.efficiency, *cb.efficiency);
        } else if (interval.method == "identical") {
          change.ci_low = change.ci_high = change.rel_change = 0.0;
        } else if (change.rel_change) {
          // The same width around the summaries' own ratio.
          const double centre = std::log1p(*change.rel_change);
          const double half = std::log1p(*interval.ci_high) - std::log1p(*interval.rel_change);
          change.ci_low = std::expm1(centre - half);
          change.ci_high = std::expm1(centre + half);
          change.log_sd = std::sqrt(diff.var / (2.0 / static_cast<double>(std::min(ca.runs, cb.runs))));
        }
        if (why.empty()) change.method = interval.method == "identical" ? "identical" : "welch-log (baseline and configuration)";
      } else {
        why = "an interval needs at least 2 repeats at this configuration and at the baseline, on each side";
      }
    }
  }
  m = judged(metric, std::move(change), options);
  if (!why.empty() && m.verdict == Verdict::inconclusive) m.note = why;
  return m;
}

// The codes that say an input, run or experiment was left out whole (docs/summary-schema.md).
bool leaves_out_input(std::string_view code) {
  static const std::set<std::string_view> codes = {
      "missing-input", "unreadable-input", "unreadable-file", "duplicate-manifest", "bad-trace", "no-manifest",
      "not-itwinai", "deleted-experiment", "deleted-runs", "orphan-runs", "ambiguous-trace", "duplicate-run-id",
      "duplicate-run", "pruned-instance", "itwinai-backup", "bad-manifest", "gpu-log-not-assigned"};
  return codes.count(code) > 0;
}

}  // namespace

std::vector<std::string> unknown_match_names(const Summary& before, const Summary& after, const CompareOptions& options) {
  std::vector<std::string> out;
  auto check = [&](const std::map<std::string, std::string>& renames, const char* kind, std::string ConfigurationSummary::*field) {
    for (const auto& [old_name, new_name] : renames)
      for (auto [side, which, value] : {std::tuple{&before, "before", &old_name}, std::tuple{&after, "after", &new_name}}) {
        std::set<std::string> has;
        for (const auto& c : side->configurations) has.insert(c.*field);
        if (has.count(*value)) continue;
        std::string names;
        for (const auto& n : has)
          if (!n.empty()) names += (names.empty() ? "'" : ", '") + n + "'";
        std::string message = fmt::format("--match {}={}:{}: the {} side has no configuration {} '{}' ({})", kind, old_name, new_name,
                                          which, kind == std::string("label") ? "labelled" : "on system", *value,
                                          names.empty() ? fmt::format("none names a {}", kind) : "it has " + names);
        // What its reading left out (an input, run or experiment) may be where the name is: say
        // what, as report would. Other warnings (of a trace's events) are not where a name went.
        std::size_t left_out = 0;
        for (const auto& d : side->warnings) {
          if (d.path.empty() || !leaves_out_input(d.code)) continue;
          if (++left_out <= 3) message += fmt::format("{} {}: {}", left_out == 1 ? "; reading it left out" : ";", d.path, d.message);
        }
        if (left_out > 3) message += fmt::format("; and {} more", left_out - 3);
        out.push_back(std::move(message));
      }
  };
  check(options.label_renames, "label", &ConfigurationSummary::label);
  check(options.system_renames, "system", &ConfigurationSummary::system);
  return out;
}

Comparison compare_summaries(const Summary& a, const Summary& b, const CompareOptions& options) {
  Comparison out;
  out.threshold = options.change.threshold;
  out.confidence = options.change.confidence;
  out.world_size_unit = a.world_size_unit;
  if (a.world_size_unit != b.world_size_unit)
    out.warnings.push_back(Diagnostic{Severity::warning, "unit-differs",
                                      fmt::format("world size counts {} before and {} after", a.world_size_unit, b.world_size_unit), {}, 0, {}});

  std::vector<const MetricInfo*> wanted;
  for (const auto& m : compare_metrics())
    if (options.metrics.empty() ||
        std::any_of(options.metrics.begin(), options.metrics.end(), [&](const std::string& n) { return find_metric(n) == &m; }))
      wanted.push_back(&m);

  std::vector<bool> matched_after(b.configurations.size(), false);
  for (const auto& ca : a.configurations) {
    const std::string label = renamed(options.label_renames, ca.label);
    const std::string system = renamed(options.system_renames, ca.system);
    const ConfigurationSummary* cb = nullptr;
    std::size_t after_index = 0;
    for (std::size_t j = 0; j < b.configurations.size(); ++j) {
      const auto& c = b.configurations[j];
      if (!matched_after[j] && c.label == label && c.system == system && c.world_size == ca.world_size) {
        cb = &c;
        after_index = j;
        matched_after[j] = true;
        break;
      }
    }
    if (!cb) {
      out.only_before.push_back(config_name(ca, a.world_size_unit));
      continue;
    }
    ConfigurationComparison cc;
    cc.label = ca.label;
    cc.label_after = cb->label;
    cc.system = ca.system;
    cc.system_after = cb->system;
    cc.world_size = ca.world_size;
    cc.curve = ca.curve;
    cc.runs_before = ca.runs;
    cc.runs_after = cb->runs;
    cc.before_index = static_cast<std::size_t>(&ca - a.configurations.data());
    cc.after_index = after_index;
    ChangeOptions change_options = options.change;
    for (const auto* metric : wanted) {
      // Every figure its own reproducible draws.
      change_options.seed = options.change.seed ^ std::hash<std::string>{}(cc.name() + "/" + std::to_string(cc.world_size) + "/" + metric->name);
      const std::string name = metric->name;
      if (name == "efficiency") {
        if (auto m = compare_efficiency(*metric, a, ca, b, *cb, change_options, Renames{options.label_renames, options.system_renames}))
          cc.metrics.push_back(std::move(*m));
        continue;
      }
      std::function<std::optional<double>(const RunSummary&)> of;
      std::string detail;
      if (name == "time") {
        const std::string basis = common_basis(a, ca, b, *cb);
        if (basis.empty()) {
          // Say so where a side has a time: a gate must not pass because the times went missing.
          auto bases = [](const Summary& s, const ConfigurationSummary& c) {
            std::string out;
            for (const char* k : {"epoch", "run", "step"})
              if (!run_values(s, c, [&](const RunSummary& r) { return r.time_on(k); }).empty()) out += (out.empty() ? "" : ", ") + std::string(k);
            return out.empty() ? std::string("none") : out;
          };
          const std::string ta = bases(a, ca), tb = bases(b, *cb);
          if (ta == "none" && tb == "none") continue;
          MetricComparison m;
          m.metric = metric;
          m.verdict = Verdict::inconclusive;
          m.note = fmt::format("no time basis both sides have (before: {}; after: {})", ta, tb);
          cc.metrics.push_back(std::move(m));
          continue;
        }
        of = [basis](const RunSummary& r) { return r.time_on(basis); };
        detail = basis == "run" ? "per run" : "per " + basis;
      } else if (name == "throughput") {
        // Concurrent instances of one run count together, as the configuration's throughput does.
        auto before = run_throughputs(a, ca), after = run_throughputs(b, *cb);
        if (before.empty() && after.empty()) continue;
        cc.metrics.push_back(judged(*metric, estimate_change(before, after, change_options), change_options));
        continue;
      } else if (name == "computation_score") {
        of = [](const RunSummary& r) { return r.trace().computation_score; };
      } else if (name == "gpu_util") {
        of = [](const RunSummary& r) { return r.gpu_util_pct ? std::optional<double>(r.gpu_util_pct->mean) : std::nullopt; };
      } else if (name == "energy_per_sample") {
        of = [](const RunSummary& r) { return r.energy_j_per_sample; };
      } else if (name == "peak_memory") {
        of = [](const RunSummary& r) {
          return r.peak_gpu_memory_bytes ? std::optional<double>(*r.peak_gpu_memory_bytes / (1ull << 30)) : std::nullopt;
        };
      } else {
        continue;
      }
      auto before = run_values(a, ca, of), after = run_values(b, *cb, of);
      if (before.empty() && after.empty()) continue;
      auto m = judged(*metric, estimate_change(before, after, change_options), change_options);
      m.detail = detail;
      cc.metrics.push_back(std::move(m));
    }
    out.configurations.push_back(std::move(cc));
  }
  for (std::size_t j = 0; j < b.configurations.size(); ++j)
    if (!matched_after[j]) out.only_after.push_back(config_name(b.configurations[j], b.world_size_unit));

  // Unmatched on both sides at the same size: say how --match would pair them.
  for (const auto& ca : a.configurations) {
    if (std::find(out.only_before.begin(), out.only_before.end(), config_name(ca, a.world_size_unit)) == out.only_before.end())
      continue;
    for (std::size_t j = 0; j < b.configurations.size(); ++j) {
      const auto& cb = b.configurations[j];
      if (matched_after[j] || cb.world_size != ca.world_size) continue;
      if (cb.label == ca.label && cb.system != ca.system) {
        out.warnings.push_back(Diagnostic{Severity::note, "unmatched",
                                          fmt::format("{} has no match: after has the label on system '{}' (before '{}'); "
                                                      "--match system={}:{} compares them",
                                                      config_name(ca, a.world_size_unit), cb.system, ca.system, ca.system, cb.system), {}, 0, {}});
        break;
      }
      if (cb.system == ca.system && cb.label != ca.label) {
        out.warnings.push_back(Diagnostic{Severity::note, "unmatched",
                                          fmt::format("{} has no match; if '{}' is its new name, --match label={}:{} compares them",
                                                      config_name(ca, a.world_size_unit), cb.label, ca.label, cb.label), {}, 0, {}});
        break;
      }
    }
  }

  std::stable_sort(out.configurations.begin(), out.configurations.end(), [](const auto& x, const auto& y) {
    const int sx = severity_of(x.worst()), sy = severity_of(y.worst());
    if (sx != sy) return sx > sy;
    return std::tie(x.label, x.system, x.world_size) < std::tie(y.label, y.system, y.world_size);
  });

  // The scaling models of matched curves.
  for (const auto& ma : a.curves) {
    const std::string label = renamed(options.label_renames, ma.label);
    const std::string system = renamed(options.system_renames, ma.system);
    auto mb = std::find_if(b.curves.begin(), b.curves.end(), [&](const CurveModel& m) { return m.label == label && m.system == system; });
    if (mb == b.curves.end() || (!ma.model.fit && !mb->model.fit)) continue;
    CurveComparison cc;
    cc.curve = ma.curve;
    cc.curve_after = mb->curve;
    if (ma.model.fit) {
      cc.law_before = ma.model.fit->law;
      cc.formula_before = ma.model.fit->formula();
    }
    if (mb->model.fit) {
      cc.law_after = mb->model.fit->law;
      cc.formula_after = mb->model.fit->formula();
    }
    static const std::vector<std::tuple<const char*, const char*, bool>> titles = {
        {"serial_fraction", "serial fraction", true},   {"comm_s_per_log2p", "communication per log2 p (s)", false},
        {"sigma", "contention σ", true},                {"kappa", "coherency κ", true},
        {"peak_p", "peak at p", false}};
    for (const auto& [key, title, percent] : titles) {
      ParameterChange pc{key, title, std::nullopt, std::nullopt, percent};
      if (ma.model.fit)
        if (auto it = ma.model.fit->params.find(key); it != ma.model.fit->params.end()) pc.before = it->second;
      if (mb->model.fit)
        if (auto it = mb->model.fit->params.find(key); it != mb->model.fit->params.end()) pc.after = it->second;
      if (pc.before || pc.after) cc.parameters.push_back(pc);
    }
    out.curves.push_back(std::move(cc));
  }
  return out;
}

}  // namespace scalelens
