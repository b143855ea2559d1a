#include "collect/job_environment.hpp"

#include <unistd.h>

#include <fmt/format.h>

#include "common/file_io.hpp"
#include "common/text.hpp"
#include "model/limits.hpp"

extern char** environ;

namespace scalelens::collect {

EnvMap current_environment() {
  EnvMap env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq != std::string_view::npos) env.emplace(std::string(kv.substr(0, eq)), std::string(kv.substr(eq + 1)));
  }
  return env;
}

namespace {

const std::string* get(const EnvMap& env, const char* name) {
  auto it = env.find(name);
  return it == env.end() || trim(it->second).empty() ? nullptr : &it->second;
}

// Sets `into` from the first of `names` that is set: a whole number from `min` to `max`, else the
// figure is unknown, said (an outer launcher's variable is not the inner one's figure, and
// WORLD_SIZE=0 read as "no launcher" made a world size of 1). Records where it came from.
bool take_int(const EnvMap& env, std::initializer_list<const char*> names, std::optional<int>& into,
              JobEnvironment& job, const char* figure, std::int64_t min, std::int64_t max) {
  for (const char* n : names) {
    const auto* v = get(env, n);
    if (!v) continue;
    // SLURM writes per-node counts as "4(x2)" or "2,1" in some variables; the first number is ours.
    auto text = trim(std::string_view(*v));
    text = text.substr(0, std::min(text.find('('), text.find(',')));
    auto i = parse_int(text);
    if (!i || *i < min || *i > max) {
      job.unreadable.insert(figure);
      job.warnings.push_back(fmt::format("{}={} is not a {} from {} to {}; the {} is left unknown", n, printable(*v),
                                         min == 0 ? "number" : "count", min, max, figure));
      return false;
    }
    into = static_cast<int>(*i);
    job.detected_from[figure] = n;
    return true;
  }
  return false;
}

}  // namespace

std::string process_start(pid_t pid) {
  auto text = read_file(fmt::format("/proc/{}/stat", pid));
  if (!text) return "0";
  auto close = text.value().rfind(')');
  if (close == std::string::npos) return "0";
  std::string_view rest = std::string_view(text.value()).substr(close + 2);
  for (int field = 3; field < 22; ++field) {
    auto sp = rest.find(' ');
    if (sp == std::string_view::npos) return "0";
    rest.remove_prefix(sp + 1);
  }
  return std::string(rest.substr(0, rest.find(' ')));
}

std::vector<std::string> expand_slurm_nodelist(const std::string& list) {
  std::vector<std::string> hosts;
  std::size_t i = 0;
  while (i < list.size()) {
    // One item: prefix, optionally [ranges], up to a comma outside brackets.
    std::size_t start = i;
    int depth = 0;
    while (i < list.size() && (depth > 0 || list[i] != ',')) {
      if (list[i] == '[') ++depth;
      if (list[i] == ']') --depth;
      ++i;
    }
    std::string item = list.substr(start, i - start);
    ++i;
    auto open = item.find('[');
    auto close = item.find(']');
    if (open == std::string::npos || close == std::string::npos || close < open) {
      if (!item.empty()) hosts.push_back(item);
      continue;
    }
    std::string prefix = item.substr(0, open), suffix = item.substr(close + 1);
    std::string ranges = item.substr(open + 1, close - open - 1);
    std::size_t r = 0;
    while (r <= ranges.size()) {
      auto comma = ranges.find(',', r);
      if (comma == std::string::npos) comma = ranges.size();
      std::string range = ranges.substr(r, comma - r);
      r = comma + 1;
      auto dash = range.find('-');
      std::string lo = range.substr(0, dash);
      std::string hi = dash == std::string::npos ? lo : range.substr(dash + 1);
      auto a = parse_int(lo), b = parse_int(hi);
      if (!a || !b || *b < *a || *b - *a > 100000) {
        if (!range.empty()) hosts.push_back(prefix + range + suffix);
        continue;
      }
      for (auto k = *a; k <= *b; ++k) {
        std::string num = std::to_string(k);
        if (num.size() < lo.size()) num.insert(0, lo.size() - num.size(), '0');  // keep zero padding
        hosts.push_back(prefix + num + suffix);
      }
    }
  }
  return hosts;
}

