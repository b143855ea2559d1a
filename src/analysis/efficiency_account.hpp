#pragma once
// Where the lost efficiency went (DESIGN.md, "Where the efficiency went"): the POP efficiency
// hierarchy and an additive account of the time per step lost against the ideal, per
// configuration with profiler traces, against its curve's baseline.
#include "analysis/summary.hpp"

namespace scalelens {

// Fills ConfigurationSummary::pop and ::lost_time for the configurations whose runs have trace
// figures (RunSummary::trace_step), and each curve's CurveModel::loss_sentence. Needs the
// baselines (analyze() sets them first). A configuration whose computation per step exceeds its
// step time gets neither, and a warning in `warnings` says why.
void account_for_efficiency(Summary& summary, std::vector<Diagnostic>& warnings);

}  // namespace scalelens
