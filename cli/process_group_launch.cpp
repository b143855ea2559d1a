#include "process_group_launch.hpp"

#include <algorithm>
#include <cstdio>
#include <thread>

#include "common/parallel.hpp"
#include "distribute/launch_environment.hpp"
#include "trace/trace_cache.hpp"
#ifdef SCALELENS_HAVE_MPI
#include "process_group.hpp"
#endif

namespace scalelens::cli {

namespace {

std::optional<std::unique_ptr<ProcessGroup>> join_job(const char* command) {
  const auto env = launch_environment();
  if (!env.many()) return std::unique_ptr<ProcessGroup>{};
  // Said once, by the first process, where all K would say the same.
  auto refuse = [&](const char* why) {
    if (env.rank == 0) std::fprintf(stderr, "scalelens %s: %s\n", command, why);
    return std::nullopt;
  };
#ifdef SCALELENS_HAVE_MPI
  if (!env.mpi_can_join)
    return refuse(
        "started by srun as one of several tasks, but without MPI's process interface, so the tasks cannot share "
        "the work; start it with 'srun --mpi=pmix ...' (or mpirun), or as one task: it uses every core of its node");
  auto group = join_mpi_job();
  if (env.size > 1 && group->size() != env.size) {
    if (group->rank() == 0)
      std::fprintf(stderr, "scalelens %s: %s started %d processes but MPI joined %d; start it with mpirun or 'srun --mpi=pmix'\n",
                   command, env.launcher.c_str(), env.size, group->size());
    return std::nullopt;
  }
  return group;
#else
  return refuse(
      "started as one of several processes, but this scalelens was built without MPI, so they cannot share the work "
      "(each would write the whole report); run it as one process (it uses every core), or build it where Open MPI "
      "is installed");
#endif
}

}  // namespace

std::optional<LaunchedGroup> join_launched_processes(const char* command) {
  auto joined = join_job(command);
  if (!joined) return std::nullopt;
  LaunchedGroup job{std::move(*joined)};
  if (!job.first()) trace::set_cache_warnings(false);
  return job;
}

unsigned threads_per_process(unsigned requested, const ProcessGroup& group) {
  if (requested) return requested;
  const unsigned node = std::max(1u, std::thread::hardware_concurrency());  // the node's, whatever this process may use
  const auto local = static_cast<unsigned>(std::max(1, group.local_size()));
  // Bound by the launcher (mpirun binds each process to a core or socket by default): the cores
  // it may run on. Unbound: the node's cores shared among the group's processes on it.
  const unsigned bound = affinity_cores();
  unsigned threads = bound < node ? bound : std::max(1u, node / local);
  // A cgroup's CPU quota (a container's --cpus) is shared by the processes in it, on a node
  // usually all of the group's.
  if (const auto quota = cpu_quota_cores()) threads = std::min(threads, std::max(1u, *quota / local));
  return threads;
}

}  // namespace scalelens::cli
