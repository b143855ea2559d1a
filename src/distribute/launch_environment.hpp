#pragma once
// Whether this process is one of several a launcher started for one job step, read from the
// variables launchers set (no MPI call: `scalelens run` under mpirun must never initialise MPI
// itself, and a binary without MPI must still notice that it was started K times).
#include <optional>
#include <string>

namespace scalelens {

struct LaunchEnvironment {
  int size = 1;   // processes started: 1 when no launcher said more, 0 when one did not say how many
  int rank = 0;   // this one's place among them
  std::string launcher;  // "mpirun", "srun", ... for messages; "" when alone
  // The launcher gives MPI a way to wire the processes up (mpirun, or srun --mpi=pmix/pmi2).
  // Plain srun does not: MPI_Init would make K independent one-process jobs.
  bool mpi_can_join = false;
  bool many() const { return size != 1; }
};

// From Open MPI's OMPI_COMM_WORLD_*, PMIx's PMIX_RANK, PMI's PMI_SIZE/PMI_RANK (MPICH, srun
// --mpi=pmi2) and SLURM's SLURM_STEP_NUM_TASKS/SLURM_PROCID (srun). SCALELENS_NO_MPI=1 says one
// process whatever they say (for a scalelens that an MPI rank starts as a child process).
LaunchEnvironment launch_environment();

}  // namespace scalelens
