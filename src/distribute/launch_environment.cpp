#include "distribute/launch_environment.hpp"

#include <charconv>
#include <cstdlib>
#include <string_view>

namespace scalelens {

namespace {

std::optional<int> env_int(const char* name) {
  const char* v = std::getenv(name);
  if (!v || !*v) return std::nullopt;
  int out = 0;
  std::string_view s(v);
  auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  if (ec != std::errc{} || end != s.data() + s.size() || out < 0) return std::nullopt;
  return out;
}

}  // namespace

LaunchEnvironment launch_environment() {
  LaunchEnvironment env;
  // A process that an MPI rank started (a training script running `scalelens report`) inherits
  // its launcher's variables without being one of the launched processes.
  if (const char* off = std::getenv("SCALELENS_NO_MPI"); off && *off && std::string_view(off) != "0") return env;
  if (auto size = env_int("OMPI_COMM_WORLD_SIZE")) {
    env.size = *size;
    env.rank = env_int("OMPI_COMM_WORLD_RANK").value_or(0);
    env.launcher = "mpirun";
    env.mpi_can_join = true;
  } else if (auto pmi = env_int("PMI_SIZE")) {
    env.size = *pmi;
    env.rank = env_int("PMI_RANK").value_or(0);
    env.launcher = std::getenv("SLURM_PROCID") ? "srun" : "mpiexec";
    env.mpi_can_join = true;
  } else if (auto tasks = env_int("SLURM_STEP_NUM_TASKS"); tasks && env_int("SLURM_PROCID")) {
    // srun: wired up for MPI only with --mpi=pmix (PMIX_RANK) or pmi2 (PMI_SIZE, above).
    env.size = *tasks;
    env.rank = *env_int("SLURM_PROCID");
    env.launcher = "srun";
    env.mpi_can_join = env_int("PMIX_RANK").has_value();
  } else if (auto pmix = env_int("PMIX_RANK")) {
    // A PMIx launcher that does not say how many it started (prterun): MPI will.
    env.size = 0;
    env.rank = *pmix;
    env.launcher = "a PMIx launcher";
    env.mpi_can_join = true;
  }
  if (env.size == 1) env = LaunchEnvironment{};
  return env;
}

}  // namespace scalelens