JobEnvironment detect_job(const EnvMap& env) {
  JobEnvironment job;
  const bool slurm = get(env, "SLURM_JOB_ID") != nullptr;
  const bool torchrun = get(env, "TORCHELASTIC_RUN_ID") != nullptr || (get(env, "RANK") && get(env, "LOCAL_RANK") && get(env, "WORLD_SIZE"));
  const bool openmpi = get(env, "OMPI_COMM_WORLD_RANK") != nullptr;
  const bool intelmpi = get(env, "PMI_RANK") && (get(env, "MPI_LOCALRANKID") || get(env, "I_MPI_ROOT"));
  const bool mpich = get(env, "PMI_RANK") != nullptr && !intelmpi;

  // Rank and sizes: innermost launcher first.
  std::optional<int> rank;
  const std::int64_t max_ranks = limits::kMaxWorldSize;
  take_int(env, {"RANK", "OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK", "SLURM_PROCID"}, rank, job, "rank", 0, max_ranks - 1);
  job.rank = rank.value_or(0);
  take_int(env, {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}, job.local_rank, job, "local_rank", 0,
           limits::kMaxPerNode - 1);
  job.slurm_batch_step = slurm && !get(env, "SLURM_STEP_ID");
  if (job.slurm_batch_step) {
    take_int(env, {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE"}, job.ranks, job, "ranks", 1, max_ranks);
    take_int(env, {"SLURM_NTASKS"}, job.job_tasks, job, "job_tasks", 1, max_ranks);
  } else {
    take_int(env, {"WORLD_SIZE", "OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS"}, job.ranks, job, "ranks", 1,
             max_ranks);
  }
  take_int(env, {"LOCAL_WORLD_SIZE", "OMPI_COMM_WORLD_LOCAL_SIZE", "MPI_LOCALNRANKS", "SLURM_NTASKS_PER_NODE"}, job.local_ranks, job,
           "local_ranks", 1, limits::kMaxPerNode);
  take_int(env, {"GROUP_WORLD_SIZE", "OMPI_MCA_orte_num_nodes", "SLURM_STEP_NUM_NODES", "SLURM_JOB_NUM_NODES", "SLURM_NNODES"}, job.nodes,
           job, "nodes", 1, limits::kMaxNodes);
  take_int(env, {"SLURM_GPUS_ON_NODE"}, job.gpus_on_node, job, "gpus_per_node", 0, limits::kMaxPerNode);
  if (job.gpus_on_node && *job.gpus_on_node == 0) job.gpus_on_node.reset();  // a CPU-only allocation states none
  // A rank beyond the ranks: one of the two is not this launch's.
  if (rank && job.ranks && *rank >= *job.ranks)
    job.warnings.push_back(fmt::format("rank {} ({}) of {} ranks ({}): one of them is not this launch's; the rank is taken as given",
                                       *rank, job.detected_from["rank"], *job.ranks, job.detected_from["ranks"]));

  if (const auto* list = get(env, "SLURM_STEP_NODELIST") ? get(env, "SLURM_STEP_NODELIST") : get(env, "SLURM_JOB_NODELIST")) {
    job.hosts = expand_slurm_nodelist(*list);
    job.detected_from["hosts"] = get(env, "SLURM_STEP_NODELIST") ? "SLURM_STEP_NODELIST" : "SLURM_JOB_NODELIST";
    if (!job.nodes && !job.hosts.empty()) {
      job.nodes = static_cast<int>(job.hosts.size());
      job.detected_from["nodes"] = job.detected_from["hosts"];
    }
  }

  // The job key: innermost launcher with a job-wide id.
  if (torchrun) {
    job.scheduler = "torchrun";
    if (const auto* id = get(env, "TORCHELASTIC_RUN_ID"); id && *id != "none") {
      job.ids["run_id"] = *id;
      job.job_key = "torchrun-" + *id;
      job.detected_from["run_id"] = "TORCHELASTIC_RUN_ID";
    }
  } else if (openmpi) {
    job.scheduler = "openmpi";
    const auto* ns = get(env, "PMIX_NAMESPACE");
    const auto* jobid = get(env, "OMPI_MCA_ess_base_jobid");
    if (ns || jobid) {
      job.ids["job_id"] = ns ? *ns : *jobid;
      job.job_key = "ompi-" + (ns ? *ns : *jobid);
      job.detected_from["run_id"] = ns ? "PMIX_NAMESPACE" : "OMPI_MCA_ess_base_jobid";
    }
  } else if (mpich || intelmpi) {
    job.scheduler = intelmpi ? "intelmpi" : "mpich";
  }
  if (slurm) {
    // DESIGN.md's job_id/step_id are SLURM's when SLURM started the ranks; under another launcher
    // inside an allocation (torchrun, mpirun) job_id is that launcher's, and SLURM's are named apart.
    const bool launched_by_slurm = job.scheduler == "none";
    if (launched_by_slurm) job.scheduler = "slurm";
    job.ids[launched_by_slurm ? "job_id" : "slurm_job_id"] = *get(env, "SLURM_JOB_ID");
    if (const auto* step = get(env, "SLURM_STEP_ID")) job.ids[launched_by_slurm ? "step_id" : "slurm_step_id"] = *step;
    if (!job.job_key) {
      const auto* step = get(env, "SLURM_STEP_ID");
      job.job_key = fmt::format("slurm-{}.{}", *get(env, "SLURM_JOB_ID"), step ? *step : std::string("batch"));
      job.detected_from["run_id"] = step ? "SLURM_JOB_ID+SLURM_STEP_ID" : "SLURM_JOB_ID";
    }
  }
  // The ranks of one node share their launcher process (the parent), which names that launch.
  const pid_t parent = ::getppid();
  const std::string parent_key = fmt::format("{}-{}", parent, process_start(parent));
  const bool several_ranks = (mpich || intelmpi || torchrun) && job.ranks.value_or(1) > 1;
  if (!job.job_key && (mpich || intelmpi || (torchrun && job.ranks.value_or(1) > 1))) {
    // Hydra (MPICH, Intel MPI) and torchrun without --rdzv-id export no job-wide id.
    job.job_key = fmt::format("{}-{}", job.scheduler, parent_key);
    job.detected_from["run_id"] = "parent process id";
    job.job_key_warning = fmt::format(
        "{} exports no job-wide id: wrappers on other nodes would write other run folders; pass --run-id "
        "(the same value on every node) for a multi-node job", job.scheduler);
  }
  const bool batch_step = job.slurm_batch_step && job.job_key == "slurm-" + *get(env, "SLURM_JOB_ID") + ".batch";
  if (job.job_key && !batch_step) {
    job.launch_key = *job.job_key;
  } else if (job.job_key && several_ranks) {
    // A launcher inside the batch step starts its ranks on this one node, as children of itself.
    job.launch_key = fmt::format("{}-{}", *job.job_key, parent_key);
  } else {
    // The launch's only wrapper: nothing to share, so no other invocation may join its folder.
    // (Host too: run folders may be on a file system that several nodes share.)
    char host[256] = {};
    ::gethostname(host, sizeof host - 1);
    const pid_t self = ::getpid();
    job.launch_key = fmt::format("process-{}-{}-{}", host, self, process_start(self));
  }
  return job;
}

}  // namespace scalelens::collect
