// `scalelens compare BEFORE AFTER`: did scaling get better or worse? A regression gate for CI.
#include <cstdio>
#include <fstream>
#include <iostream>

#include <fmt/format.h>

#include "commands.hpp"
#include "common/file_io.hpp"
#include "common/text.hpp"
#include "common/user_regex.hpp"
#include "compare/compare.hpp"
#include "compare/summary_reader.hpp"
#include "ingest/ingest.hpp"
#include "report/compare_writers.hpp"
#include "report/report_html.hpp"
#include "report/summary_writers.hpp"
#include "terminal.hpp"

namespace scalelens::cli {

namespace {

struct CompareArgs {
  std::string before, after;
  std::string threshold = "5%";
  std::vector<std::string> metrics;
  std::string format = "table";
  std::string junit;
  std::string output_dir;
  std::vector<std::string> matches;
  std::string fail_on = "regressed";
  int kernels = 10;
  StudyDefaults defaults;
  AnalysisOptions analysis;
  std::string pattern;
  bool quiet = false;
  unsigned threads = 0;
  CacheArgs cache;
};

// One side, with a progress bar while a folder is read; nullopt (exit 2) when it has nothing to use.
std::optional<ComparisonSide> load_side(const std::string& input, const char* which, const CompareArgs& args) {
  IngestOptions in;
  if (!args.pattern.empty()) in.pattern = args.pattern;
  in.threads = args.threads;
  in.defaults = args.defaults;
  ProgressBar bar(fmt::format("reading {}", which), !args.quiet && is_terminal(STDERR_FILENO));
  in.progress = [&](std::size_t done, std::size_t total) { bar.update(done, total); };
  AnalysisOptions options = args.analysis;
  options.threads = args.threads;
  auto side = load_comparison_side(input, in, options);
  bar.finish();
  if (!side) {
    std::fprintf(stderr, "scalelens compare: %s: %s (the %s side)\n", side.error().path.c_str(), side.error().message.c_str(), which);
    return std::nullopt;
  }
  return std::move(side.value());
}

// "5%" → 0.05, "0.05" → 0.05.
std::optional<double> parse_threshold(const std::string& text) {
  std::string_view t = trim(text);
  const bool percent = !t.empty() && t.back() == '%';
  if (percent) t.remove_suffix(1);
  auto v = parse_double(t);
  if (!v) return std::nullopt;
  const double f = percent ? *v / 100 : *v;
  if (!(f > 0 && f < 1)) return std::nullopt;
  return f;
}

int run_compare(const CompareArgs& args) {
  CompareOptions options;
  auto threshold = parse_threshold(args.threshold);
  if (!threshold) {
    std::fprintf(stderr, "scalelens compare: --threshold '%s': give a relative change between 0 and 1, as 5%% or 0.05\n",
                 args.threshold.c_str());
    return 1;
  }
  options.change.threshold = *threshold;
  for (const auto& m : args.metrics) {
    if (!find_metric(m)) {
      std::string known;
      for (const auto& k : compare_metrics()) known += (known.empty() ? "" : ", ") + std::string(k.name);
      std::fprintf(stderr, "scalelens compare: --metric '%s' is not one it knows (%s; also energy, score, util, memory)\n", m.c_str(),
                   known.c_str());
      return 1;
    }
    options.metrics.push_back(m);
  }
  for (const auto& m : args.matches) {
    const auto eq = m.find('='), colon = m.find(':', eq == std::string::npos ? 0 : eq);
    const std::string kind = eq == std::string::npos ? "" : m.substr(0, eq);
    if ((kind != "label" && kind != "system") || colon == std::string::npos) {
      std::fprintf(stderr, "scalelens compare: --match '%s': write label=BEFORE:AFTER or system=BEFORE:AFTER\n", m.c_str());
      return 1;
    }
    (kind == "label" ? options.label_renames : options.system_renames)[m.substr(eq + 1, colon - eq - 1)] = m.substr(colon + 1);
  }

  if (!args.pattern.empty()) {
    if (auto check = UserRegex::compile(args.pattern, "--pattern"); !check) {
      std::fprintf(stderr, "scalelens compare: %s\n", check.error().message.c_str());
      return 1;
    }
  }
  // --pattern selects runs as they are read; a saved summary's configurations were formed from all
  // of its runs, so it would compare one side filtered with the other whole.
  auto pattern_on_a_summary = [&](const char* which) {
    std::fprintf(stderr,
                 "scalelens compare: --pattern selects runs as they are read, and the %s side is a saved summary.json, whose "
                 "configurations are formed already: compare the run folders, or write that summary with report --pattern\n",
                 which);
    return 1;
  };
  // Said before a folder side is read (minutes, for a large one) where the input is the file itself.
  if (!args.pattern.empty() && is_saved_summary(args.before)) return pattern_on_a_summary("before");
  if (!args.pattern.empty() && is_saved_summary(args.after)) return pattern_on_a_summary("after");
  auto before = load_side(args.before, "before", args);
  if (!before) return 2;
  auto after = load_side(args.after, "after", args);
  if (!after) return 2;
  // A report's output folder is read as one of runs first, and is a saved summary only when it holds none.
  if (!args.pattern.empty() && !before->study) return pattern_on_a_summary("before");
  if (!args.pattern.empty() && !after->study) return pattern_on_a_summary("after");

  // A --match that pairs nothing would compare as if it were not given, and a gate would pass on it.
  if (auto unknown = unknown_match_names(before->summary, after->summary, options); !unknown.empty()) {
    for (const auto& message : unknown) std::fprintf(stderr, "scalelens compare: %s\n", message.c_str());
    return 1;
  }
  Comparison comparison = compare_summaries(before->summary, after->summary, options);
  // What reading and summarizing a side's folders left out (a file refused, a line skipped, a run's
  // time), as report says it: the comparison's figures are those without it. Those that name a
  // file or folder: the statistics' own cautions (few repeats) are the comparison's to judge.
  std::vector<Diagnostic> read_warnings;
  for (auto [side, which] : {std::pair{&*before, "before"}, std::pair{&*after, "after"}})
    if (side->study)
      for (const auto& d : side->summary.warnings)
        if (d.severity != Severity::note && !d.path.empty()) {
          Diagnostic w = d;
          w.message = fmt::format("{} side: {}", which, d.message);
          read_warnings.push_back(std::move(w));
        }
  comparison.warnings.insert(comparison.warnings.begin(), read_warnings.begin(), read_warnings.end());
  comparison.before_name = args.before;
  comparison.after_name = args.after;
  if (args.kernels > 0 && before->study && after->study) {
    TraceLevelOptions t;
    t.top = static_cast<std::size_t>(args.kernels);
    t.threads = args.threads;
    t.cache = !args.cache.off;
    t.cache_dir = args.cache.dir;
    add_trace_level(comparison, before->summary, *before->study, after->summary, *after->study, t);
  }

  // Files: the JUnit report where asked; the page, JSON and markdown into -o.
  auto write = [](const std::filesystem::path& path, const std::string& text) {
    auto ok = write_file_atomic(path, text);
    if (!ok) std::fprintf(stderr, "scalelens compare: %s: %s\n", ok.error().path.c_str(), ok.error().message.c_str());
    return static_cast<bool>(ok);
  };
  CompareRenderOptions render;
  render.fail_on_inconclusive = args.fail_on == "inconclusive";
  if (!args.junit.empty() && !write(args.junit, render_compare_junit(comparison, render))) return 1;
  if (!args.output_dir.empty()) {
    std::error_code ec;
    std::filesystem::create_directories(args.output_dir, ec);
    const std::filesystem::path dir(args.output_dir);
    if (ec) {
      std::fprintf(stderr, "scalelens compare: %s: cannot create the output folder: %s\n", args.output_dir.c_str(), ec.message().c_str());
      return 1;
    }
    if (!write(dir / "compare.json", render_compare_json(comparison)) || !write(dir / "compare.md", render_compare_markdown(comparison)) ||
        !write(dir / "compare.html",
               render_compare_html(comparison, before->summary_json, after->summary_json,
                                   after->study ? render_series_json(*after->study, after->summary) : std::string("null"))))
      return 1;
  }

  if (args.format == "json") {
    std::cout << render_compare_json(comparison);
  } else if (args.format == "markdown") {
    std::cout << render_compare_markdown(comparison);
  } else {
    std::cout << render_compare_table(comparison, TableStyle{is_terminal(STDOUT_FILENO)});
    if (!args.quiet && !args.output_dir.empty()) std::cout << fmt::format("Wrote {}\n", args.output_dir);
  }
  std::cout.flush();
  std::fputs(render_diagnostics(comparison.warnings, TableStyle{is_terminal(STDERR_FILENO)}).c_str(), stderr);

  if (comparison.configurations.empty()) {
    std::fputs("scalelens compare: no configuration of one side matches one of the other (label, system and world size; "
               "--match label=OLD:NEW pairs renamed ones)\n",
               stderr);
    return 2;
  }
  std::size_t compared = 0;
  for (const auto& c : comparison.configurations) compared += c.metrics.size();
  if (compared == 0) {
    std::fputs("scalelens compare: configurations matched, but no metric could be compared: neither side has the figures "
               "asked for (--metric)\n",
               stderr);
    return 2;
  }
  if (comparison.count(Verdict::regressed) > 0) return 4;
  // A strict gate also fails on what it cannot tell, and on a configuration gone from the after study.
  if (render.fail_on_inconclusive && (comparison.count(Verdict::inconclusive) > 0 || !comparison.only_before.empty())) return 4;
  return 0;
}

}  // namespace

void add_compare_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<CompareArgs>();
  auto* cmd = app.add_subcommand("compare", "Did scaling get better or worse? Two studies compared, with verdicts for CI");
  cmd->add_option("before", args->before, "The baseline: a folder of runs (as for report) or a summary.json it wrote")->required();
  cmd->add_option("after", args->after, "The study to judge: a folder of runs or a summary.json")->required();
  cmd->add_option("--threshold", args->threshold, "Changes within ±this are unchanged; beyond it, with the interval clear of 0, "
                                                  "regressed or improved (5% or 0.05)")
      ->capture_default_str();
  cmd->add_option("--metric", args->metrics, "Metrics to compare, comma-separated: time, throughput, efficiency, "
                                             "computation_score (score), gpu_util (util), energy_per_sample (energy), peak_memory (memory); "
                                             "default all")
      ->delimiter(',')
      ->allow_extra_args(false);  // never the positionals after it
  cmd->add_option("--format", args->format, "What goes to standard output")
      ->check(CLI::IsMember({"table", "json", "markdown"}))
      ->capture_default_str();
  cmd->add_option("--junit", args->junit, "Write a JUnit XML report here: one test case per configuration and metric");
  cmd->add_option("-o,--output", args->output_dir, "Write compare.json, compare.md and compare.html (both studies overlaid) here");
  cmd->add_option("--match", args->matches, "Pair configurations renamed between the studies: label=OLD:NEW or system=OLD:NEW "
                                            "(repeatable)")
      ->allow_extra_args(false);
  cmd->add_option("--fail-on", args->fail_on, "Exit 4 on regressed only, or on inconclusive too (strict gates)")
      ->check(CLI::IsMember({"regressed", "inconclusive"}))
      ->capture_default_str();
  cmd->add_option("--kernels", args->kernels, "Trace level: the kernels that changed most per configuration with traces on "
                                              "both sides (0: none)")
      ->check(CLI::Range(0, 100000))
      ->capture_default_str();
  cmd->add_option("--pattern", args->pattern, "Only runs whose path, label or run name this regex matches (both sides)");
  add_warmup_epochs_option(cmd, args->analysis, "Epochs left out at the start of each run (folders)");
  add_study_default_options(cmd, args->defaults, args->analysis);
  cmd->add_flag("-q,--quiet", args->quiet, "No progress bar and no closing note");
  cmd->add_option("--threads", args->threads, "Reader threads (default: every core this process may use)");
  add_max_inflated_option(cmd);
  add_cache_flags(cmd, args->cache);
  cmd->footer(
      "Examples:\n"
      "  scalelens compare before/ after/                    two study folders\n"
      "  scalelens compare baseline-summary.json after/      a saved summary.json (what CI keeps)\n"
      "  scalelens compare before/ after/ --threshold 5% --metric time,efficiency,energy --format markdown\n"
      "  scalelens compare a/traces b/traces --kernels 20    which kernels changed\n"
      "  scalelens compare old/ new/ --match label=ddp:ddp-new --junit compare.xml -o compare/\n"
      "Verdicts per configuration and metric: regressed, improved, unchanged (the 95% interval lies within\n"
      "±threshold) or inconclusive (too few repeats or too much noise; it says how many repeats would decide).\n"
      "Repeats are runs: each configuration needs at least 2 runs on each side for an interval.\n"
      "Exit codes: 0 nothing regressed, 4 something regressed (or inconclusive with --fail-on inconclusive),\n"
      "2 nothing could be matched or read, 1 usage error.");
  cmd->callback([args, &exit_code] {
    if (!valid_analysis_options(args->analysis, "compare")) {
      exit_code = 1;
      return;
    }
    apply_cache_flags(args->cache);
    exit_code = run_compare(*args);
  });
}

}  // namespace scalelens::cli
