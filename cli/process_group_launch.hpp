#pragma once
// `mpirun -n K scalelens trace|report`: the processes a launcher started share the files
// (docs/parallel.md). Only these two commands join an MPI job: `scalelens run` is itself started
// by mpirun around training code that is the job's real MPI program.
#include <cstdlib>
#include <exception>
#include <string>
#include <memory>
#include <optional>

#include "distribute/process_group.hpp"

namespace scalelens::cli {

// --threads, else the cores this process is bound to, else this node's cores shared among the
// group's processes on it.
unsigned threads_per_process(unsigned requested, const ProcessGroup& group);

// This process' place among those a launcher started, for `trace` and `report`.
struct LaunchedGroup {
  std::unique_ptr<ProcessGroup> group;  // null when it runs alone, as always
  bool launched() const { return group != nullptr; }
  // The process that writes the results: rank 0, or the only one.
  bool first() const { return !group || group->rank() == 0; }
  // Reader threads: `requested` (--threads), or this process' share of its node's cores.
  unsigned threads(unsigned requested) const { return group ? threads_per_process(requested, *group) : requested; }
  // MPI finalised (the others leave now, while the first one goes on); true for the first.
  bool finish() {
    const bool writes = first();
    group.reset();
    return writes;
  }
};

// Joins the MPI job this process belongs to, where a launcher started several, and lets only the
// first of them warn about the trace cache (the job says it once). nullopt after saying why on
// standard error (by the first process) when several were started but cannot work together: exit 1.
std::optional<LaunchedGroup> join_launched_processes(const char* command);

// `work()` (the reading, which the processes do together); a failure in it ends the whole job
// through the group, rather than leaving the other processes waiting for this one.
template <class Work>
auto analyse_in_group(ProcessGroup* group, Work&& work) -> decltype(work()) {
  if (!group) return work();
  std::string why;
  try {
    return work();
  } catch (const std::exception& e) {
    why = e.what();
  } catch (...) {
    why = "an unknown failure";
  }
  group->abort(why);
  std::abort();  // not reached: abort ends the job
}

}  // namespace scalelens::cli
