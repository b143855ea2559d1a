#pragma once
// Runs made of Kineto traces that no scalelens.json encloses (docs/inputs.md, "Traces alone"):
// each trace says its rank, world size and backend (distributedInfo), its GPU and its steps, which
// is enough to group a folder of profiler traces into runs and label them.
#include <filesystem>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "common/diagnostics.hpp"
#include "model/study.hpp"

namespace scalelens {

// One trace's contribution as its reader returned it: one RankBreakdown (rank, world size,
// backend, step numbers, start), and the GPU model where the trace names it.
struct LooseInput {
  std::filesystem::path file;
  RunData data;
};

// Groups traces into runs: traces in one folder (per-rank subfolders such as rank0/ count as their
// parent) with one world size and backend belong to one job, unless when profiling began tells
// jobs apart (trace::split_into_jobs: a gap of more than a minute, and the later traces are no later profiling
// window of the same processes: they cover steps the earlier ones already did, come from another process, or share
// no rank with them). Each job becomes one run, format "kineto";
// jobs at one world size are repeats of one configuration. Warns `mixed-jobs` when a folder holds
// more than one job, `missing-ranks` when a run lacks some of ranks 0..N-1, `duplicate-trace` for
// copies; a note per folder says how its runs were formed and labelled.
// `label`: --label (or a scalelens.json's above them: `label_from` says which), else
// label_from_folder() of the run's folder.
std::vector<Run> runs_from_traces(std::vector<LooseInput> traces, const std::optional<std::string>& label,
                                  std::vector<Diagnostic>& diagnostics, std::string_view label_from = "--label");

// nvidia-smi logs with no scalelens.json above them. Beside the traces of a run (its folder, or a
// subfolder of it) they are that job's GPUs: attached to the run (of several jobs in the folder, the
// one whose profiling began inside the log's time span, else the nearest). Else the logs of one
// folder form a run of their own (format "nvidia-smi", one log per node): world size = the GPUs
// they hold, label as for traces; it has GPU utilization and energy but no time. Logs in a folder
// that holds runs below it (a study's root: a log beside its run folders, in none of them) are
// left out with `gpu-log-not-assigned`: which run's GPUs they logged cannot be told. `runs` holds
// the runs formed from traces, `folder_runs` those of the scalelens.json files; new runs are
// appended to `runs`.
void attach_gpu_logs(std::vector<LooseInput> logs, std::vector<Run>& runs, const std::vector<Run>& folder_runs,
                     const std::optional<std::string>& label, std::vector<Diagnostic>& diagnostics);

// Leaves out a second trace of one rank over the same steps in `run` (a copy or a rerun beside it
// would double the rank's figures), with trace::duplicate_traces' warning; MPI records are kept.
// `group` names the run in the warning.
void drop_duplicate_traces(Run& run, const std::string& group, std::vector<Diagnostic>& diagnostics);

// The label a folder of traces gets: its name without the tokens that state a world size, node
// count or repeat ("ddp-8gpu" → "ddp", "fsdp_n16_run2" → "fsdp"); tokens are split at - _ . and
// spaces. When nothing is left ("8", "16gpus"), the parent folder's name, stripped the same way.
std::string label_from_folder(const std::filesystem::path& folder);

// The folder a trace's run is in: its own, or above per-rank subfolders (rank0/, worker_3/).
std::filesystem::path run_folder_of(const std::filesystem::path& trace_file);

}  // namespace scalelens
