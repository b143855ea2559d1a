// scalelens: how well does my training scale, why not better, and at what cost?
// The binary only parses arguments and prints; libscalelens (src/) does the work.
#include <CLI/CLI.hpp>

#include "commands.hpp"
#include "common/file_io.hpp"
#include "common/process_memory.hpp"

int main(int argc, char** argv) {
  scalelens::keep_freed_memory_for_reuse();
  scalelens::remove_unfinished_files_on_termination();  // `run` and `serve` install their own handling
  CLI::App app{"scalelens: how well your multi-GPU training scales, why not better, and at what cost"};
  app.set_version_flag("--version", std::string("scalelens ") + SCALELENS_VERSION);
  app.require_subcommand(1);
  app.footer(
      "Examples:\n"
      "  scalelens report runs/                      scaling report over every run found in runs/\n"
      "  scalelens report runs/ --format json        the summary as JSON on standard output\n"
      "  scalelens trace traces/                     communication vs computation per rank\n"
      "  scalelens run --study runs --label ddp -- torchrun --nproc-per-node 4 train.py\n"
      "                                              measure a job into a run folder (no code changes)\n"
      "  scalelens serve runs/                       live dashboard at http://127.0.0.1:6006/\n"
      "  scalelens compare before/ after/            did anything regress? (exit 4 if so)\n"
      "  scalelens sweep --study runs --label ddp --tasks 1,2,4 --repeats 3 -- ./train\n"
      "                                              run the whole study (SLURM or local), resumable\n"
      "Run 'scalelens COMMAND --help' for a command's options.\n"
      "Exit codes: 0 done, 1 usage error, 2 no usable data, 3 warnings under --strict, 4 compare: regressed, 5 sweep: a run failed,\n"
      "6 a process of mpirun -n K scalelens trace|report failed.");
  int exit_code = 0;
  scalelens::cli::add_report_command(app, exit_code);
  scalelens::cli::add_trace_command(app, exit_code);
  scalelens::cli::add_run_command(app, exit_code);
  scalelens::cli::add_serve_command(app, exit_code);
  scalelens::cli::add_compare_command(app, exit_code);
  scalelens::cli::add_sweep_command(app, exit_code);
  scalelens::cli::require_finite_numbers(app);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    app.exit(e);
    return 1;  // DESIGN.md: every usage error is exit code 1
  }
  return exit_code;
}
