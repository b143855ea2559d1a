#pragma once
// Runs the real scalelens binary as a child process and captures what it prints.
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "support/test_support.hpp"

namespace scalelens::testing {

struct Output {
  int exit_code = -1;
  std::string out, err;
};

// Runs a shell command line in a scratch working folder (what a command writes there by default,
// such as ./scalelens-report, goes with it); standard input is /dev/null.
inline Output run_command(const std::string& command) {
  ScratchDir tmp;
  auto err_path = tmp / "stderr";
  std::filesystem::create_directories(tmp / "cwd");
  std::string cmd = "cd '" + (tmp / "cwd").string() + "' && ( " + command + " ) </dev/null 2>" + err_path.string();
  Output o;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return o;
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) o.out.append(buf, n);
  int status = ::pclose(p);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  o.err = slurp(err_path);
  return o;
}

// `args` is a shell fragment (quote paths yourself); `env` goes before the binary ("cd X &&", "A=1").
inline Output run_scalelens(const std::string& args, const std::string& env = {}) {
  return run_command(env + " " SCALELENS_BIN " " + args);
}

inline std::string quoted(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

// Environment assignments (a shell fragment) that give an mpirun its own temporary folder inside
// `scratch`: Open MPI 4.1 keeps its session directory (ompi.<host>.<uid>) and PMIx's files under
// $TMPDIR, and fails when another job's or user's copy under /tmp is in the way. TMPDIR moves
// both (PMIX_SYSTEM_TMPDIR follows it); orte_tmpdir_base says it again for the session directory.
// mpirun as the tests start it. Preloading the interposer puts it ahead of the sanitizer runtime in
// sanitizer builds; ASan's link-order check would refuse that, though the runtime is loaded by the
// program all the same.
#define MPIRUN_ENV "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 ASAN_OPTIONS=verify_asan_link_order=0:detect_leaks=0 "
#define MPIRUN MPIRUN_ENV "mpirun --oversubscribe -x ASAN_OPTIONS "

inline std::string private_mpi_env(const ScratchDir& scratch) {
  auto dir = scratch / "mpi-tmp";
  std::filesystem::create_directories(dir);
  return "TMPDIR=" + quoted(dir) + " OMPI_MCA_orte_tmpdir_base=" + quoted(dir) + " ";
}

// A SLURM to submit to: scripts/test.sh starts a private one (as root) and sets SLURM_CONF; CI sets
// SCALELENS_REQUIRE_SLURM, so there the tests that need it cannot skip.
#define SCALELENS_REQUIRE_SLURM()                                                                   \
  if (!std::getenv("SLURM_CONF") || run_command("sinfo -h").exit_code != 0) {                      \
    if (std::getenv("SCALELENS_REQUIRE_SLURM")) FAIL() << "SCALELENS_REQUIRE_SLURM is set but no SLURM answers"; \
    GTEST_SKIP() << "no SLURM here (scripts/test.sh starts a private one as root)";                 \
  }

}  // namespace scalelens::testing
