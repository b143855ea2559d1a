#pragma once
// The figures of each configuration of a study as text, so that tests can assert that a change to
// one configuration's files left every other configuration's figures exactly as they were.
#include <map>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "analysis/analyze.hpp"
#include "ingest/ingest.hpp"

namespace scalelens::testing {

inline std::string figure(const std::optional<double>& v) { return v ? fmt::format("{:.17g}", *v) : "null"; }

// The figures measured against the configuration's baseline (which another configuration is).
inline std::string relative_figures_of(const ConfigurationSummary& c) {
  return fmt::format("baseline={}/{} scaling={} speedup={} ideal={} efficiency={} karp_flatt={}", c.baseline_label,
                     c.baseline_world_size ? *c.baseline_world_size : -1, c.scaling, figure(c.speedup),
                     figure(c.ideal_speedup), figure(c.efficiency), figure(c.karp_flatt));
}

// The figures of the configuration's own runs alone.
inline std::string absolute_figures_of(const ConfigurationSummary& c) {
  return fmt::format(
      "runs={} nodes={} epoch={}±{} n={} run_time={} throughput={} per_gpu={} util={}/{}/{} energy_wh={} j_per_sample={} "
      "host_wh={} score={} raw={} overlap={} exposed={} idle={} spread={} mfu={}",
      c.runs, c.nodes ? *c.nodes : -1, c.epoch_time_s ? figure(c.epoch_time_s->mean) : "null",
      c.epoch_time_s ? figure(c.epoch_time_s->std) : "null", c.epoch_time_s ? c.epoch_time_s->n : 0,
      c.run_time_s ? figure(c.run_time_s->mean) : "null", figure(c.throughput_samples_per_s), figure(c.throughput_per_gpu),
      c.gpu_util_pct ? figure(c.gpu_util_pct->mean) : "null", c.gpu_util_pct ? figure(c.gpu_util_pct->min) : "null",
      c.gpu_util_pct ? figure(c.gpu_util_pct->max) : "null", figure(c.energy_wh), figure(c.energy_j_per_sample),
      figure(c.host_energy_wh), figure(c.computation_score), figure(c.comp_comm_raw_share), figure(c.overlap_ratio),
      figure(c.exposed_comm_share), figure(c.idle_share), figure(c.straggler_spread), figure(c.mfu));
}

// Every figure of a configuration row (summary.json's), to 17 significant digits.
inline std::string figures_of(const ConfigurationSummary& c) { return absolute_figures_of(c) + " " + relative_figures_of(c); }

// "label/p" → figures, for every configuration of the study under `folder`.
inline std::map<std::string, std::string> figures_by_configuration(const Summary& s) {
  std::map<std::string, std::string> out;
  for (const auto& c : s.configurations) out[c.key()] = figures_of(c);
  return out;
}

inline Summary report_of(const std::string& folder, const AnalysisOptions& options = {}) {
  return analyze(ingest(IngestOptions{{folder}, {}, 1, {}}), options);
}

}  // namespace scalelens::testing
