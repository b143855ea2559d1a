#pragma once
#include <atomic>
// Walks the study's folders, asks the readers about each file, reads in parallel and merges the
// results into one Study.
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "model/study.hpp"


namespace scalelens {

class ProcessGroup;

// What the inputs may not say. label: the label of runs formed from traces without a
// scalelens.json (default: their folder's name without counts). global_batch_size (strong
// scaling) or batch_per_gpu (weak: global = per GPU × world size): for runs that state no global
// batch, so that throughput follows from step or epoch times.
struct StudyDefaults {
  std::optional<std::string> label;
  std::optional<double> global_batch_size, batch_per_gpu;
};

struct IngestOptions {
  std::vector<std::string> inputs;   // folders or files
  // RE2 regex searched in paths relative to their input; a run-defining file whose path does not
  // match is still read, and its runs kept when the regex matches their label, run name or experiment.
  std::optional<std::string> pattern;
  unsigned threads = 0;                // 0 = every core this process may use
  // Called as files finish: (done, total). From the calling thread only.
  std::function<void(std::size_t, std::size_t)> progress;
  // Set (by the caller's progress callback, say on Ctrl-C in Python) to stop reading: files not
  // yet started are left, and the study comes back with `cancelled` set.
  std::atomic<bool>* cancel = nullptr;
  std::optional<std::string> experiment;  // MLflow runs of this experiment (by name) only
  std::vector<std::string> run_names;     // MLflow train runs with these names only
  StudyDefaults defaults;
  // `mpirun -n K scalelens report`: the processes share the files (distribute/process_group.hpp);
  // the study comes back whole at rank 0 and empty at the others. Null: this process alone.
  ProcessGroup* group = nullptr;
  // GPU and host samples are reduced as each file is read where its run states its window
  // (start_ns and end_ns in scalelens.json): the run's figures over that window and, for GPUs, a
  // decimated chart stand for them (ReducedGpuSeries), so memory does not grow with the samples. Charts are kept to about
  // `gpu_chart_point_budget` points over all GPU files (0: no budget, kChartPointsPerSeries each,
  // as `serve` shows one run at a time). True: every sample is kept (the Python API).
  bool keep_samples = false;
  std::size_t gpu_chart_point_budget = kGpuChartPointBudget;
  // Called in the reading threads on a run folder's GPU log, its samples reduced, where nothing
  // read later can change that run's GPU figures (its folder has no other GPU log and no file that
  // defines runs, and its scalelens.json states the window and the world size): it may put a
  // GpuDigest in place of the log's GPUs, so that a large study does not hold a record per GPU
  // (`scalelens report` does: report_html.hpp, summarize_gpu_log). Null: the GPUs are kept.
  std::function<void(const Run& run, RunData& log)> summarize_gpus;
  // A run folder's epochs as the table their summary reads (EpochRow, a row per epoch) in place
  // of its ranks' intervals, made as its epoch log is read where that log is the folder's only one
  // and no file of the folder defines runs: a study of runs whose every rank logs its epochs then
  // holds a row per epoch, not per rank and epoch (`scalelens report` and `serve`). False: the
  // intervals are kept.
  bool tabulate_epochs = false;
  // Likewise a run folder's steps (StepTable): a row per step for its summary and, for the page, each
  // rank's step times thinned to its log's share of `step_chart_point_budget` points (the page's
  // budget, SeriesLimits::step_budget), in proportion to the log's size among the run folders'
  // step logs; made as the folder's only step log is read (`scalelens report`). False: the
  // intervals are kept.
  bool tabulate_steps = false;
  std::size_t step_chart_point_budget = kStepChartPointBudget;
  // One process reads the files in batches of about this many (whole run folders, in path order)
  // and merges a batch's plain run folders before the next, so that a study of thousands of runs
  // never holds every file's output at once (issue 17, part 2); the study is the same whatever the
  // batch. 0: every file in one batch (as a group of processes always reads).
  std::size_t files_per_batch = 4096;
  // Between batches, the free pages the batch's reading left inside the heaps go back to the
  // kernel (common/process_memory.hpp, give_back_freed_memory): the peak then holds what the study
  // keeps, not every batch's holes (bench/RESULTS.md). Set by the command-line program only: a
  // library loaded into someone else's process (Python) leaves the heap's policy to its host.
  bool give_back_between_batches = false;
};

Study ingest(const IngestOptions& options);

}  // namespace scalelens
