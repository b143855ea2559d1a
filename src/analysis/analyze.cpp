// Configurations, baselines, speedup, efficiency, Karp–Flatt and the validity warnings.
#include "analysis/analyze.hpp"
#include "analysis/efficiency_account.hpp"

#include <algorithm>
#include <iterator>
#include <cmath>
#include <filesystem>
#include <map>
#include <set>

#include <fmt/format.h>

#include "common/parallel.hpp"
#include "common/process_memory.hpp"
#include "common/text.hpp"

namespace scalelens {

namespace {

std::optional<double> mean_of(const std::vector<double>& v) {
  if (v.empty()) return std::nullopt;
  double s = 0;
  for (double x : v) s += x;
  return s / static_cast<double>(v.size());
}

Diagnostic config_warning(const ConfigurationSummary& c, std::string code, std::string message,
                          Severity sev = Severity::warning) {
  return Diagnostic{sev, std::move(code), std::move(message), {}, 0, c.key()};
}

// Collects "figure X could not be computed for A, B: reason" into one line per (figure, reason).
class MissingFigures {
 public:
  void add(const std::string& figure, const std::string& reason, const std::string& config) {
    auto& configs = items_[{figure, reason}];
    if (configs.empty() || configs.back() != config) configs.push_back(config);
  }
  void emit(std::vector<Diagnostic>& out) const {
    for (const auto& [what, configs] : items_) {
      std::string list;
      for (std::size_t i = 0; i < configs.size(); ++i) list += (i ? ", " : "") + configs[i];
      out.push_back({Severity::note, "missing-figure", fmt::format("{} not computed for {}: {}", what.first, list, what.second),
                     {}, 0, {}});
    }
  }

