#pragma once
// Which steps the traced ranks of a run profiled alike (trace set and run summary both ask; kept
// apart from trace_set.cpp so that what reads run folders needs no trace reader).
#include <cstdint>
#include <set>
#include <string>
#include <utility>
#include <vector>

namespace scalelens::trace {

// Ranks whose profiled steps differ (one rank's profiler schedule began a step later): which
// ranks profiled which step numbers, for a `misaligned-steps` warning, and the steps every rank
// profiled. `ranks` holds each trace's rank and its step numbers (sorted); a rank with several
// traces has their steps together; traces without steps are left out of both.
struct StepAlignment {
  std::set<std::int64_t> common;  // profiled by every rank that has steps
  std::string misaligned;         // "" when every rank profiled the same steps
};
StepAlignment align_steps(const std::vector<std::pair<int, const std::vector<std::int64_t>*>>& ranks);

}  // namespace scalelens::trace
