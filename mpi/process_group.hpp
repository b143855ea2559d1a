#pragma once
// The library's ProcessGroup (src/distribute/process_group.hpp) on MPI, for `mpirun -n K
// scalelens trace|report`. MPI is initialised when the group is made and finalised when it is
// destroyed: callers drop it as soon as the results are gathered, so that the other processes
// leave at once instead of spinning in MPI_Finalize while rank 0 writes the report.
#include <climits>
#include <cstdint>
#include <memory>

#include "distribute/process_group.hpp"

namespace scalelens {

// Joins the MPI job this process was started in (MPI_Init_thread, funneled). Messages go in parts
// of at most `max_message` bytes in all (MPI's counts are ints); tests make it small.
std::unique_ptr<ProcessGroup> join_mpi_job(std::uint64_t max_message = INT_MAX / 2);

}  // namespace scalelens
