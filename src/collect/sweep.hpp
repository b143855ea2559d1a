#pragma once
// `scalelens sweep` (docs/sweep.md): a scaling study planned, launched, followed and resumed. Each
// (label, size, repeat) is one entry: one SLURM job, or one local run, whose command is wrapped in
// `scalelens run` with the entry's run id, so the study folder fills with run folders exactly as
// `scalelens run` writes them. The plan and each entry's state live in <study>/sweep.json.
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "common/result.hpp"

namespace scalelens::sweep {

inline constexpr const char* kSweepSchema = "scalelens.sweep/1";

enum class State { planned, submitted, running, done, failed, cancelled, timeout };
std::string_view state_name(State s);
std::optional<State> state_from_name(std::string_view s);
// Waiting for the scheduler: submitted or running.
inline bool in_flight(State s) { return s == State::submitted || s == State::running; }
// Ended without success: failed, cancelled or timed out (exit 5, "some run failed").
inline bool ended_badly(State s) { return s == State::failed || s == State::cancelled || s == State::timeout; }

struct Entry {
  std::string run_id, label;
  int nodes = 1, tasks = 1, tasks_per_node = 1, gpus = 1, repeat = 1;
  std::vector<std::string> command;  // the user's command with this entry's placeholders filled
  State state = State::planned;
  std::string job_id;                // the scheduler's, "" when not submitted (local: none)
  std::optional<int> exit_status;
  std::string note;                  // why it failed, what the scheduler said
  // Local, while running: the sweep process that runs it, when it started (collect::process_start)
  // and its host, so that a mark left by a sweep that died can be told from a live one, also where
  // the pid has been reused.
  std::optional<int> pid;
  std::string pid_start;  // "" in plans written before it was kept
  std::string host;
};

// The sweep that launches a study's entries, marked in its plan for as long as it launches them:
// between two entries no entry is marked running, and a second sweep that its lock did not keep
// out (sweep.lock removed, a lock that does not reach across hosts) would launch beside it. Named
// as an entry's mark names its sweep: pid, start time (collect::process_start) and host.
struct Owner {
  int pid = 0;
  std::string pid_start;
  std::string host;
};

struct Plan {
  std::string launcher = "local";          // "slurm" | "local"
  std::vector<std::string> sbatch_args;    // --sbatch, split as a shell does
  std::vector<std::string> srun_args;      // --srun: options of our script's srun (e.g. --mpi=pmix for MPI programs)
  std::string template_file;               // --template: the user's batch script ("" = ours)
  // Where the commands run (jobs are submitted from there): the folder the sweep was planned in, or
  // --workdir; a --resume from elsewhere runs them where the first runs ran. "" (plans written
  // before it was kept): the current folder.
  std::string workdir;
  std::vector<std::string> run_args;       // more options for `scalelens run` (--mpi-comm, --global-batch-size N, ...)
  bool mpirun = true;                      // local: start the wrapped command under `mpirun -n {tasks}`
  std::vector<Entry> entries;
  std::optional<Owner> owner;  // none while no sweep launches (and in plans written before it was kept)
};

// What a sweep asks for: one of nodes (× tasks per node) or tasks (one node).
struct Sizes {
  std::vector<int> nodes;  // --nodes
  int tasks_per_node = 1;  // --tasks-per-node
  std::vector<int> tasks;  // --tasks (one node each)
  int gpus_per_task = 1;   // world size counts tasks × this
  int repeats = 1;
};

// The entries of a label's sweep, in order of size then repeat, with run ids
// "<label>-<nodes>n<tasks>t-r<repeat>" (a safe file name; a label that is not one is made one, and
// a short hash of it added, "d_d_p.1a2b3c4d-1n1t-r1", so that no two labels share a run id) and the command's placeholders filled:
// {nodes} {tasks} {tasks_per_node} {gpus} {repeat} {label} {run_id}. The label is kept on one
// line (one_line): it goes into job scripts.
std::vector<Entry> plan_entries(const std::string& label, const Sizes& sizes, const std::vector<std::string>& command);
// One entry's identity: its label as given and its size and repeat (the run id is derived from them).
bool same_entry(const Entry& a, const Entry& b);
// The entry's identity in words, for messages.
std::string describe(const Entry& e);
// The GPUs of the largest shape `sizes` plans, in 64 bits (each count is in range, their product
// may not be), for the caller to hold to model/limits.hpp before planning.
std::int64_t largest_gpus(const Sizes& sizes);
// An exit status as a manifest or plan states it: one beyond int is no status a process has, and
// cut to int it may read 0 (success): failed (1).
int exit_status_of(std::int64_t code);
std::string substitute(std::string text, const Entry& e);

// The argv that measures an entry: `scalelens run --study S --label L --run-id R --world-size G
// [run args] -- cmd` (G: the entry's GPUs).
std::vector<std::string> run_argv(const Plan& plan, const Entry& e, const std::filesystem::path& study, const std::string& scalelens);
// Words as one shell line, each quoted where it needs it: what the sweep prints and scripts run.
std::string shell_line(const std::vector<std::string>& argv);

// sbatch's argv for an entry's batch script: --sbatch's options with the entry's placeholders filled,
// as in the command and --run-args.
std::vector<std::string> sbatch_argv(const Plan& plan, const Entry& e, const std::filesystem::path& script);

// The batch script of an entry: the user's template with its placeholders filled ({scalelens_run}:
// the run argv as a shell line; {command}: the same, the two are one), else ours: #SBATCH lines for
// the size, `srun` (with --srun's options, placeholders filled) around the run argv. Refused: a template without {scalelens_run} or {command}.
Result<std::string> job_script(const Plan& plan, const Entry& e, const std::filesystem::path& study, const std::string& scalelens,
                               const std::string& template_text);

Result<Plan> read_plan(const std::filesystem::path& file);
// sweep.json's text for `plan` (what write_plan writes).
std::string plan_json(const Plan& plan);
Result<bool> write_plan(const std::filesystem::path& file, const Plan& plan);

// What the run folder says of an entry: done (complete, exit 0), failed (complete, another exit;
// or a manifest that is there but cannot be read, a FIFO or a device in its place, or another
// run's, of another label or world size: `why` then says so, naming it), running (a manifest still being written), nullopt (no run folder).
std::optional<State> state_from_run_folder(const std::filesystem::path& study, const Entry& e, std::optional<int>& exit_status,
                                           std::string* why = nullptr);

// SLURM's job state word (PENDING, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, NODE_FAIL, ...).
State state_from_slurm(std::string_view word);
// What the scheduler says of one job: its state word and why it is in it ("None" or "" when no reason).
struct JobWord {
  std::string id, state, reason;
};
// `squeue -h -o "%i %T %r"` or `scontrol show job -o` lines.
std::vector<JobWord> parse_squeue(std::string_view out);
std::vector<JobWord> parse_scontrol(std::string_view out);
// `sacct -n -X -P -o JobID,State` lines ("42|COMPLETED", "43|CANCELLED by 0"): the state's word
// alone, no reason.
std::vector<JobWord> parse_sacct(std::string_view out);
// A pending reason that SLURM keeps until the request or the cluster's configuration changes (the
// job as submitted can never start: more nodes or time than its partition allows, a constraint no
// node has, an account or QOS it may not use, a dependency that failed), as listed on SLURM's
// job_reason_codes page. Reasons that clear as other jobs end (Resources, Priority, *Limit counts
// of jobs) are not among them.
bool never_starts(std::string_view reason);

}  // namespace scalelens::sweep
