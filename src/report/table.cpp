#include <algorithm>
#include <cmath>
#include <functional>
#include <set>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "analysis/self_check_text.hpp"
#include "common/text.hpp"
#include "report/summary_writers.hpp"

namespace scalelens {

std::string human_number(double v) {
  if (!std::isfinite(v)) return "-";
  double a = std::fabs(v);
  if (a == 0) return "0";
  if (a >= 1e3) return fmt::format("{:.0f}", v);
  if (a >= 100) return fmt::format("{:.1f}", v);
  if (a >= 1) return fmt::format("{:.3g}", v);
  if (a >= 1e-3) return fmt::format("{:.3g}", v);  // three significant digits: 19.9 ms is 0.0199 s, not 0.020
  return fmt::format("{:.2e}", v);
}

namespace {

struct Column {
  std::string title;
  bool right = true;
  std::function<std::optional<std::string>(const ConfigurationSummary&)> cell;
};

std::optional<std::string> opt(const std::optional<double>& v, const char* suffix = "") {
  if (!v) return std::nullopt;
  return human_number(*v) + suffix;
}

std::optional<std::string> pct(const std::optional<double>& v) {
  if (!v) return std::nullopt;
  return fmt::format("{:.0f}%", 100 * *v);
}

// "8.93 ± 0.12": the mean and the half width of its 95% confidence interval.
std::optional<std::string> mean_ci(const std::optional<Stat>& s) {
  if (!s) return std::nullopt;
  if (std::isnan(s->ci95_high)) return human_number(s->mean);
  return human_number(s->mean) + " ± " + human_number(s->ci95_high - s->mean);
}

// "Where the time goes": per configuration with traces, the step time lost against the ideal
// and its parts, and the POP efficiencies; per curve its dominant loss.
std::string render_lost_time(const Summary& summary) {
  std::string out;
  auto ms = [](double s) { return fmt::format("{:.3g}", s * 1e3); };
  for (const auto& c : summary.configurations) {
    if (!c.pop) continue;
    if (out.empty()) out = "Where the time goes (ms per step against the ideal, from traces or the MPI interposer; POP efficiencies;\n"
                              "the mean over every profiled step, warm-up steps included, so the step may differ from the table's):\n";
    out += fmt::format("  {} x{}: ", printable(c.label), c.world_size);
    if (c.lost_time && c.baseline_world_size && c.world_size != *c.baseline_world_size) {
      const auto& l = *c.lost_time;
      out += fmt::format("lost {} of {} = exposed comm {} + waiting/idle {} + data loading {} + extra compute {} + unattributed {}; ",
                         ms(l.total_s), ms(l.step_s), ms(l.exposed_comm_s), ms(l.idle_imbalance_s), ms(l.data_loading_s),
                         ms(l.extra_compute_s), ms(l.unattributed_s));
    }
    const auto& p = *c.pop;
    out += fmt::format("LB {:.2f} x CommE {:.2f} = PE {:.2f}", p.load_balance, p.comm_efficiency, p.parallel_efficiency);
    if (p.computation_scaling) out += fmt::format(", CompS {:.2f}, GE {:.2f}", *p.computation_scaling, *p.global_efficiency);
    if (p.global_vs_baseline && c.efficiency)
      out += fmt::format(" (GE/GE0 {:.2f} vs efficiency from times {:.2f})", *p.global_vs_baseline, *c.efficiency);
    out += "\n";
  }
  for (const auto& cm : summary.curves) {
    if (!cm.loss_sentence.empty()) out += fmt::format("  {}: {}\n", printable(cm.curve), cm.loss_sentence);
    if (const auto& g = cm.growing_op)
      out += fmt::format("  {}: {} {} grows most with p: {:.3g} ms per step over all ranks at {}, {:.3g} at {}\n",
                         printable(cm.curve), printable(g->name), printable(g->shapes), g->from_ms,
                         count_of(g->from_p, summary.world_size_unit), g->to_ms, g->to_p);
  }
  return out;
}

// "Energy and time": per curve the Pareto front and the recommended GPU count with its reason.
std::string render_energy_and_time(const Summary& summary) {
  std::string out;
  for (const auto& cm : summary.curves) {
    if (!cm.recommended && cm.pareto.empty() && cm.not_recommended.empty()) continue;
    if (out.empty()) out = "Energy and time:\n";
    out += fmt::format("  {}: ", printable(cm.curve));
    if (cm.recommended) out += "recommended " + cm.recommended->reason;
    else out += "no recommendation: " + cm.not_recommended;
    if (!cm.pareto.empty())
      out += "; time-energy Pareto front at " + (cm.pareto.size() == 1 ? count_of(cm.pareto.front(), summary.world_size_unit)
                                                                      : fmt::format("{} {}", fmt::join(cm.pareto, ", "), summary.world_size_unit));
    out += "\n";
  }
  for (const auto& c : summary.configurations)
    if (c.co2e_g) out += fmt::format("  {} x{}: {:.3g} g CO2e per run ({:.3g} Wh)\n", printable(c.label), c.world_size, *c.co2e_g, *c.energy_wh);
  return out;
}

// "Scaling model": per curve the chosen model, its self-check and predictions, kept short.
std::string render_scaling_models(const Summary& summary) {
  std::string out;
  auto g3 = [](double v) { return fmt::format("{:.3g}", v); };
  const auto& unit = summary.world_size_unit;
  // Curves on different time bases (one with epochs, one with only a run's start and end): each
  // says its own, which a heading of one would misstate.
  std::set<std::string> bases;
  for (const auto& cm : summary.curves) bases.insert(cm.time_from);
  for (const auto& cm : summary.curves) {
    const auto& m = cm.model;
    if (out.empty())
      out = fmt::format("Scaling model (time{} vs {}; 90% intervals):\n", bases.size() == 1 ? " per " + cm.time_from : "", unit);
    out += fmt::format("  {}{}: ", printable(cm.curve), bases.size() == 1 ? "" : " (time per " + cm.time_from + ")");
    if (!m.fit) {
      out += "no model: " + m.refused + "\n";
      continue;
    }
    const auto& f = *m.fit;
    out += f.formula();
    std::vector<std::string> about;
    if (!f.law.empty()) about.push_back(f.law);
    for (const auto& [k, v] : f.params) {
      if (k == "serial_fraction") about.push_back(fmt::format("serial fraction {:.2g}%", 100 * v));
      else if (k == "sigma") about.push_back(fmt::format("σ {:.2g}", v));
      else if (k == "kappa") about.push_back(fmt::format("κ {:.2g}", v));
      else if (k == "peak_p") about.push_back(fmt::format("throughput peaks at {:.0f} {}", v, unit));
    }
    if (!about.empty()) out += fmt::format(" ({})", fmt::join(about, ", "));
    out += fmt::format("; leave-one-out error {:.1f}%", 100 * f.loo_rel_error);
    if (std::isfinite(f.adj_r2)) out += fmt::format(", adj. R² {:.3f}", f.adj_r2);
    out += "\n";
    if (!m.backtest_refused.empty()) out += "    no self-check: " + m.backtest_refused + "\n";
    if (m.backtest)
      out += fmt::format("    self-check: {} it predicts {}, measured {} s: {}\n", fitted_without(m.backtest->p, unit),
                         prediction_text(*m.backtest), g3(m.backtest->measured),
                         m.backtest->inside() ? "inside"
                         : cm.predictions.empty() ? "OUTSIDE the interval"
                                                  : "OUTSIDE the interval: the predictions below are doubtful, and no recommendation rests on them");
    for (const auto& p : cm.predictions) {
      out += fmt::format("    at {}: {} s [{}, {}]", count_of(p.world_size, unit), g3(p.time_s), g3(p.time_lower_s), g3(p.time_upper_s));
      if (p.speedup) out += fmt::format(", speedup {}x", human_number(*p.speedup));  // as the table's speedup column
      // As the table's efficiency column says it (100.4%, not 100%): a prediction beside measured
      // lines must not round onto 100% where they would not.
      if (p.efficiency) {
        out += ", efficiency " + efficiency_percent(*p.efficiency);
        if (p.efficiency_lower && p.efficiency_upper)
          out += fmt::format(" [{}, {}]", efficiency_percent(*p.efficiency_lower), efficiency_percent(*p.efficiency_upper));
      }
      if (p.throughput) out += fmt::format(", {} samples/s", human_number(*p.throughput));  // as the table shows it, not 4e+04
      out += "\n";
    }
    if (!m.refused.empty()) out += "    no prediction: " + m.refused + "\n";
    for (const auto& r : m.refused_targets) out += "    not predicted: " + r + "\n";
    if (!m.suggest_why.empty()) out += "    next: " + m.suggest_why + "\n";
  }
  return out;
}

}  // namespace

std::string render_table(const Summary& summary, const TableStyle& style) {
  const bool ranks = summary.world_size_unit == "ranks";
  const std::string& count_title = summary.world_size_unit;  // "GPUs" or "ranks"
  std::vector<Column> all = {
      {"label", false, [](auto& c) { return std::optional<std::string>(c.label); }},
      // Only a study that spans several systems shows which (one system: nothing to tell apart).
      {"system", false, [&](auto& c) {
         return summary.systems.size() > 1 ? std::optional<std::string>(c.system.empty() ? "?" : c.system) : std::nullopt;
       }},
      {count_title, true, [](auto& c) { return std::optional<std::string>(std::to_string(c.world_size)); }},
      {"nodes", true, [](auto& c) { return c.nodes ? std::optional<std::string>(std::to_string(*c.nodes)) : std::nullopt; }},
      {"runs", true, [](auto& c) { return std::optional<std::string>(std::to_string(c.runs)); }},
      {"instances", true, [](auto& c) {
         return c.instances ? std::optional<std::string>(fmt::format("{}x{}", *c.instances, *c.gpus_per_instance)) : std::nullopt;
       }},
      {"epoch s (95% CI)", true, [](auto& c) { return mean_ci(c.epoch_time_s); }},
      {"median s", true, [](auto& c) { return c.epoch_time_s ? opt(c.epoch_time_s->median) : std::nullopt; }},
      // Run time shows where it is the time (no epochs, or a curve whose baseline has none): the
      // speedup beside it rests on it.
      {"run s (95% CI)", true, [](auto& c) {
         return c.epoch_time_s && c.time_from != "run" ? std::nullopt : mean_ci(c.run_time_s);
       }},
      // Step time shows where it is the time (traces alone): the slowest rank per profiler step.
      {"step ms (95% CI)", true, [](auto& c) {
         if (c.time_from != "step" || !c.step_time_s) return std::optional<std::string>();
         Stat ms = *c.step_time_s;
         for (double* v : {&ms.mean, &ms.median, &ms.std, &ms.ci95_low, &ms.ci95_high}) *v *= 1000;
         return mean_ci(std::optional<Stat>(ms));
       }},
      {"samples/s", true, [](auto& c) { return opt(c.throughput_samples_per_s); }},
      {"models/min", true, [](auto& c) { return opt(c.models_per_minute); }},
      {ranks ? "/rank" : "/GPU", true, [](auto& c) { return opt(c.throughput_per_gpu); }},
      {"speedup", true, [](auto& c) { return opt(c.speedup, "x"); }},
      // An exact ratio of counts: "128x", as "64x" above it, not the "128.0x" of a measured figure.
      {"ideal", true, [](auto& c) {
         if (!c.speedup || !c.ideal_speedup) return std::optional<std::string>();
         const double v = *c.ideal_speedup;
         return std::optional<std::string>((v == std::round(v) ? fmt::format("{:.0f}", v) : human_number(v)) + "x");
       }},
      {"efficiency", true,
       [](auto& c) { return c.efficiency ? std::optional<std::string>(efficiency_percent(*c.efficiency)) : std::nullopt; }},
      {"Karp-Flatt", true, [](auto& c) { return opt(c.karp_flatt); }},
      {"comp score", true, [](auto& c) { return opt(c.computation_score); }},
      // itwinai's own figure, from its profiler averages; not the same measure as the score.
      {"comp fraction (itwinai)", true, [](auto& c) { return opt(c.itwinai_computation_fraction); }},
      {"exposed comm", true, [](auto& c) { return pct(c.exposed_comm_share); }},
      // Of the collectives' time, waiting for the last rank (imbalance) rather than moving data.
      {"comm waiting", true, [](auto& c) { return pct(c.comm_wait_share); }},
      {"MFU", true, [](auto& c) { return pct(c.mfu); }},
      {"GPU util", true, [](auto& c) {
         return c.gpu_util_pct ? std::optional<std::string>(fmt::format("{:.0f}%", c.gpu_util_pct->mean)) : std::nullopt;
       }},
      // "~": extrapolated from the GPUs measured to all of the job's (warning partial-gpu-data).
      {"energy Wh", true, [](auto& c) {
         auto v = opt(c.energy_wh);
         return v && c.energy_extrapolated ? std::optional<std::string>("~" + *v) : v;
       }},
      {"J/sample", true, [](auto& c) { return opt(c.energy_j_per_sample); }},
      {"peak mem GiB", true, [](auto& c) {
         return c.peak_gpu_memory_bytes ? opt(*c.peak_gpu_memory_bytes / (1ull << 30)) : std::nullopt;
       }},
  };
  // Keep the columns that have data in some row; label and world size always.
  std::vector<const Column*> cols;
  std::vector<std::vector<std::string>> cells(summary.configurations.size());
  for (const auto& col : all) {
    bool any = false;
    std::vector<std::string> values;
    for (const auto& c : summary.configurations) {
      auto v = col.cell(c);
      if (v) *v = printable(*v);  // labels come from input files
      any |= v.has_value();
      values.push_back(v.value_or("-"));
    }
    if (!any && col.title != "label" && col.title != count_title) continue;
    cols.push_back(&col);
    for (std::size_t r = 0; r < values.size(); ++r) cells[r].push_back(values[r]);
  }
  std::vector<std::size_t> width(cols.size());
  for (std::size_t k = 0; k < cols.size(); ++k) {
    width[k] = display_width(cols[k]->title);
    for (const auto& row : cells) width[k] = std::max(width[k], display_width(row[k]));
  }
  auto pad = [](const std::string& s, std::size_t w, bool right) {
    std::string fill(w - std::min(w, display_width(s)), ' ');
    return right ? fill + s : s + fill;
  };
  std::string out;
  std::string header;
  for (std::size_t k = 0; k < cols.size(); ++k) header += (k ? "  " : "") + pad(cols[k]->title, width[k], cols[k]->right);
  out += style.color ? "\x1b[1m" + header + "\x1b[0m\n" : header + "\n";
  for (const auto& row : cells) {
    std::string line;
    for (std::size_t k = 0; k < cols.size(); ++k) line += (k ? "  " : "") + pad(row[k], width[k], cols[k]->right);
    out += line + "\n";
  }
  std::string scaling = summary.scaling + " scaling";
  const char* count = ranks ? "rank count" : "GPU count";
  const char* curve = summary.systems.size() > 1 ? "each label's (on each system)" : "each label's";
  std::string baseline = summary.baseline == "per-label" ? fmt::format("{} smallest {}", curve, count)
                         : summary.baseline == "common" ? fmt::format("the fastest label at the smallest {}", count)
                                                        : summary.baseline + " " + count_title;
  // What "time" was, where speedup came from it.
  std::set<std::string> bases;
  for (const auto& c : summary.configurations)
    if (!c.time_from.empty()) bases.insert(c.time_from);
  std::vector<std::string> about;
  if (bases.count("epoch")) about.push_back("epoch times exclude warm-up epochs");
  if (bases.count("run")) about.push_back("run time is each run's start to end");
  if (bases.count("step")) about.push_back("step time is the slowest rank's per profiler step, warm-up steps excluded");
  std::string tail;
  for (const auto& a : about) tail += "; " + a;
  out += fmt::format("{}; speedup against {}{}.\n", scaling, baseline, tail);
  out += render_scaling_models(summary);
  out += render_lost_time(summary);
  out += render_energy_and_time(summary);
  // The op losing most against the roofline, per configuration with traces that record shapes.
  bool roofline_head = false;
  for (const auto& c : summary.configurations) {
    if (c.roofline_ops.empty()) continue;
    if (!roofline_head) out += "Against the roofline (ms per step and rank; profiler shapes):\n";
    roofline_head = true;
    const auto& o = c.roofline_ops.front();
    out += fmt::format("  {} x{}: {} {} loses {:.3f} of its {:.3f} ms ({}-bound)\n", printable(c.label), c.world_size,
                       printable(o.name), printable(o.shapes.size() > 48 ? o.shapes.substr(0, 45) + "..." : o.shapes),
                       o.lost_us / 1000, o.gpu_us / 1000, o.bound);
  }
  return out;
}

std::string render_diagnostics(const Summary& summary, const TableStyle& style) { return render_diagnostics(summary.warnings, style); }

std::string render_diagnostics(const std::vector<Diagnostic>& diagnostics, const TableStyle& style) {
  std::string out;
  for (const auto& folded : fold_repeats(diagnostics)) {
    const Diagnostic& d = folded.first;
    const char* word = d.severity == Severity::error ? "error" : d.severity == Severity::warning ? "warning" : "note";
    const char* color = d.severity == Severity::error ? "\x1b[31m" : d.severity == Severity::warning ? "\x1b[33m" : "\x1b[36m";
    out += style.color ? fmt::format("{}{}\x1b[0m: ", color, word) : fmt::format("{}: ", word);
    out += format_location(folded);
    out += fmt::format(" [{}]\n", d.code);
  }
  return out;
}

}  // namespace scalelens
