// The trace level of a comparison: the traces of matched configurations analysed again (apart from
// compare.cpp, which needs no trace reader: a summary.json compares without one).
#include <fmt/format.h>

#include "common/text.hpp"
#include "compare/compare.hpp"
#include "trace/trace_set.hpp"

namespace scalelens {

void add_trace_level(Comparison& comparison, const Summary& a, const Study& sa, const Summary& b, const Study& sb,
                     const TraceLevelOptions& options) {
  for (const auto& cc : comparison.configurations) {
    const auto files_a = trace_files_of(sa, a, a.configurations[cc.before_index]);
    const auto files_b = trace_files_of(sb, b, b.configurations[cc.after_index]);
    if (files_a.empty() || files_b.empty()) continue;
    auto analyse = [&](const std::vector<std::filesystem::path>& files) {
      trace::TraceSetOptions o;
      o.inputs = files;
      o.threads = options.threads;
      o.cache = options.cache;
      o.cache_dir = options.cache_dir;
      return trace::analyse_traces(o);
    };
    const auto before = analyse(files_a), after = analyse(files_b);
    if (before.ranks.empty() || after.ranks.empty()) continue;
    auto diff = diff_trace_sets(before, after, options.top);
    diff.configuration = fmt::format("{} {}", cc.name(), count_of(cc.world_size, comparison.world_size_unit));
    diff.world_size = cc.world_size;
    comparison.traces.push_back(std::move(diff));
  }
}

}  // namespace scalelens
