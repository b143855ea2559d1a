#pragma once
// Many traces (one per rank, or many runs' worth) analysed in parallel, and what is said across
// ranks: mean/min/max and the slowest rank per step (stragglers).
#include <filesystem>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "common/diagnostics.hpp"
#include "model/study.hpp"
#include "trace/step_alignment.hpp"
#include "trace/breakdown.hpp"
#include "trace/collectives.hpp"
#include "trace/link_peaks.hpp"

namespace scalelens {
class ProcessGroup;
}

namespace scalelens::trace {

struct TraceSetOptions {
  std::vector<std::filesystem::path> inputs;  // files or folders (searched recursively)
  std::string comm_kernel_regex;              // empty = the collective-library default
  unsigned threads = 0;                       // 0 = every core this process may use
  bool cache = true;                          // summaries cached (trace_cache.hpp)
  std::filesystem::path cache_dir;            // --cache-dir; empty: default_cache_dir()
  std::optional<double> peak_tflops;          // --peak-tflops: the GPUs' peak, overriding the table
  std::optional<double> peak_tbps;            // --peak-tbps: the GPUs' memory bandwidth, overriding the table
  LinkOptions links;                          // --gpus-per-node, --link-gbps, --network
  // `mpirun -n K scalelens trace`: the processes share the files (distribute/process_group.hpp);
  // the set comes back whole at rank 0 and empty at the others. Null: this process alone.
  ProcessGroup* group = nullptr;
};

struct StepStraggler {
  std::int64_t step = 0;
  int ranks = 0;
  int slowest_rank = 0;
  double slowest_us = 0, fastest_us = 0, mean_us = 0;
  double exposed_comm_min_us = 0, exposed_comm_max_us = 0;
  double spread() const { return mean_us > 0 ? (slowest_us - fastest_us) / mean_us : 0; }  // relative
};

struct Across {
  double mean = 0, min = 0, max = 0;
  int min_rank = 0, max_rank = 0;
  int ranks = 0;  // ranks that have the figure (a CPU-only trace has no computation score)
};

struct TraceSet {
  std::vector<RankSummary> ranks;  // sorted by rank, then file
  std::vector<Diagnostic> diagnostics;
  bool hta_step_filter = false;  // HTA's filter applies: ≥ 2 distinct ProfilerStep names overall
  std::vector<StepStraggler> stragglers;  // steps every rank profiled, analysed on ≥ 2 ranks
  std::string misaligned_steps;           // the ranks profiled different steps (align_steps); "" when not
  std::optional<int> straggler_rank;      // slowest in at least half of those steps
  int straggler_steps = 0;                // in how many of them it was slowest
  Across step_time_us, computation_score, exposed_comm_us, idle_us;
  CollectiveMatch collective_match;  // calls matched across the ranks: wait vs transfer
  std::size_t files_considered = 0;
  std::size_t files_cached = 0;  // summaries read from the cache, not parsed
  std::optional<double> peak_tflops_override;
  std::optional<double> peak_tbps_override;
  // The inputs hold traces of several jobs (split_into_jobs: a rerun's beside the first run's):
  // each job analysed apart, with its files' figures, its cross-rank figures and warnings. `ranks`
  // then holds every job's files, job after job, and the cross-rank figures above are left empty.
  std::vector<TraceSet> jobs;
  std::optional<std::int64_t> start_ns;  // a job's: when its profiling began, where known
  PeakOverrides peaks() const { return {peak_tflops_override, peak_tbps_override}; }
};

// MFU of one rank: achieved FLOP/s over its GPU's peak (the override, else the table for its
// device and flops precision). Peak and mfu are NaN when unknown.
struct Mfu {
  double achieved_tflops = 0, peak_tflops = 0, mfu = 0;
};
Mfu mfu_of(const RankSummary& r, std::optional<double> peak_override);

// Traces among `inputs`: files named directly are always tried; in folders, files whose first
// bytes look like a Kineto trace, and files named as PyTorch names traces (has_kineto_file_name).
std::vector<std::filesystem::path> find_traces(const std::vector<std::filesystem::path>& inputs,
                                               std::vector<Diagnostic>& diagnostics);

TraceSet analyse_traces(const TraceSetOptions& options);

// One job's traces, already analysed: a second trace of a rank over the same steps left out
// (duplicate_traces), the rest in rank order, and what is said across them. `inputs`: the path the
// set's warnings name.
void analyse_job(TraceSet& set, const TraceSetOptions& options, const std::string& inputs);

// Cross-rank figures of already analysed ranks (also used by the ingest reader).
void summarise_across(TraceSet& set);

// Two traces of one rank in one run covering the same steps (a copy, a rerun into the same folder)
// must not both count; traces of different profiling windows (schedule(repeat=N): other step
// numbers) all count. Among the traces of one (group, rank) whose step numbers overlap, one is kept:
// the one with more analysed steps, then the more recently modified file, then the later path (a
// rerun's timestamped name). A trace without step numbers overlaps every trace of its rank.
// Returns the indices of the others, each with a `duplicate-trace` warning naming the kept file.
struct TraceOfRank {
  std::string group;  // the run (report) or the trace's folder (scalelens trace)
  int rank = 0;
  int steps = 0;
  std::string file;
  std::vector<std::int64_t> step_numbers;  // sorted, distinct
  double gpu_busy_us = 0;  // its GPU work: of two traces without steps, an empty one is not kept
};
std::vector<std::size_t> duplicate_traces(const std::vector<TraceOfRank>& traces, std::vector<Diagnostic>& diagnostics);

// Traces of one setup (of `world_size` ranks; 0: unknown) told apart into jobs by when profiling
// began (`scalelens report` and `scalelens trace` alike): in start order (traces whose clock gives no
// start last, by file), a gap of more than kSameJobGapNs begins a session. A later session continues
// the job before it as schedule(repeat=N) does, one trace per rank and window from the same
// processes: it shares a rank with the job, and each shared rank profiled other, later steps, from
// the same process where both traces say which. Else it is another job: a rerun of some ranks (a
// process of its own), ranks of another job, or the job's late ranks, which join it where they do
// not share a rank with it, and it and the groups of late ranks that follow it (up to the next that
// shares a rank with it) are ranks 0..world_size-1 each once, each of their traces profiled a step
// the job profiled, and all began within kRanksOfOneJobNs. Where a rank the job lacks began in two
// such groups, which is the job's cannot be told: they stay apart, and `unsure` (where given) gets a
// sentence saying so (`late-ranks-ambiguous`). Returns each job's indices into `traces`, jobs in start
// order, each job's in start order.
struct TraceStart {
  int rank = 0;
  std::optional<std::int64_t> start_ns;
  const std::vector<std::int64_t>* step_numbers = nullptr;  // sorted, distinct; never null
  std::string file;
  std::optional<std::int64_t> base_time_ns;  // baseTimeNanoseconds: the same for one process's traces
};
// Ranks of one job reach their first profiled step within a step of each other; two jobs are
// minutes apart at least.
inline constexpr std::int64_t kSameJobGapNs = 60'000'000'000;
// The most one job's ranks can be apart at one step: PyTorch's default collective timeout
// (init_process_group, 30 min), past which the ranks that waited fail the job.
inline constexpr std::int64_t kRanksOfOneJobNs = 30 * 60'000'000'000LL;
std::vector<std::vector<std::size_t>> split_into_jobs(const std::vector<TraceStart>& traces, int world_size,
                                                     std::vector<std::string>* unsure = nullptr);

// "2023-09-07 23:10:01 UTC" of a Unix time in ns.
std::string unix_time_text(std::int64_t ns);

// The report's per-rank record of one summary.
RankBreakdown to_rank_breakdown(const RankSummary& r, std::optional<double> peak_tflops_override = std::nullopt);

}  // namespace scalelens::trace
