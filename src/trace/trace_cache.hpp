#pragma once
// Summaries cached beside the traces, so that a second `scalelens trace` or `scalelens report`
// over the same files does not parse them again. One small JSON per trace and per
// --comm-kernel-regex in `.scalelens-cache/` beside it (a folder ingest never reads), keyed by the
// file's size, mtime and a hash of its first and last MiB. A folder that cannot be written means
// no cache, silently. SCALELENS_NO_CACHE=1 in the environment turns it off (as --no-cache does).
#include <filesystem>
#include <optional>
#include <string>

#include "common/result.hpp"
#include "trace/breakdown.hpp"
#include "trace/kineto.hpp"

namespace scalelens::trace {

inline constexpr const char* kCacheFolder = ".scalelens-cache";

struct CacheOptions {
  bool enabled = true;
};

// Analyses one trace file, from the cache when it holds a summary for this exact file and
// regex (RankSummary::cached is then true), else by parsing it and storing the summary.
Result<RankSummary> analyse_file(const std::filesystem::path& path, const CommMatcher& comm, const std::string& comm_regex,
                                 const CacheOptions& cache, const ParseOptions& parse = {});

// The cache file of a trace (whether or not it exists).
std::filesystem::path cache_file(const std::filesystem::path& trace, const std::string& comm_regex);

// Round trip of a summary through the cache's JSON (exposed for tests).
std::string summary_to_json(const RankSummary& r);
std::optional<RankSummary> summary_from_json(std::string_view json);

}  // namespace scalelens::trace
