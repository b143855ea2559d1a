#pragma once
// Where the lost efficiency went (DESIGN.md, "Where the efficiency went"): the POP efficiency
// hierarchy and an additive account of the time per step lost against the ideal, per
// configuration with profiler traces, against its curve's baseline.
#include "analysis/summary.hpp"

namespace scalelens {

// Fills ConfigurationSummary::pop and ::lost_time for the configurations whose runs have trace
// figures (RunSummary::trace_step), and each curve's CurveModel::loss_sentence. Needs the
// baselines (analyze() sets them first).
void account_for_efficiency(Summary& summary);

}  // namespace scalelens
