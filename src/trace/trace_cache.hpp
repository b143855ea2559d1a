#pragma once
// Trace summaries cached, so that a second `scalelens trace`, `report` or `serve` over the same
// files does not parse them again. One small JSON per trace and per --comm-kernel-regex under the
// user's cache folder (never beside the traces: input folders are often someone else's or
// read-only), named after and keyed by the file's identity: device, inode, size, mtime and a hash
// of its first and last MiB. Cache files are written aside and renamed into place, and no symbolic
// link under the cache folder is followed. SCALELENS_NO_CACHE=1 turns it off (as --no-cache does).
#include <filesystem>
#include <optional>
#include <string>

#include "common/result.hpp"
#include "trace/breakdown.hpp"
#include "trace/kineto.hpp"

namespace scalelens::trace {

// Where earlier versions kept summaries, beside the traces: searches still skip such folders.
inline constexpr const char* kCacheFolder = ".scalelens-cache";

struct CacheOptions {
  bool enabled = true;
  std::filesystem::path dir;  // empty: default_cache_dir()
};

// $SCALELENS_CACHE_DIR (what --cache-dir sets), else $XDG_CACHE_HOME/scalelens, else
// ~/.cache/scalelens; empty (no cache) when none of them is set.
std::filesystem::path default_cache_dir();

// Whether this process says (once, on standard error) that summaries cannot be cached. Off in the
// other processes of `mpirun -n K scalelens`, so that the job says it once, as one process would.
void set_cache_warnings(bool on);

// Analyses one trace file, from the cache when it holds a summary for this exact file and
// regex (RankSummary::cached is then true), else by parsing it and storing the summary.
Result<RankSummary> analyse_file(const std::filesystem::path& path, const CommMatcher& comm, const std::string& comm_regex,
                                 const CacheOptions& cache, const ParseOptions& parse = {});

// The cache file of a trace (whether or not it exists); nullopt when the trace cannot be read or
// there is no cache folder.
std::optional<std::filesystem::path> cache_file(const std::filesystem::path& trace, const std::string& comm_regex,
                                                const CacheOptions& cache = {});

// Round trip of a summary through the cache's JSON (exposed for tests).
std::string summary_to_json(const RankSummary& r);
std::optional<RankSummary> summary_from_json(std::string_view json);

}  // namespace scalelens::trace
