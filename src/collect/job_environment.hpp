#pragma once
// Who am I in which job? Read from the launcher's environment variables (SLURM, torchrun,
// Open MPI, MPICH/PMI, Intel MPI), so that every wrapper of one job reaches the same answer
// without talking to the others. Each derived figure records the variables it came from.
#include <sys/types.h>

#include <map>
#include <set>
#include <optional>
#include <string>
#include <vector>

namespace scalelens::collect {

using EnvMap = std::map<std::string, std::string>;

// The current process's environment.
EnvMap current_environment();

// When process `pid` started (field 22 of /proc/PID/stat, clock ticks since boot), to tell a pid's
// reuse apart: a pid and its start name one process. "0" when it cannot be read (no such process).
std::string process_start(pid_t pid);

struct JobEnvironment {
  std::string scheduler = "none";          // "slurm", "torchrun", "openmpi", "mpich", "intelmpi", "none"
  std::map<std::string, std::string> ids;  // scheduler ids for the manifest: job_id, step_id, …
  // A key that all wrappers of this job share (e.g. "slurm-123.0"); none outside a launcher.
  std::optional<std::string> job_key;
  std::optional<std::string> job_key_warning;  // set when the key only holds within one node
  // Who may share the run folder: the same for every wrapper of this one launch and for no other
  // invocation. The job key where it names one launch; narrowed to the launching process in
  // SLURM's batch step (every run of a batch script or salloc shell has the key slurm-J.batch);
  // this process alone where it is its launch's only wrapper.
  std::string launch_key;
  int rank = 0;
  std::optional<int> local_rank, ranks, local_ranks, nodes, gpus_on_node;
  // SLURM's batch step (the sbatch script, an salloc shell: SLURM_JOB_ID without SLURM_STEP_ID)
  // runs the command once, as one process: SLURM_NTASKS there counts the job's tasks, which srun
  // (or mpirun without -n) started from it inherits, not ranks of this command. That count is
  // `job_tasks`; `ranks` is then only an inner launcher's (WORLD_SIZE, ...).
  bool slurm_batch_step = false;
  std::optional<int> job_tasks;
  std::vector<std::string> hosts;  // from a SLURM node list, expanded
  std::map<std::string, std::string> detected_from;
  // Launcher variables that hold no possible value (WORLD_SIZE=0, SLURM_GPUS_ON_NODE=99999): the
  // figure is left unknown, not taken from an outer launcher's variable or guessed; each is said.
  std::set<std::string> unreadable;  // figures: "rank", "ranks", "nodes", ...
  std::vector<std::string> warnings;
};

// Innermost launcher first: a torchrun worker inside srun takes torchrun's rank, an mpirun
// inside an sbatch script takes Open MPI's.
JobEnvironment detect_job(const EnvMap& env);

// "n[01-03,07],gpu5" → n01 n02 n03 n07 gpu5. Malformed lists give what could be read.
std::vector<std::string> expand_slurm_nodelist(const std::string& list);

}  // namespace scalelens::collect
