// libscalelens-mpi measured against a program whose communication time is known.
#include <gtest/gtest.h>

#include <algorithm>

#include "analysis/analyze.hpp"
#include "ingest/ingest.hpp"
#include "support/run_binary.hpp"

using namespace scalelens::testing;

#ifdef SCALELENS_MPI_LIB

namespace {
std::string mpirun(int n, const std::filesystem::path& run_dir, const std::string& program) {
  return "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 mpirun --oversubscribe -n " + std::to_string(n) +
         " -x SCALELENS_RUN_DIR=" + run_dir.string() + " -x LD_PRELOAD=" SCALELENS_MPI_LIB " " + program;
}
}  // namespace

TEST(MpiInterposer, WaitBehindASleepingRankIsMeasuredAsCommunication) {
  ScratchDir dir;
  auto run = dir / "run";
  auto r = run_command(mpirun(2, run, SCALELENS_MPI_BARRIER_WAIT));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  dir.write("run/scalelens.json", R"({"label": "probe", "world_size": 2})");
  auto study = scalelens::ingest({{run.string()}, {}, 1, {}});
  ASSERT_EQ(study.runs.size(), 1u);
  const auto& parts = study.runs[0].breakdown;
  ASSERT_EQ(parts.size(), 2u);
  auto rank = [&](int k) { return *std::find_if(parts.begin(), parts.end(), [&](auto& b) { return b.rank == k; }); };
  // 3 steps; in each, rank 0 waits ~200 ms in the barrier for the sleeping rank 1.
  EXPECT_EQ(rank(0).steps, 3);
  EXPECT_TRUE(rank(0).from_mpi);
  EXPECT_GT(rank(0).comm_us, 3 * 180e3);
  EXPECT_LT(rank(0).comm_us, 3 * 400e3);
  EXPECT_LT(rank(1).comm_us, 3 * 100e3);   // rank 1 arrives last: hardly waits
  EXPECT_GT(rank(1).comp_us, 3 * 190e3);   // its sleep is time outside MPI
  // Rank 0's step is almost all communication; rank 1's almost all computation.
  auto s = scalelens::analyze(study, {});
  ASSERT_TRUE(s.runs[0].computation_score);
  EXPECT_NEAR(*s.runs[0].computation_score, 0.5, 0.15);
}

TEST(MpiInterposer, WithoutARunFolderItPassesCallsThroughAndWritesNothing) {
  ScratchDir dir;
  auto r = run_command("cd " + dir.path().string() + " && OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 "
                       "mpirun --oversubscribe -n 2 -x LD_PRELOAD=" SCALELENS_MPI_LIB " " SCALELENS_MPI_BARRIER_WAIT);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

#endif