 private:
  std::map<std::pair<std::string, std::string>, std::vector<std::string>> items_;
};

// What the collector's "missing" keys (docs/collect.md) leave out of the report, in its words.
std::string collector_figure(std::string_view key) {
  const auto base = key.substr(0, key.find('@'));
  if (base == "gpu") return "GPU utilization and energy";
  if (base == "cpu_energy") return "host (CPU) energy";
  if (base == "samples") return "GPU and host samples";
  if (base == "command") return "the run";
  return fmt::format("GPU readings ({})", base);  // gpuN, gpuN_figures, gpu_selection
}
std::string collector_reason(std::string_view key, const std::string& reason) {
  const auto at = key.find('@');
  return at == std::string_view::npos ? reason : fmt::format("on {}: {}", key.substr(at + 1), reason);
}

// Efficiency above 1 that the times' noise cannot explain: still above 1 with the baseline's time
// at the low end of its 95% CI and this configuration's at the high end of its own. A time without
// a CI (one value) has no noise estimate, so nothing is claimed beyond it.
bool superlinear_beyond_noise(double efficiency, const std::optional<Stat>& base, const std::optional<Stat>& here) {
  if (!base || !here || !(base->mean > 0) || !(here->mean > 0)) return false;
  if (!std::isfinite(base->ci95_low) || !std::isfinite(here->ci95_high)) return false;
  return efficiency * (base->ci95_low / base->mean) * (here->mean / here->ci95_high) > 1;
}

// The time speedup is measured with: epoch time where the baseline has it, else run time, else
// step time (traces alone); "" when it has none.
std::string time_basis(const ConfigurationSummary& c) {
  return c.epoch_time_s ? "epoch" : c.run_time_s ? "run" : c.step_time_s ? "step" : "";
}
std::optional<double> time_of(const ConfigurationSummary& c, const std::string& basis) {
  const auto& s = c.time_on(basis);
  return s ? std::optional<double>(s->mean) : std::nullopt;
}

// Weak scaling when the global batch (by GPU count) grows in proportion to the GPU count; else strong.
std::string scaling_from_batches(const std::vector<std::pair<int, double>>& batches) {
  if (batches.size() < 2) return "strong";
  bool constant_batch = true, constant_per_gpu = true;
  for (auto& [p, b] : batches) {
    constant_batch &= std::fabs(b - batches.front().second) <= 1e-9 * b;
    double per = b / p, per0 = batches.front().second / batches.front().first;
    constant_per_gpu &= std::fabs(per - per0) <= 1e-6 * per0;
  }
  if (!constant_batch && constant_per_gpu) return "weak";
  return "strong";
}

// Whether a label's curve is weak scaling: declared by its runs, or its global batch grows in
// proportion to the GPU count.
std::string detect_scaling(const std::vector<ConfigurationSummary*>& curve, const std::deque<RunSummary>& runs,
                           const std::vector<const Run*>& sources, std::vector<Diagnostic>& warnings) {
  std::set<std::string> declared;
  for (auto* c : curve)
    for (auto i : c->run_indices)
      if (sources[i]->scaling) declared.insert(*sources[i]->scaling);
  if (declared.size() == 1) return *declared.begin();
  if (declared.size() > 1)
    warnings.push_back({Severity::warning, "mixed-scaling",
                        fmt::format("runs of '{}' declare both weak and strong scaling; treated as strong", curve.front()->curve),
                        {}, 0, {}});
  (void)runs;
  std::vector<std::pair<int, double>> batches;
  for (auto* c : curve)
    if (c->global_batch_size) batches.emplace_back(c->world_size, *c->global_batch_size);
  return scaling_from_batches(batches);
}

// Known to have run on CPUs only: scalelens saw its ranks, none was given a GPU, no GPU was sampled
// and no GPU trace was read. Foreign logs (MLPerf, itwinai) say nothing of it and count GPUs.
// Around a launcher the wrapper's record is not a rank's: there, the monitor must also have found
// no GPU on the node.
bool used_no_gpu(const Run& run) {
  if (run.format != "scalelens" || run.ranks.empty() || run.has_gpus() || run.gpus_per_node || !run.gpu_model.empty())
    return false;
  if (!run.launcher.empty() && !run.details().missing.contains("gpu")) return false;
  for (const auto& r : run.ranks)
    if (!r.devices.empty()) return false;
  for (const auto& b : run.breakdown)
    if (!b.from_mpi) return false;
  return true;
}

std::string join(const std::vector<std::string>& parts, std::string_view sep = ", ") {
  std::string out;
  for (const auto& p : parts) out += (out.empty() ? "" : std::string(sep)) + p;
  return out;
}

template <class Set>
std::string list_of(const Set& set) {
  std::vector<std::string> parts;
  for (const auto& x : set) parts.push_back(fmt::format("{}", x));
  return join(parts);
}

// How a run enters the scaling mode split: concurrent instances are weak scaling by definition;
// other runs as declared ("" when not).
std::string mode_of(const RunSummary& r, const Run& src) {
  if (!r.details().instance_of.empty()) return "weak";
  return src.scaling.value_or("");
}

// The deepest folder holding every path (paths compared component by component).
std::string common_folder(const std::vector<std::string>& paths) {
  if (paths.empty()) return {};
  std::filesystem::path common = std::filesystem::path(paths.front()).parent_path();
  for (const auto& p : paths) {
    std::filesystem::path here = std::filesystem::path(p).parent_path(), prefix;
    auto a = common.begin(), b = here.begin();
    for (; a != common.end() && b != here.end() && *a == *b; ++a, ++b) prefix /= *a;
    common = prefix;
  }
  return common.string();
}

// Repeats that disagree this much are more likely different inputs pooled by mistake than noise:
// the message lists what could tell them apart.
std::string mixed_inputs_message(const ConfigurationSummary& c, const Stat& spread, const std::deque<RunSummary>& runs,
                                 std::string_view basis) {
  std::set<std::string> systems, benchmarks, instance_ids;
  std::set<double> batches;
  for (auto i : c.run_indices) {
    const auto& r = runs[i];
    systems.insert(r.system.empty() ? "unknown" : r.system);
    benchmarks.insert(r.details().benchmark.empty() ? "unknown" : r.details().benchmark);
    if (r.global_batch_size) batches.insert(*r.global_batch_size);
    if (r.details().instance_id) instance_ids.insert(std::to_string(*r.details().instance_id));
  }
  return fmt::format("its {} {} {} times disagree wildly (coefficient of variation {:.0f}%, over 25%): possibly mixed "
                     "inputs; found system {}, benchmark {}, global batch {}, instance ids {}",
                     spread.n, c.instances ? "instances'" : "runs'", basis, 100 * spread.cv(), list_of(systems), list_of(benchmarks),
                     batches.empty() ? std::string("unknown") : list_of(batches),
                     instance_ids.empty() ? std::string("none") : list_of(instance_ids));
}

// One line on where a configuration's figures came from (DESIGN.md, "provenance").
std::string provenance_of(const ConfigurationSummary& c, const std::string& unit, const std::deque<RunSummary>& runs,
                          const std::vector<const Run*>& sources, const std::map<std::string, std::string>& split_notes,
                          const std::vector<Diagnostic>& ingest_notes) {
  std::vector<std::string> paths;
  std::set<std::string> formats, ws_from, system_from, runs_from, label_from;
  std::set<std::string> instance_folders;
  std::size_t warmup = 0, warmup_steps = 0, with_uuid = 0, by_index = 0;
  for (auto i : c.run_indices) {
    const auto& r = runs[i];
    if (!r.details().instance_of.empty()) instance_folders.insert(r.details().instance_of);
    const auto& src = *sources[i];
    paths.push_back(r.path);
    formats.insert(r.format.empty() ? "unknown" : r.format);
    auto ws = src.detected_from.find("world_size");
    ws_from.insert(r.world_size_from_ranks         ? "the ranks in its files (ranks-beyond-world-size)"
                   : ws != src.detected_from.end() ? ws->second
                                                   : "world_size given");
    if (auto sys = src.detected_from.find("system"); sys != src.detected_from.end()) system_from.insert(sys->second);
    warmup += r.warmup_excluded;
    warmup_steps += r.warmup_steps_excluded;
    if (auto how = src.detected_from.find("run"); how != src.detected_from.end()) runs_from.insert(how->second);
    if (auto how = src.detected_from.find("label"); how != src.detected_from.end()) label_from.insert(how->second);
    if (src.gpu_digest) with_uuid += src.gpu_digest->with_uuid, by_index += src.gpu_digest->by_index;
    for (const auto& g : src.gpus) ++(g.uuid.empty() ? by_index : with_uuid);
  }
  std::vector<std::string> parts;
  const auto folder = common_folder(paths);
  parts.push_back(paths.size() == 1 ? fmt::format("file {} ({} reader)", paths.front(), list_of(formats))
                                    : fmt::format("{} inputs under {} ({} reader)", paths.size(),
                                                  folder.empty() ? std::string(".") : folder, list_of(formats)));
  if (!c.system.empty())
    parts.push_back(fmt::format("system {}{}", c.system, system_from.empty() ? "" : " from " + list_of(system_from)));
  if (!runs_from.empty()) parts.push_back("runs formed from " + list_of(runs_from));
  if (!label_from.empty()) parts.push_back(fmt::format("label '{}' from {}", c.label, list_of(label_from)));
  parts.push_back(c.instances ? fmt::format("{}: {} instances × {} per instance ({})", unit, *c.instances, *c.gpus_per_instance, list_of(ws_from))
                              : fmt::format("{}: {} per run ({})", unit, c.world_size, list_of(ws_from)));
  if (with_uuid || by_index)
    parts.push_back(fmt::format("GPU samples told apart by {}", with_uuid && by_index ? "UUID where known, else host and index"
                                                                : with_uuid         ? "UUID"
                                                                                    : "host and index"));
  std::vector<std::string> excluded;
  if (warmup) excluded.push_back(fmt::format("{} warm-up epoch{}", warmup, warmup == 1 ? "" : "s"));
  if (warmup_steps && time_basis(c) == "step")
    excluded.push_back(fmt::format("{} warm-up step{}", warmup_steps, warmup_steps == 1 ? "" : "s"));
  std::size_t pruned = 0;
  for (const auto& d : ingest_notes)
    if (d.code == "pruned-instance")
      pruned += instance_folders.contains(std::filesystem::path(d.path).parent_path().parent_path().string());
  if (pruned) excluded.push_back(fmt::format("{} pruned instance{} (pruned_results/)", pruned, pruned == 1 ? "" : "s"));
  if (auto split = split_notes.find(c.label); split != split_notes.end()) excluded.push_back(split->second);
  parts.push_back("excluded: " + (excluded.empty() ? std::string("nothing") : join(excluded, "; ")));
  return join(parts, "; ");
}

// Groups runs into configurations: identity (label, system, world size), DESIGN.md. The runs of
// one curve (label, system) that differ in benchmark, scaling mode or GPU model, or (strong
// scaling) in global batch at one world size, are not repeats: their labels get a tag naming the
// difference ("ddp [H100]"), which makes separate curves, and a warning says why.
void form_configurations(Summary& summary, const std::vector<const Run*>& sources, const std::optional<std::string>& forced_scaling,
                         std::vector<Diagnostic>& warnings, std::map<std::string, std::string>& split_notes) {
  auto& runs = summary.runs;
  // Instances of one run together make one point: instances × GPUs per instance.
  std::map<std::string, int> instance_gpus;
  for (const auto& r : runs)
    if (!r.details().instance_of.empty()) instance_gpus[r.details().instance_of] += *r.world_size;
  auto world_size_of = [&](const RunSummary& r) {
    return r.details().instance_of.empty() ? *r.world_size : instance_gpus[r.details().instance_of];
  };

  std::map<std::pair<std::string, std::string>, std::vector<std::size_t>> curves;
  for (std::size_t i = 0; i < runs.size(); ++i) curves[{runs[i].label, runs[i].system}].push_back(i);
  // Names that differ only in case stay apart (they may be meant), but the rows look alike: say so.
  std::map<std::string, std::set<std::string>> label_spellings, system_spellings;  // lower case → as written
  for (const auto& [curve, members] : curves) {
    (void)members;
    label_spellings[to_lower(curve.first)].insert(curve.first);
    system_spellings[to_lower(curve.second)].insert(curve.second);
  }
  for (const auto& [what, spellings] : {std::pair{"labels", &label_spellings}, std::pair{"systems", &system_spellings}})
    for (const auto& [lower, written] : *spellings) {
      (void)lower;
      if (written.size() < 2) continue;
      std::vector<std::string> quoted;
      for (const auto& w : written) quoted.push_back("'" + w + "'");
      warnings.push_back({Severity::warning, "names-differ-in-case",
                          fmt::format("{} {} differ only in case: kept apart as separate curves (rename one where they are one)",
                                      what, join(quoted, " and ")),
                          {}, 0, {}});
    }
  for (const auto& curve_members : curves) {
    // Named, not a structured binding: the lambdas below use them, which clang 14 (the fuzz build)
    // does not allow of a binding.
    const auto& curve = curve_members.first;
    const auto& members = curve_members.second;
    std::set<std::string> benchmarks, divisions, modes, models;
    std::vector<std::pair<int, double>> undeclared_batches;
    std::set<int> undeclared_sizes;
    bool instances = false, undeclared = false;
    for (auto i : members) {
      const auto& r = runs[i];
      if (!r.details().benchmark.empty()) benchmarks.insert(r.details().benchmark);
      if (!r.details().division.empty()) divisions.insert(r.details().division);
      const auto mode = mode_of(r, *sources[i]);
      if (!mode.empty()) modes.insert(mode);
      instances |= !r.details().instance_of.empty();
      undeclared |= mode.empty();
      if (mode.empty() && r.global_batch_size) {
        undeclared_batches.emplace_back(world_size_of(r), *r.global_batch_size);
        undeclared_sizes.insert(world_size_of(r));
      }
      if (!r.gpu_model.empty()) models.insert(r.gpu_model);
    }
    // Runs that declare no mode beside runs that do are taken as their repeats, unless their own
    // global batches (at two GPU counts or more) say the other mode, by the rule that detects a
    // curve's mode: a strong-scaling study is not a weak one's repeats for lack of a "scaling" field.
    const std::string undeclared_mode =
        undeclared && !modes.empty() && undeclared_sizes.size() > 1 ? scaling_from_batches(undeclared_batches) : "";
    const bool undeclared_differ = !undeclared_mode.empty() && !modes.contains(undeclared_mode);
    const bool by_benchmark = benchmarks.size() > 1, by_division = divisions.size() > 1, by_model = models.size() > 1;
    const bool by_mode = modes.size() > 1 || (instances && undeclared) || undeclared_differ;
    // Global batches are compared at one world size within each mode kept apart, in either mode: at
    // one world size, weak-scaling runs of two global batches ran two batches per GPU, two problems
    // whose times are not repeats of one thing.
    std::map<std::pair<std::string, int>, std::set<double>> batches_at;
    for (auto i : members) {
      const auto& r = runs[i];
      const auto mode = mode_of(r, *sources[i]);
      if (r.global_batch_size) batches_at[{by_mode ? mode : "", world_size_of(r)}].insert(*r.global_batch_size);
    }
    bool by_batch = false;
    std::set<double> batches;
    for (const auto& [at_size, at] : batches_at) {
      (void)at_size;
      by_batch |= at.size() > 1;
      batches.insert(at.begin(), at.end());
    }
    // Runs that declare no mode, pooled with runs that do (the same label once any split is made),
    // are taken for their repeats: said, per label they share.
    auto say_partly_declared = [&] {
      if (!undeclared || modes.empty() || by_mode) return;
      std::map<std::string, std::vector<const RunSummary*>> without;  // label → its undeclared runs
      std::set<std::string> declared_labels;
      for (auto i : members)
        if (mode_of(runs[i], *sources[i]).empty()) without[runs[i].label].push_back(&runs[i]);
        else declared_labels.insert(runs[i].label);
      const auto mode = *modes.begin();
      for (const auto& [label, them] : without) {
        if (!declared_labels.contains(label)) continue;
        warnings.push_back({Severity::warning, "scaling-partly-declared",
                            fmt::format("runs of '{}'{} differ in their scaling declaration: {} declare{} none ({}{}) beside "
                                        "runs that declare \"{}\"; taken for the same experiment, pooled with them and "
                                        "analysed as {} scaling{}; add \"scaling\" to their scalelens.json, or label them "
                                        "apart, where they are not",
                                        label, curve.second.empty() ? std::string() : " on " + curve.second, them.size(),
                                        them.size() == 1 ? "s" : "", them.front()->path, them.size() > 1 ? ", ..." : "", mode,
                                        forced_scaling.value_or(mode),
                                        undeclared_mode.empty()
                                            ? " (their global batches, at fewer than two GPU counts, cannot tell the mode)"
                                            : fmt::format(" (their global batches scale as {} scaling's do)", undeclared_mode)),
                            {}, 0, {}});
      }
    };
    if (!by_benchmark && !by_division && !by_model && !by_mode && !by_batch) {
      say_partly_declared();
      continue;
    }
    // The mode each run's batch is told apart in: forced, its own, or the one its curve declares.
    auto analysed_as = [&](std::size_t i) {
      const auto mode = mode_of(runs[i], *sources[i]);
      return forced_scaling ? *forced_scaling : !mode.empty() || by_mode || modes.size() != 1 ? mode : *modes.begin();
    };
    // Runs whose mode nothing states are told apart as their batches read: by the batch per GPU where
    // that makes fewer families across their GPU counts than the global batch does (32 and 64 per
    // GPU at 1 and 2 GPUs: each family a weak-scaling curve, as detect_scaling then reads it; by
    // global batch, "batch 64" would join 64 per GPU at 1 GPU with 32 per GPU at 2), else by the
    // global batch (strong scaling, the mode their curve is analysed in where the batches cannot tell).
    std::set<double> undeclared_global, undeclared_per_gpu;
    for (auto i : members)
      if (analysed_as(i).empty() && runs[i].global_batch_size) {
        undeclared_global.insert(*runs[i].global_batch_size);
        undeclared_per_gpu.insert(*runs[i].global_batch_size / *runs[i].world_size);
      }
    const bool undeclared_per_gpu_tags = undeclared_per_gpu.size() < undeclared_global.size();
    std::set<std::string> new_labels;
    for (auto i : members) {
      auto& r = runs[i];
      std::vector<std::string> tags;
      if (by_benchmark && !r.details().benchmark.empty()) tags.push_back(r.details().benchmark);
      if (by_division && !r.details().division.empty()) tags.push_back(r.details().division);
      const auto mode = mode_of(r, *sources[i]);
      if (by_mode && !mode.empty()) tags.push_back(mode);
      if (by_model && !r.gpu_model.empty()) tags.push_back(r.gpu_model);
      // Weak scaling's runs are told apart by their batch per GPU, which its curve keeps (its global
      // batch grows with the GPUs); strong scaling's by the global batch.
      const auto as = analysed_as(i);
      if (by_batch && r.global_batch_size)
        tags.push_back(as == "weak" || (as.empty() && undeclared_per_gpu_tags)
                           ? fmt::format("batch {:g} per GPU", *r.global_batch_size / *r.world_size)
                           : fmt::format("batch {}", *r.global_batch_size));
      if (!tags.empty()) r.label += " [" + join(tags) + "]";
      new_labels.insert(r.label);
    }
    std::vector<std::string> why;
    if (by_benchmark) why.push_back(fmt::format("benchmark ({})", list_of(benchmarks)));
    if (by_division) why.push_back(fmt::format("MLPerf division ({})", list_of(divisions)));
    if (by_mode)
      why.push_back(fmt::format("scaling mode ({}{})", list_of(modes),
                                undeclared_differ ? fmt::format(", and {} by the global batch of the runs that declare none", undeclared_mode)
                                : undeclared      ? ", undeclared"
                                                  : ""));
    if (by_model) why.push_back(fmt::format("GPU model ({})", list_of(models)));
    if (by_batch) why.push_back(fmt::format("global batch at the same world size ({})", list_of(batches)));
    const auto where = curve.second.empty() ? std::string() : fmt::format(" on {}", curve.second);
    const auto note = fmt::format("runs of '{}'{} differ in {}: not repeats of one configuration, so split into {}",
                                  curve.first, where, join(why, " and "), list_of(new_labels));
    warnings.push_back({Severity::warning, "configuration-split", note, {}, 0, {}});
    for (const auto& l : new_labels) split_notes[l] = note;
    say_partly_declared();
  }

  std::map<std::tuple<std::string, std::string, int>, std::size_t> index;
  for (std::size_t i = 0; i < runs.size(); ++i) {
    const auto& r = runs[i];
    const int p = world_size_of(r);
    auto [it, inserted] = index.emplace(std::make_tuple(r.label, r.system, p), summary.configurations.size());
    if (inserted) {
      ConfigurationSummary c;
      c.label = r.label;
      c.system = r.system;
      c.world_size = p;
      summary.configurations.push_back(c);
    }
    summary.configurations[it->second].run_indices.push_back(i);
  }
  std::sort(summary.configurations.begin(), summary.configurations.end(), [](const auto& a, const auto& b) {
    return std::tie(a.label, a.system, a.world_size) < std::tie(b.label, b.system, b.world_size);
  });
  std::set<std::string> systems;
  for (const auto& c : summary.configurations) systems.insert(c.system);
  summary.systems.assign(systems.begin(), systems.end());
  constexpr std::string_view kUnknownSystem = "unknown system";  // a curve's system where its runs state none
  auto system_name = [&](const std::string& system) { return system.empty() ? std::string(kUnknownSystem) : system; };
  for (auto& c : summary.configurations)
    c.curve = systems.size() > 1 ? fmt::format("{} @ {}", c.label, system_name(c.system)) : c.label;
  // Names that meet ("x @ y" on z and x on "y @ z" both read "x @ y @ z"; x on "unknown system" and
  // x on no system) would be one curve in every output, which joins and draws curves by name:
  // those curves' names quote the label and system instead ("'x @ y' @ 'z'"), said in a note.
  std::map<std::string, std::set<std::pair<std::string, std::string>>> named;  // name → its (label, system)s
  for (const auto& c : summary.configurations) named[c.curve].emplace(c.label, c.system);
  std::set<std::string> taken;
  for (const auto& [name, curves] : named)
    if (curves.size() == 1) taken.insert(name);
  std::map<std::pair<std::string, std::string>, std::string> quoted;
  for (const auto& [name, curves] : named) {
    if (curves.size() < 2) continue;
    std::vector<std::string> names;
    for (const auto& [label, system] : curves) {
      const auto plain = fmt::format("'{}' @ {}", label, system.empty() ? std::string(kUnknownSystem) : "'" + system + "'");
      auto unique = plain;
      for (int k = 2; taken.contains(unique); ++k) unique = fmt::format("{} #{}", plain, k);  // quotes in the names too
      taken.insert(unique);
      quoted[{label, system}] = unique;
      names.push_back("\"" + unique + "\"");
    }
    warnings.push_back({Severity::note, "curve-names-quoted",
                        fmt::format("{} curves would all be named \"{}\" (a label or system holds \" @ \" or reads \"{}\"): "
                                    "named {} instead, each label and system quoted",
                                    curves.size(), name, kUnknownSystem, list_first(names, names.size())),
                        {}, 0, {}});
  }
  for (auto& c : summary.configurations) {
    if (auto it = quoted.find({c.label, c.system}); it != quoted.end()) c.curve = it->second;
    for (auto i : c.run_indices) runs[i].curve = c.curve;
  }
}

// The configurations of each curve, by world size; the curves in configuration order.
using Curves = std::vector<std::pair<std::string, std::vector<ConfigurationSummary*>>>;

// The scaling model of each curve (DESIGN.md, "Scaling model"): each run's own time on the curve's
// time basis, per configuration; predictions turned into speedup, efficiency and throughput.
void model_curves(Summary& summary, Curves& curves, const AnalysisOptions& options,
                  std::vector<Diagnostic>& warnings) {
  for (auto& [name, curve] : curves) {
    if (curve.empty()) continue;
    const std::string basis = curve.front()->time_from;
    if (basis.empty()) continue;
    std::vector<ScalingPoint> points;
    for (const auto* c : curve) {
      ScalingPoint pt{c->world_size, {}};
      for (auto i : c->run_indices)
        if (auto t = summary.runs[i].time_on(basis)) pt.times.push_back(*t);
      if (!pt.times.empty()) points.push_back(std::move(pt));
    }
    CurveModel m;
    m.curve = name;
    m.label = curve.front()->label;
    m.system = curve.front()->system;
    m.scaling = curve.front()->scaling;
    m.time_from = basis;
    ScalingOptions so;
    so.predict = options.predict;
    so.replicates = options.model_replicates;
    so.weak = m.scaling == "weak";
    so.unit = summary.world_size_unit;
    // A seed of the curve's name: reports are reproducible, and curves do not share random draws.
    so.seed ^= std::hash<std::string>{}(name);
    m.model = fit_scaling_model(points, so);
    if (m.model.self_check_failed() && !m.model.predictions.empty())
      warnings.push_back({Severity::warning, "model-self-check-failed",
                          fmt::format("the scaling model of '{}' {}: its predictions are doubtful, and no recommendation rests on them",
                                      name, m.model.self_check_failure()),
                          {}, 0, {}});
    // The baseline (speedup) and the largest configuration with a throughput (throughput).
    const ConfigurationSummary* base = nullptr;
    const ConfigurationSummary* with_throughput = nullptr;
    for (const auto& c : summary.configurations)
      if (curve.front()->baseline_world_size && c.curve == curve.front()->baseline_label && c.world_size == *curve.front()->baseline_world_size)
        base = &c;
    for (const auto* c : curve)
      if (c->throughput_samples_per_s) with_throughput = c;
    const auto t_base = base ? time_of(*base, basis) : std::nullopt;
    for (const auto* from : {&m.model.predictions, &m.model.band})
    for (const auto& pr : *from) {
      CurvePrediction cp;
      cp.world_size = pr.p;
      cp.time_s = pr.time;
      cp.time_lower_s = pr.lower;
      cp.time_upper_s = pr.upper;
      // Shorter time = higher speedup and throughput: the time interval's bounds swap.
      auto ratio = [](double num, double t) { return t > 0 ? std::optional<double>(num / t) : std::nullopt; };
      if (t_base && !so.weak) {
        const double p0 = *curve.front()->baseline_world_size;
        cp.speedup = ratio(*t_base, pr.time);
        cp.speedup_lower = ratio(*t_base, pr.upper);
        cp.speedup_upper = ratio(*t_base, pr.lower);
        if (cp.speedup) cp.efficiency = *cp.speedup * p0 / pr.p;
        if (cp.speedup_lower) cp.efficiency_lower = *cp.speedup_lower * p0 / pr.p;
        if (cp.speedup_upper) cp.efficiency_upper = *cp.speedup_upper * p0 / pr.p;
      }
      if (with_throughput && m.model.fit) {
        // Samples per unit of time scale as work / time: the same work (strong) or p/p_ref times it (weak).
        const double pr_ref = with_throughput->world_size;
        const double work = *with_throughput->throughput_samples_per_s * (*m.model.fit)(pr_ref) * (so.weak ? pr.p / pr_ref : 1.0);
        cp.throughput = ratio(work, pr.time);
        cp.throughput_lower = ratio(work, pr.upper);
        cp.throughput_upper = ratio(work, pr.lower);
      }
      (from == &m.model.predictions ? m.predictions : m.band).push_back(cp);
    }
    summary.curves.push_back(std::move(m));
  }
}

// What only a run's summary needed from it, let go once the summary is made (analyze_releasing):
// its epochs, and its GPUs' figures. Its digest keeps what the rest of the analysis and the
// report's page read: that it has GPUs, how they were told apart, and the page's series. Its path
// goes too: the rest of the analysis and the page read its summary's copy (a long path is a
// block of its own, held twice a run).
void release_summarized(Run& run) {
  std::string().swap(run.path);
  std::vector<Interval>().swap(run.epochs);
  std::vector<EpochRow>().swap(run.epoch_table);
  if (run.step_table && !run.step_table->slowest.empty()) {  // the page's charts stay
    auto kept = std::make_shared<StepTable>();
    kept->ranks = run.step_table->ranks;
    run.step_table = std::move(kept);
  }
  if (run.gpu_digest && run.gpu_digest->figures) {
    // A copy (the digest is shared and const): where its page text waits in memory, one run's is
    // held twice for a moment.
    auto kept = std::make_shared<GpuDigest>(*run.gpu_digest);
    kept->figures.reset();
    run.gpu_digest = std::move(kept);
  }
}

Summary analyze_study(const Study& study, const AnalysisOptions& options, Study* releasing) {
  Summary summary;
  summary.warnings = study.diagnostics;
  if (options.baseline_gpus) summary.baseline = std::to_string(*options.baseline_gpus);
  else if (options.baseline == BaselineKind::common) summary.baseline = "common";

  // Runs, then configurations (label, world size).
  // Runs are independent and a large study has thousands, each with its GPU series to
  // integrate: summarized in parallel, their warnings kept in study order.
  std::vector<Diagnostic> run_warnings;
  std::vector<const Run*> sources;
  std::vector<std::vector<Diagnostic>> warnings_of(study.runs.size());
  std::vector<std::size_t> study_index;
  for (std::size_t i = 0; i < study.runs.size(); ++i) {
    const auto& run = study.runs[i];
    if (!run.world_size) {
      // A run whose manifest could not be read or parsed: its `bad-manifest` error names the file,
      // why, and that the run is left out; "add world_size to a scalelens.json" said there was none.
      if (!run.manifest_unread)
        warnings_of[i].push_back({Severity::warning, "unknown-world-size",
                                  "the run's GPU count (world size) is unknown, so it cannot be placed on a scaling curve; "
                                  "add \"world_size\" to a scalelens.json in or above it",
                                  run.path, 0, {}});
      continue;
    }
    sources.push_back(&run);
    study_index.push_back(i);
  }
  // What the world size counts, before any message says a count (provenance, batch-changed).
  if (!sources.empty() && std::all_of(sources.begin(), sources.end(), [](const Run* r) { return used_no_gpu(*r); }))
    summary.world_size_unit = "ranks";
  // A batch at a time, each summary moved into its own node as its batch ends, so that a study
  // whose runs let go of what their summaries took (analyze_releasing) never holds both whole, and
  // the summaries reuse what the released runs left (issue 17, part 2).
  const unsigned threads = default_threads(options.threads);
  const std::size_t batch = std::size_t{64} * threads;
  std::vector<RunSummary> made(std::min(batch, sources.size()));
  for (std::size_t first = 0; first < sources.size(); first += batch) {
    const std::size_t n = std::min(batch, sources.size() - first);
    parallel_for(n, threads, [&](std::size_t i) {
      const std::size_t k = first + i;
      made[i] = summarize_run(*sources[k], options, warnings_of[study_index[k]], summary.world_size_unit);
      if (made[i].label.empty()) made[i].label = "unlabelled";
      if (releasing) release_summarized(releasing->runs[study_index[k]]);
    });
    for (std::size_t i = 0; i < n; ++i) summary.runs.push_back(std::move(made[i]));
    if (releasing) give_back_freed_memory();  // the released runs' pages, before the next batch's summaries
  }
  decltype(made)().swap(made);
  std::vector<Diagnostic> config_warnings;
  std::map<std::string, std::string> split_notes;  // curve → why its runs were split from others
  form_configurations(summary, sources, options.scaling, config_warnings, split_notes);
  // A run's warnings name the configuration it is in, as the table, summary.json and the page give
  // it: at the world size its ranks placed it at (not its stated one), its label as tagged where
  // runs were split, its curve's system where there are several, its instances' GPUs together.
  for (const auto& c : summary.configurations) {
    const std::string key = c.key();
    for (const std::size_t i : c.run_indices)
      for (auto& w : warnings_of[study_index[i]]) w.configuration = key;
  }
  // Moved, not copied: a study whose every run has a warning holds thousands (issue 17, part 2).
  for (auto& w : warnings_of) run_warnings.insert(run_warnings.end(), std::make_move_iterator(w.begin()), std::make_move_iterator(w.end()));
  decltype(warnings_of)().swap(warnings_of);

  MissingFigures missing;
  for (auto& c : summary.configurations) {
    std::vector<double> epochs, run_times, step_times, utils_mean, j_per_sample, peak_memory;
    std::vector<const SparseUtilHistogram*> util_time_shares;
    std::vector<double> score, raw, overlap, exposed, idle, spread, mfu, wh_per_gpu, comm_wait, exposed_wait;
    std::vector<BreakdownShares> shares;
    std::map<std::pair<std::string, std::string>, std::pair<OpLoss, int>> roofline_ops, op_times;  // op → sums, runs
    std::map<std::pair<std::string, int>, BandwidthPoint> bandwidth;  // (collective, size bin) → sums
    std::optional<ProfilerAverages> averages;  // pooled over runs, as itwinai pools them
    std::set<int> nodes, per_node;
    std::set<double> batches;
    std::set<std::string> models;
    double util_min = 0, util_max = 0;
    bool have_util = false;
    // Extensive figures (throughput, energy, nodes) add up over the concurrent instances of a run,
    // then are averaged over runs; an ordinary run is its own group.
    std::map<std::string, double> throughput_of, energy_wh_of, host_wh_of;
    std::map<std::string, int> nodes_of;
    std::map<std::string, std::pair<std::int64_t, std::int64_t>> span_of;  // instances' first start, last stop
    std::map<std::string, std::size_t> instances_of;
    std::set<int> instance_sizes;
    // Each run's (or instance's) own time per basis, for the consistency check on the
    // configuration's basis: a run without epochs gave its run time, 4× its epochs' mean, to the
    // spread of the others' epoch means (a 0.9% spread read as 84%).
    std::map<std::string, std::vector<double>> per_repeat;
    // Runs without an epoch time, or without GPU energy: the configuration's then rests on the others.
    struct RunsLacking {
      std::size_t count = 0;
      const RunSummary* first = nullptr;  // named in the warning
      void add(const RunSummary& r) {
        if (count++ == 0) first = &r;
      }
    } no_epochs, no_energy;
    for (auto i : c.run_indices) {
      const auto& r = summary.runs[i];
      const auto group = r.details().instance_of.empty() ? "#" + std::to_string(i) : r.details().instance_of;
      for (const auto& [key, reason] : sources[i]->details().missing)
        missing.add(collector_figure(key), collector_reason(key, reason), c.key());
      epochs.insert(epochs.end(), r.epoch_times_s.begin(), r.epoch_times_s.end());
      if (r.epoch_times_s.empty()) no_epochs.add(r);
      if (r.run_time_s) run_times.push_back(*r.run_time_s);
      step_times.insert(step_times.end(), r.step_times_s.begin(), r.step_times_s.end());
      for (const char* basis : {"epoch", "run", "step"})
        if (auto t = r.time_on(basis)) per_repeat[basis].push_back(*t);
      if (r.throughput_samples_per_s) throughput_of[group] += *r.throughput_samples_per_s;
      if (!r.details().instance_of.empty()) {
        ++instances_of[group];
        instance_sizes.insert(*r.world_size);
        const auto& src = *sources[i];
        if (src.start_ns && src.end_ns) {
          auto [it, fresh] = span_of.emplace(group, std::make_pair(*src.start_ns, *src.end_ns));
          if (!fresh) it->second = {std::min(it->second.first, *src.start_ns), std::max(it->second.second, *src.end_ns)};
        }
      }
      if (r.peak_gpu_memory_bytes) peak_memory.push_back(*r.peak_gpu_memory_bytes);
      if (r.gpu_util_pct) {
        utils_mean.push_back(r.gpu_util_pct->mean);
        if (r.gpu_util_time_share) util_time_shares.push_back(&*r.gpu_util_time_share);
        util_min = have_util ? std::min(util_min, r.gpu_util_pct->min) : r.gpu_util_pct->min;
        util_max = have_util ? std::max(util_max, r.gpu_util_pct->max) : r.gpu_util_pct->max;
        have_util = true;
      }
      if (r.energy_j) energy_wh_of[group] += *r.energy_j / 3600;
      else no_energy.add(r);
      if (r.energy_j_per_sample) j_per_sample.push_back(*r.energy_j_per_sample);
      if (r.energy_j_per_gpu) wh_per_gpu.push_back(*r.energy_j_per_gpu / 3600);
      c.energy_extrapolated |= r.energy_extrapolated;
      if (r.details().profiler_averages) add_to(averages, *r.details().profiler_averages);
      if (r.host_energy_j) host_wh_of[group] += *r.host_energy_j / 3600;
      const RunTraceFigures& tr = r.trace();
      if (tr.computation_score) score.push_back(*tr.computation_score);
      if (tr.comp_comm_raw_share) raw.push_back(*tr.comp_comm_raw_share);
      if (tr.overlap_ratio) overlap.push_back(*tr.overlap_ratio);
      if (tr.exposed_comm_share) exposed.push_back(*tr.exposed_comm_share);
      if (tr.idle_share) idle.push_back(*tr.idle_share);
      if (tr.straggler_spread) spread.push_back(*tr.straggler_spread);
      if (tr.mfu) mfu.push_back(*tr.mfu);
      if (tr.comm_wait_share) comm_wait.push_back(*tr.comm_wait_share);
      if (tr.exposed_comm_wait_share) exposed_wait.push_back(*tr.exposed_comm_wait_share);
      if (tr.breakdown_shares) shares.push_back(*tr.breakdown_shares);
      for (auto [list, into] : {std::pair{&tr.roofline_ops, &roofline_ops}, std::pair{&tr.op_times, &op_times}})
        for (const auto& o : *list) {
          auto& [t, n] = (*into)[{o.name, o.shapes}];
          if (n == 0) t = OpLoss{o.name, o.shapes, o.bound, 0, 0};
          t.gpu_us += o.gpu_us;
          t.lost_us += o.lost_us;
          ++n;
        }
      for (const auto& p : tr.collective_bandwidth) {
        auto& t = bandwidth[{p.collective, std::ilogb(p.bytes)}];
        t.collective = p.collective;
        const auto n = static_cast<double>(p.calls);
        t.bytes += p.bytes * n;
        t.busbw_gbps += p.busbw_gbps * n;
        t.calls += p.calls;
      }
      if (r.nodes) nodes_of[group] += *r.nodes;
      if (r.gpus_per_node) per_node.insert(*r.gpus_per_node);
      if (r.global_batch_size) batches.insert(*r.global_batch_size);
      if (!r.gpu_model.empty()) models.insert(r.gpu_model);
    }
    auto values = [](const auto& by_group) {
      std::vector<double> v;
      for (const auto& [g, x] : by_group) v.push_back(x);
      return v;
    };
    for (const auto& [g, n] : nodes_of) nodes.insert(n);
    std::set<std::string> groups;  // runs: the instances of one count once
    for (auto i : c.run_indices) {
      const std::string& of = summary.runs[i].details().instance_of;
      groups.insert(of.empty() ? "#" + std::to_string(i) : of);
    }
    c.runs = groups.size();
    c.epoch_time_s = describe(epochs);
    c.run_time_s = describe(run_times);
    c.step_time_s = describe(step_times);
    c.throughput_samples_per_s = mean_of(values(throughput_of));
    if (!instances_of.empty()) {
      // MLPerf HPC weak scaling (throughput metric): M models trained concurrently, TTTa = last
      // run_stop − first run_start over them, score M / TTTa in models per minute.
      std::vector<double> counts, ttta, rates;
      for (const auto& [g, n] : instances_of) {
        counts.push_back(static_cast<double>(n));
        auto span = span_of.find(g);
        if (span == span_of.end() || span->second.second <= span->second.first) continue;
        const double t = static_cast<double>(span->second.second - span->second.first) * 1e-9;
        ttta.push_back(t);
        rates.push_back(static_cast<double>(n) / (t / 60));
      }
      c.instances = static_cast<std::size_t>(std::lround(*mean_of(counts)));
      c.gpus_per_instance = *instance_sizes.begin();
      c.time_to_train_all_s = mean_of(ttta);
      c.models_per_minute = mean_of(rates);
      if (instance_sizes.size() > 1)
        config_warnings.push_back(config_warning(c, "inconsistent-runs",
            fmt::format("its instances used different GPU counts ({})", list_of(instance_sizes))));
    }
    if (c.throughput_samples_per_s) c.throughput_per_gpu = *c.throughput_samples_per_s / c.world_size;
    if (have_util) c.gpu_util_pct = RangeStat{*mean_of(utils_mean), util_min, util_max};
    if (const auto shares = mean_of_shares(util_time_shares)) c.gpu_util_percentiles = percentiles_of(*shares);
    c.peak_gpu_memory_bytes = mean_of(peak_memory);
    c.energy_wh = mean_of(values(energy_wh_of));
    c.energy_j_per_sample = mean_of(j_per_sample);
    c.energy_wh_per_gpu = mean_of(wh_per_gpu);
    // itwinai's formula (scalability_report/utils.py get_computation_vs_other_data), without its 1e-10.
    if (averages && averages->total_us - averages->profiler_step_us > 0)
      c.itwinai_computation_fraction = averages->aten_us / (averages->total_us - averages->profiler_step_us);
    c.host_energy_wh = mean_of(values(host_wh_of));
    c.computation_score = mean_of(score);
    c.comp_comm_raw_share = mean_of(raw);
    c.overlap_ratio = mean_of(overlap);
    c.exposed_comm_share = mean_of(exposed);
    c.idle_share = mean_of(idle);
    c.straggler_spread = mean_of(spread);
    c.mfu = mean_of(mfu);
    c.comm_wait_share = mean_of(comm_wait);
    c.exposed_comm_wait_share = mean_of(exposed_wait);
    if (!shares.empty()) {
      BreakdownShares mean;
      double BreakdownShares::* const part[] = {&BreakdownShares::computation, &BreakdownShares::overlapped_comm,
                                                &BreakdownShares::exposed_comm, &BreakdownShares::memory,
                                                &BreakdownShares::idle, &BreakdownShares::other};
      for (auto member : part) {
        double sum = 0;
        for (const auto& s : shares) sum += s.*member;
        mean.*member = sum / static_cast<double>(shares.size());
      }
      c.breakdown_shares = mean;
    }
    for (auto& [key, op] : roofline_ops) {
      auto& [o, n] = op;
      o.gpu_us /= n;
      o.lost_us /= n;
      c.roofline_ops.push_back(o);
    }
    keep_top_losses(c.roofline_ops);
    for (auto& [key, op] : op_times) {
      auto& [o, n] = op;
      o.gpu_us /= n;
      o.lost_us /= n;
      c.op_times.push_back(o);
    }
    for (auto& [key, p] : bandwidth) {
      p.bytes /= static_cast<double>(p.calls);
      p.busbw_gbps /= static_cast<double>(p.calls);
      c.collective_bandwidth.push_back(p);
    }
    if (!nodes.empty()) c.nodes = *nodes.begin();
    if (!per_node.empty()) c.gpus_per_node = *per_node.begin();
    if (!batches.empty()) c.global_batch_size = *batches.begin();

    // Validity of the configuration itself.
    // Concurrent instances are the repeats of a weak-scaling run (MLPerf HPC counts them so).
    if (c.runs < 3 && (!c.instances || *c.instances < 3))
      config_warnings.push_back(config_warning(c, "few-repeats",
          fmt::format("only {} run{}; with fewer than 3 repeats the confidence interval is wide or missing", c.runs, c.runs == 1 ? "" : "s")));
    if (c.epoch_time_s && c.epoch_time_s->n >= 2 && c.epoch_time_s->cv() > 0.05)
      config_warnings.push_back(config_warning(c, "high-variation",
          fmt::format("epoch time varies by {:.1f}% (coefficient of variation over 5%): look for noisy neighbours, I/O or throttling",
                      100 * c.epoch_time_s->cv())));
    // A figure that some runs lack is the others' alone, which must be said.
    auto from_some_runs = [&](const char* code, std::string_view figure, const RunsLacking& lacking, std::string_view lacked,
                              std::string_view also, std::string_view advice) {
      config_warnings.push_back(config_warning(c, code,
          fmt::format("its {} comes from {} of its {} runs: {} run{} ({}{}) {}, so the {} ({}) rests on the others{}", figure,
                      c.run_indices.size() - lacking.count, c.run_indices.size(), lacking.count, lacking.count == 1 ? "" : "s",
                      lacking.first->path, lacking.count > 1 ? ", ..." : "", lacked, figure, also, advice)));
    };
    // MLPerf runs that converge before a whole epoch (Training GNN stops at epoch 0.9 in some runs,
    // 1.0 in others) give none.
    if (c.epoch_time_s && no_epochs.count > 0)
      from_some_runs("epochs-from-some-runs", "epoch time", no_epochs, "logged no whole epoch", "and a speedup measured on it",
                     "; compare run times too");
    // A run without a GPU log (or without a power reading inside it) beside runs with one.
    if (c.energy_wh && no_energy.count > 0)
      from_some_runs("energy-from-some-runs", "energy", no_energy, "measured no GPU energy", "and energy per sample", "");
    if (auto spread = describe(per_repeat[time_basis(c)]); spread && spread->n >= 2 && spread->mean > 0 && spread->cv() > 0.25)
      config_warnings.push_back(config_warning(c, "possibly-mixed-inputs", mixed_inputs_message(c, *spread, summary.runs, time_basis(c))));
    auto list = [](const auto& set) {
      std::string s;
      for (const auto& x : set) s += (s.empty() ? "" : ", ") + fmt::format("{}", x);
      return s;
    };
    if (batches.size() > 1)
      config_warnings.push_back(config_warning(c, "inconsistent-runs", fmt::format("its runs disagree on the global batch size ({})", list(batches))));
    if (models.size() > 1)
      config_warnings.push_back(config_warning(c, "inconsistent-runs", fmt::format("its runs ran on different GPU models ({})", list(models))));
    if (nodes.size() > 1)
      config_warnings.push_back(config_warning(c, "inconsistent-runs", fmt::format("its runs used different node counts ({})", list(nodes))));
    c.provenance = provenance_of(c, summary.world_size_unit, summary.runs, sources, split_notes, study.diagnostics);
    // samples_per_epoch stated, but no epochs logged: epochs, not samples, are what is missing.
    const bool per_epoch_stated = std::any_of(c.run_indices.begin(), c.run_indices.end(),
                                              [&](std::size_t i) { return sources[i]->samples_per_epoch.has_value(); });
    if (!c.throughput_samples_per_s)
      missing.add("throughput",
                  c.global_batch_size
                      ? "a global batch size, but no steps.csv to count steps (profiler steps count only where a run has no "
                        "epochs and no start and end), and no samples per epoch (a samples column in epochs.csv or steps.csv, "
                        "samples_per_epoch, MLPerf train_samples)"
                  : per_epoch_stated
                      ? "samples_per_epoch, but no timed epochs (epochs.csv) to count them over, and no samples column in "
                        "steps.csv or global batch size"
                      : "no samples count (no samples column in epochs.csv or steps.csv, no samples_per_epoch, no global "
                        "batch size; for "
                        "traces give --global-batch-size or --batch-per-gpu)",
                  c.key());
    if (!c.epoch_time_s && !c.run_time_s && !c.step_time_s)
      missing.add("time", "no epochs, no run start/end and no timed steps (profiler steps or steps.csv)", c.key());
  }

  // Scaling curves: one per (label, system), named by ConfigurationSummary::curve, in configuration
  // order (label, system, then world size within each): the order the table, summary.csv and the
  // page list them in. A map by name put "ddp @ unknown system" after "ddp @ juwels" in
  // summary.json's curves and the scaling models, before it in the table.
  Curves curves;
  for (auto& c : summary.configurations) {
    if (curves.empty() || curves.back().first != c.curve) curves.emplace_back(c.curve, std::vector<ConfigurationSummary*>{});
    curves.back().second.push_back(&c);
  }
  std::set<std::string> kinds;
  for (auto& [label, curve] : curves) {
    std::string scaling = options.scaling ? *options.scaling : detect_scaling(curve, summary.runs, sources, config_warnings);
    kinds.insert(scaling);
    for (auto* c : curve) c->scaling = scaling;
    if (scaling == "strong") {
      std::set<double> batches;
      std::string detail;
      for (auto* c : curve)
        if (c->global_batch_size) {
          batches.insert(*c->global_batch_size);
          detail += (detail.empty() ? "" : ", ") + fmt::format("{} at {}", *c->global_batch_size, count_of(c->world_size, summary.world_size_unit));
        }
      if (batches.size() > 1)
        config_warnings.push_back({Severity::warning, "batch-changed",
                                   fmt::format("the global batch size changes along the strong-scaling curve of '{}' ({}): "
                                               "speedup then mixes parallel scaling with a change of the problem",
                                               label, detail),
                                   {}, 0, {}});
    }
  }
  summary.scaling = kinds.size() == 1 ? *kinds.begin() : kinds.empty() ? "strong" : "mixed";

  // Baselines and speedup.
  const ConfigurationSummary* common_ref = nullptr;
  if (!options.baseline_gpus && options.baseline == BaselineKind::common && !summary.configurations.empty()) {
    int p0 = summary.configurations.front().world_size;
    for (auto& c : summary.configurations) p0 = std::min(p0, c.world_size);
    for (auto& c : summary.configurations) {
      if (c.world_size != p0) continue;
      auto better = [&](const ConfigurationSummary& a, const ConfigurationSummary* b) {
        if (!b) return true;
        if (a.scaling == "weak" && a.throughput_samples_per_s && b->throughput_samples_per_s)
          return *a.throughput_samples_per_s > *b->throughput_samples_per_s;
        auto ta = time_of(a, time_basis(a)), tb = time_of(*b, time_basis(a));
        return ta && (!tb || *ta < *tb);
      };
      if (better(c, common_ref)) common_ref = &c;
    }
  }
  for (auto& [label, curve] : curves) {
    const ConfigurationSummary* base = common_ref;
    if (!base) {
      if (options.baseline_gpus) {
        for (auto* c : curve)
          if (c->world_size == *options.baseline_gpus) base = c;
        if (!base) {
          config_warnings.push_back({Severity::warning, "no-baseline",
                                     fmt::format("'{}' has no configuration at {} (--baseline-gpus); its speedup is left out",
                                                 label, count_of(*options.baseline_gpus, summary.world_size_unit)),
                                     {}, 0, {}});
          continue;
        }
      } else {
        base = curve.front();  // sorted by world size
      }
    }
    const std::string basis = time_basis(*base);
    const auto t_base = time_of(*base, basis);
    const double p0 = base->world_size;
    std::vector<std::string> superlinear;
    for (auto* c : curve) {
      c->baseline_world_size = base->world_size;
      c->baseline_label = base->curve;
      const double p = c->world_size;
      c->ideal_speedup = p / p0;
      c->time_from = basis;
      std::optional<double> s;
      if (c->scaling == "weak") {
        if (c->throughput_samples_per_s && base->throughput_samples_per_s && *base->throughput_samples_per_s > 0)
          s = *c->throughput_samples_per_s / *base->throughput_samples_per_s;
        else
          missing.add("speedup", "weak scaling needs throughput, which needs a samples count", c->key());
      } else {
        auto t = time_of(*c, basis);
        // Readers refuse times of no length; a baseline of 0 would make every speedup 0.
        if (t && t_base && *t > 0 && *t_base > 0) s = *t_base / *t;
        else
          missing.add("speedup", basis.empty() ? std::string("no time at the baseline")
                                               : fmt::format("no {} times here or at the baseline", basis), c->key());
      }
      if (!s) continue;
      c->speedup = s;
      c->efficiency = *s * p0 / p;
      if (p > p0 && *s > 0) c->karp_flatt = (1 / *s - p0 / p) / (1 - p0 / p);
      if (p > p0 && superlinear_beyond_noise(*c->efficiency, base->time_on(basis), c->time_on(basis)))
        superlinear.push_back(fmt::format("{} ({})", c->key(), efficiency_percent(*c->efficiency)));
    }
    if (!superlinear.empty())
      config_warnings.push_back({Severity::warning, "superlinear-efficiency",
                                 fmt::format("'{}' is more than 100% efficient beyond its times' noise at {}: a smaller problem per GPU "
                                             "fitting a cache or memory, or a slow baseline; the scaling model carries it beyond the data",
                                             label, fmt::join(superlinear, ", ")),
                                 {}, 0, {}});
  }
  model_curves(summary, curves, options, config_warnings);
  account_for_efficiency(summary, config_warnings);
  choose_gpu_counts(summary, options.choice);
  missing.emit(config_warnings);
  for (auto* from : {&run_warnings, &config_warnings}) {
    summary.warnings.insert(summary.warnings.end(), std::make_move_iterator(from->begin()), std::make_move_iterator(from->end()));
    decltype(run_warnings)().swap(*from);
  }
  return summary;
}

}  // namespace

Summary analyze(const Study& study, const AnalysisOptions& options) { return analyze_study(study, options, nullptr); }

Summary analyze_releasing(Study& study, const AnalysisOptions& options) { return analyze_study(study, options, &study); }

}  // namespace scalelens
