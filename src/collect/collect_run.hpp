#pragma once
// `scalelens run`: wraps one command, measures it, and records one rank of one run folder.
// The CLI parses arguments into RunOptions; everything else happens here.
#include <cstdio>
#include <optional>
#include <string>
#include <vector>

#include "collect/job_environment.hpp"

namespace scalelens::collect {

struct RunOptions {
  std::string study = "runs";
  std::string label;  // "" = the command's program name
  std::optional<std::string> run_id;
  std::optional<int> world_size, nodes, gpus_per_node;
  std::optional<double> global_batch_size, samples_per_epoch;
  std::optional<std::string> scaling;
  double interval_s = 0.5;
  double flush_s = 1.0;
  std::string gpu_source = "auto";  // auto | nvml | amdsmi | none | replay:FILE
  bool sample_host = true;
  std::string host;  // "" = SCALELENS_HOST, else gethostname()
  bool quiet = false;
  double kill_after_s = 10.0;  // SIGKILL to the job's group this long after SIGTERM/SIGINT/SIGHUP
  std::string mpi_comm_lib;  // libscalelens-mpi.so to LD_PRELOAD into the child; "" = off
  std::vector<std::string> command;
};

// What the wrapper decided before starting anything; exposed for tests and --dry-run-like output.
struct RunPlan {
  JobEnvironment job;
  std::string host, run_id, label;
  // The machine (cluster) the run is on: SLURM_CLUSTER_NAME, else the host name without its node
  // number ("jwb0123" → "jwb"); the report keeps configurations of different systems apart.
  std::string system;
  std::string run_dir;  // absolute
  std::optional<int> world_size;
  // Why the world size is unknown though the command names a launcher's counts (ones beyond any
  // machine), or why the one process of SLURM's batch step is not the job's task count.
  std::optional<std::string> world_size_warning;
  // `torchrun --nproc-per-node gpu|auto`: processes per node = the node's devices, counted once
  // the sampler has looked (settle_per_node_devices); the world size is unset until then.
  struct PerNodeDevices {
    std::string word;     // "gpu" or "auto"
    std::int64_t nodes;   // × this
    std::string from;     // the argument, for detected_from
  };
  std::optional<PerNodeDevices> per_node_devices;
  // The launcher COMMAND is ("torchrun", "mpirun" …) when the wrapper wraps one: its rank record
  // then stands for a node's wrapper, not for a training rank. Empty when the wrapper is a rank.
  std::string launcher;
  std::map<std::string, std::string> detected_from;
};

RunPlan plan_run(const RunOptions& options, const EnvMap& env);

// Settles a plan's per_node_devices: `gpus_seen` is the GPUs this node's sampler selected (as
// CUDA_VISIBLE_DEVICES and SLURM's GPU list leave them; 0 when no GPU library or driver answers),
// nullopt when this wrapper did not look. torchrun's `gpu` is that count; `auto` is it, or the
// node's CPUs when there is no GPU. Without a count the world size stays unknown, with a warning.
void settle_per_node_devices(RunPlan& plan, std::optional<int> gpus_seen);

// Runs the whole thing; returns the wrapper's exit status (the child's, 128+signal when a
// signal ended it, 1 when the run folder cannot be written, 126/127 when the command cannot
// be started). Messages go to `diag`.
int run_collect(const RunOptions& options, const EnvMap& env, std::FILE* diag);

}  // namespace scalelens::collect
