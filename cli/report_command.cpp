// scalelens report: a scalability report over a folder of runs.
#include <chrono>
#include <cstdio>
#include <iostream>

#include <fmt/format.h>

#include "analysis/analyze.hpp"
#include "commands.hpp"
#include "common/process_memory.hpp"
#include "common/text.hpp"
#include "process_group_launch.hpp"
#include "trace/trace_cache.hpp"
#include "ingest/ingest.hpp"
#include "report/output_folder.hpp"
#include "report/report_html.hpp"
#include "report/summary_writers.hpp"
#include "terminal.hpp"

namespace scalelens::cli {

namespace {

struct ReportArgs {
  std::vector<std::string> inputs;
  std::string output_dir;
  std::string format = "table";
  std::string pattern;
  std::string experiment;
  std::vector<std::string> run_names;
  StudyDefaults defaults;
  AnalysisOptions analysis;
  bool strict = false;
  bool quiet = false;
  unsigned threads = 0;
  bool timings = false;
  CacheArgs cache;
};

// --timings: where a report's time went, on standard error.
class PhaseTimer {
 public:
  double lap() {
    auto now = std::chrono::steady_clock::now();
    double s = std::chrono::duration<double>(now - last_).count();
    last_ = now;
    return s;
  }

 private:
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

int run_report(const ReportArgs& args) {
  IngestOptions in;
  in.inputs = args.inputs;
  if (!args.pattern.empty()) in.pattern = args.pattern;
  if (!args.experiment.empty()) in.experiment = args.experiment;
  in.run_names = args.run_names;
  in.threads = args.threads;
  in.defaults = args.defaults;
  auto job = join_launched_processes("report");
  if (!job) return 1;
  in.group = job->group.get();
  // Run folders' GPU logs summarized and their epochs and steps tabulated as they are read: a large
  // study holds no record per GPU, nor per rank and epoch or step. In
  // one process their page series wait in a temporary file (between processes they travel in the
  // read outputs).
  const std::shared_ptr<TextSpill> spill = !in.group || in.group->size() == 1 ? TextSpill::create() : nullptr;
  in.summarize_gpus = [spill](const Run& run, RunData& log) { summarize_gpu_log(run, log, spill); };
  in.tabulate_epochs = true;
  in.tabulate_steps = true;  // within the page's default step budget (SeriesLimits), as the page is written
  in.threads = job->threads(args.threads);
  in.give_back_between_batches = true;  // this process's heap policy is ours (main.cpp)
  // Launched processes write through the launcher, whose pseudo-terminal says nothing of where the
  // output goes: plain text, no progress bar.
  auto terminal = [launched = job->launched()](int fd) { return !launched && is_terminal(fd); };
  ProgressBar bar("reading", job->first() && !args.quiet && terminal(STDERR_FILENO));
  in.progress = [&](std::size_t done, std::size_t total) { bar.update(done, total); };
  PhaseTimer timer;
  Study study = analyse_in_group(job->group.get(), [&] { return ingest(in); });
  bar.finish();
  if (!job->finish()) return 0;  // the first one analyses and writes
  const double read_s = timer.lap();
  const long peak_after_reading_kib = peak_memory_kib();  // which phase set the peak, for --timings
  give_back_freed_memory();  // the readers' heaps: analysis and writing run on this thread

  AnalysisOptions options = args.analysis;
  options.threads = args.threads;
  Summary summary = analyze_releasing(study, options);  // the study stays for the page and figures
  const double analyze_s = timer.lap();
  const long peak_after_analysis_kib = peak_memory_kib();

  const bool color = terminal(STDOUT_FILENO);
  const std::string diagnostics = render_diagnostics(summary, TableStyle{terminal(STDERR_FILENO)});
  for (const auto& d : summary.warnings) {
    if (d.code == "bad-pattern") {
      std::fputs(diagnostics.c_str(), stderr);
      return 1;
    }
  }
  if (summary.configurations.empty()) {
    std::fputs(diagnostics.c_str(), stderr);
    std::vector<std::string> inputs;  // named, as the reader of the message may have given several
    for (std::size_t i = 0; i < std::min<std::size_t>(args.inputs.size(), 3); ++i) inputs.push_back(printable(args.inputs[i]));
    std::fprintf(stderr,
                 "error: no usable data in %s: %zu files seen, %zu recognized, no run with a known label and GPU count.\n"
                 "scalelens reads scalelens run folders, itwinai MLflow stores and CSVs, MLPerf logs, nvidia-smi CSV logs\n"
                 "and PyTorch profiler traces; see 'scalelens report --help'.\n",
                 list_first(inputs, args.inputs.size(), 3).c_str(), study.files_seen, study.files_read);
    return 2;
  }

  // Files: -o, else ./scalelens-report. Never beside the inputs by default: they are often someone
  // else's or read-only, and a report leaves every input folder unchanged unless -o points into it.
  const bool chosen = !args.output_dir.empty();
  const std::filesystem::path out_dir = chosen ? std::filesystem::path(args.output_dir)
                                               : std::filesystem::current_path() / "scalelens-report";
  std::string figures_failed;
  auto written = write_report_files(summary, study, out_dir, &figures_failed);
  const double write_s = timer.lap();
  const long peak_after_writing_kib = peak_memory_kib();
  if (!written) {
    std::fprintf(stderr, "error: %s: %s%s\n", written.error().path.c_str(), written.error().message.c_str(),
                 chosen ? "" : " (the report goes to ./scalelens-report unless -o DIR names another folder)");
    return 1;
  }

  // A figure gnuplot could not draw is missing from figures/: said here, not only in the page.
  if (!figures_failed.empty()) std::fprintf(stderr, "warning: figures: %s\n", printable(figures_failed).c_str());
  if (args.timings) {
    const double mb = static_cast<double>(study.bytes_read) / 1e6;
    std::fprintf(stderr, "timings: read %.2f s (%zu files, %.0f MB, %.0f MB/s), analyze %.2f s, write %.2f s\n", read_s,
                 study.files_read, mb, read_s > 0 ? mb / read_s : 0.0, analyze_s, write_s);
  }
  if (args.format == "json") {
    // Streamed as it is rendered: a large study's summary is never whole in memory (issue 17, part 2).
    write_summary_json(summary, [](std::string_view piece) { std::cout.write(piece.data(), static_cast<std::streamsize>(piece.size())); });
    std::cout << '\n';
    std::fputs(diagnostics.c_str(), stderr);
  } else if (args.format == "csv") {
    std::cout << render_summary_csv(summary);
    std::fputs(diagnostics.c_str(), stderr);
  } else {
    std::cout << render_table(summary, TableStyle{color});
    if (!summary.warnings.empty()) std::cout << "\n" << render_diagnostics(summary, TableStyle{color});
    if (!args.quiet) std::cout << fmt::format("\nWrote {}\n", printable(out_dir.string()));
  }
  std::cout.flush();
  if (args.timings) {  // after standard output is rendered, which the peak includes
    // The peak so far at the end of each phase (it only grows): the first that reaches the whole
    // peak is where it was set.
    std::fprintf(stderr,
                 "peak memory: scalelens %.1f MiB (itself; gnuplot, which draws the figures, apart); "
                 "by the end of reading %.1f, of analysis %.1f, of writing %.1f MiB\n",
                 peak_memory_kib() / 1024.0, peak_after_reading_kib / 1024.0, peak_after_analysis_kib / 1024.0,
                 peak_after_writing_kib / 1024.0);
  }
  // Like compilers that skip freeing at exit: the process's end returns a large study's memory at
  // once, where destroying it vector by vector took a tenth of the whole report's time. Held from
  // a static, so leak checkers still see it as reachable (volatile, or an optimising build drops the
  // store and the checker calls it a leak).
  [[maybe_unused]] static Study* volatile kept_until_exit = nullptr;
  kept_until_exit = new Study(std::move(study));

  if (args.strict) {
    for (const auto& d : summary.warnings)
      if (d.severity != Severity::note) return 3;
  }
  return 0;
}

}  // namespace

void add_report_command(CLI::App& app, int& exit_code) {
  auto args = std::make_shared<ReportArgs>();
  auto* cmd = app.add_subcommand("report", "Scalability report over folders of runs (searched recursively)");
  cmd->add_option("inputs", args->inputs, "Folders or files: scalelens run folders, itwinai MLflow stores or CSVs, "
                                          "MLPerf logs, nvidia-smi logs, PyTorch profiler traces")
      ->required();
  cmd->add_option("-o,--output", args->output_dir, "Output folder (default: ./scalelens-report in the current folder)");
  cmd->add_option("--format", args->format, "What goes to standard output")
      ->check(CLI::IsMember({"table", "json", "csv"}))
      ->capture_default_str();
  cmd->add_option("--pattern", args->pattern,
                  "Only paths (relative to their input) in which this regex matches, or runs whose label "
                  "(strategy), run name or MLflow experiment it matches (RE2 syntax: ECMAScript without "
                  "backreferences or lookaround)");
  cmd->add_option("--experiment", args->experiment,
                  "MLflow stores: only runs of this experiment (its name), like itwinai's generate-scalability-report");
  cmd->add_option("--run-names", args->run_names, "MLflow stores: only the train runs with these names (A,B)")
      ->delimiter(',')
      ->allow_extra_args(false);  // never the inputs after it
  add_warmup_epochs_option(cmd, args->analysis, "Epochs left out at the start of each run");
  add_study_default_options(cmd, args->defaults, args->analysis);
  add_baseline_options(cmd, args->analysis);
  cmd->add_flag("--strict", args->strict, "Exit with code 3 when there are warnings");
  cmd->add_flag("-q,--quiet", args->quiet, "No progress bar and no closing note");
  cmd->add_option("--threads", args->threads, "Reader threads (default: every core this process may use)");
  add_max_inflated_option(cmd);
  cmd->add_flag("--timings", args->timings,
                "Print how long reading, analysis and writing took, and the peak memory (standard error), with the peak so far at the end of each phase");
  add_cache_flags(cmd, args->cache);
  cmd->footer(
      "Examples:\n"
      "  scalelens report runs/\n"
      "  scalelens report traces/                     (folders of profiler traces, e.g. traces/ddp-8gpu/*.json.gz)\n"
      "  scalelens report traces/ --label resnet50-ddp --global-batch-size 1024 --warmup-steps 2\n"
      "  scalelens report runs/ mllogs/mlflow --pattern 'ddp|deepspeed' --warmup-epochs 2\n"
      "  scalelens report mllogs/mlflow --experiment mnist-scaling --run-names ddp-run,horovod-run\n"
      "  scalelens report runs/ --baseline common --format json > summary.json\n"
      "  scalelens report runs/ -o paper/scaling --strict\n"
      "  scalelens report runs/ --predict 512,1024   (the scaling model's time, speedup, efficiency there)\n"
      "  srun --mpi=pmix -n 16 scalelens report runs/   (the files shared by 16 processes: docs/parallel.md)\n"
      "Files written to the output folder: summary.json (schema scalelens.summary/2), summary.csv,\n"
      "report.html (interactive, opens offline) and figures/ (gnuplot scripts, data, SVG/PNG/PDF).\n"
      "Metric definitions: docs/DESIGN.md. Exit codes: 0 written, 1 usage, 2 no usable data, 3 --strict warnings,\n"
      "6 a process of a parallel analysis failed (the file it failed on is named).");
  cmd->callback([args, &exit_code] {
    if (!valid_analysis_options(args->analysis, "report")) {
      exit_code = 1;
      return;
    }
    apply_cache_flags(args->cache);
    exit_code = run_report(*args);
  });
}

}  // namespace scalelens::cli
