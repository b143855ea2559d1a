// scalelens serve: the dashboard live over a study folder, refreshed as runs land.
#include <cstdio>

#include "commands.hpp"
#include "common/user_regex.hpp"
#include "serve/server.hpp"

namespace scalelens::cli {

void add_serve_command(CLI::App& app, int& exit_code) {
  auto opts = std::make_shared<ServeOptions>();
  auto pattern = std::make_shared<std::string>();
  auto cache = std::make_shared<CacheArgs>();
  auto* cmd = app.add_subcommand("serve", "Live dashboard over folders of runs (read-only; refreshes as runs land)");
  cmd->add_option("inputs", opts->inputs, "Folders or files, as for 'scalelens report'")->required();
  cmd->add_option("--port", opts->port, "TCP port (0: any free port)")->check(CLI::Range(0, 65535))->capture_default_str();
  cmd->add_option("--host", opts->host, "Address to listen on; anything but 127.0.0.1 exposes the study to the network")
      ->check(CLI::Validator([](std::string& host) { return host.empty() ? std::string("give an address, e.g. 127.0.0.1") : std::string(); },
                             "ADDRESS"))
      ->capture_default_str();
  cmd->add_option("--pattern", *pattern, "Only paths (relative to their input) in which this regex matches (RE2 syntax: ECMAScript without backreferences or lookaround)");
  add_warmup_epochs_option(cmd, opts->analysis, "Epochs left out at the start of each run");
  add_baseline_options(cmd, opts->analysis);
  cmd->add_option("--poll", opts->poll_s, "Seconds between re-reads of a changing study (and first polling period)")
      ->check(kFiniteNumber)->check(CLI::Range(0.1, 3600.0))
      ->capture_default_str();
  cmd->add_option("--watch", opts->watch,
                  "How changes are noticed: auto (inotify, but polling on network file systems), inotify, or poll "
                  "(with backoff up to 30 s)")
      ->check(CLI::IsMember({"auto", "inotify", "poll"}))
      ->capture_default_str();
  add_study_default_options(cmd, opts->defaults, opts->analysis);
  add_cache_flags(cmd, *cache);
  add_max_inflated_option(cmd);
  cmd->add_flag("-q,--quiet", opts->quiet, "Do not print when the study changes");
  cmd->footer(
      "Examples:\n"
      "  scalelens serve runs/                        then open http://127.0.0.1:6006/\n"
      "  scalelens serve runs/ --port 8080 --baseline common\n"
      "  ssh -L 6006:127.0.0.1:6006 login-node        to view a cluster's study from a laptop\n"
      "API: /api/summary, /api/data, /api/series?run=ID, /api/version. Ctrl-C stops it.");
  cmd->callback([=, &exit_code] {
    if (!pattern->empty()) {
      auto check = UserRegex::compile(*pattern, "--pattern");
      if (!check) {
        std::fprintf(stderr, "error: %s\n", check.error().message.c_str());
        exit_code = 1;
        return;
      }
      opts->pattern = *pattern;
    }
    if (!valid_analysis_options(opts->analysis, "serve")) {
      exit_code = 1;
      return;
    }
    apply_cache_flags(*cache);
    exit_code = serve(*opts);
  });
}

}  // namespace scalelens::cli
