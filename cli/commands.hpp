#pragma once
// Each subcommand lives in its own file and registers itself on the app; when it runs it stores
// the process exit code in `exit_code` (DESIGN.md: 0 written, 1 usage, 2 no usable data, 3 strict).
#include <CLI/CLI.hpp>

#include <cstdlib>
#include <string>

namespace scalelens::cli {

void add_report_command(CLI::App& app, int& exit_code);
void add_trace_command(CLI::App& app, int& exit_code);
void add_run_command(CLI::App& app, int& exit_code);    // cli/run_command.cpp
void add_serve_command(CLI::App& app, int& exit_code);  // cli/serve_command.cpp

// --cache-dir and --no-cache of report, trace and serve (the trace summary cache, trace_cache.hpp).
struct CacheArgs {
  std::string dir;
  bool off = false;
};
inline void add_cache_flags(CLI::App* cmd, CacheArgs& args) {
  cmd->add_option("--cache-dir", args.dir,
                  "Folder for cached trace summaries (default $XDG_CACHE_HOME/scalelens, else ~/.cache/scalelens; "
                  "never the input folders)");
  cmd->add_flag("--no-cache", args.off, "Neither read nor write cached trace summaries (also SCALELENS_NO_CACHE=1)");
}
// The readers inside ingest take the cache's place from the environment (SCALELENS_CACHE_DIR,
// SCALELENS_NO_CACHE); set before any thread starts.
inline void apply_cache_flags(const CacheArgs& args) {
  if (!args.dir.empty()) ::setenv("SCALELENS_CACHE_DIR", args.dir.c_str(), 1);
  if (args.off) ::setenv("SCALELENS_NO_CACHE", "1", 1);
}

}  // namespace scalelens::cli
