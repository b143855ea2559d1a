// libscalelens-mpi measured against a program whose communication time is known.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <ctime>
#include <sstream>

#include <unistd.h>

#include <fmt/format.h>

#include "analysis/analyze.hpp"
#include "ingest/ingest.hpp"
#include "support/run_binary.hpp"

using namespace scalelens::testing;

#ifdef SCALELENS_MPI_LIB

namespace {

// Each mpirun gets a private temporary folder (private_mpi_env), so other MPI jobs on the machine
// cannot break these tests.
std::string mpirun(const ScratchDir& scratch, int n, const std::filesystem::path& run_dir, const std::string& program) {
  return private_mpi_env(scratch) + MPIRUN "-n " + std::to_string(n) +
         " -x SCALELENS_RUN_DIR=" + run_dir.string() + " -x LD_PRELOAD=" SCALELENS_MPI_LIB " " + program;
}
}  // namespace

TEST(MpiInterposer, WaitBehindASleepingRankIsMeasuredAsCommunication) {
  ScratchDir dir;
  auto run = dir / "run";
  auto r = run_command(mpirun(dir, 2, run, SCALELENS_MPI_BARRIER_WAIT));
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
  ASSERT_TRUE(s.runs[0].trace().computation_score);
  EXPECT_NEAR(*s.runs[0].trace().computation_score, 0.5, 0.15);
}

// Another job's Open MPI session directory in the shared temporary folder (here a file where the
// folder should be, which makes mpirun fail in orte_init) does not reach the tests' mpiruns.
TEST(MpiInterposer, ForeignSessionDirectoryInTheSharedTmpDoesNotBreakTheTests) {
  ScratchDir shared_tmp, dir;
  char host[256] = {};
  ::gethostname(host, sizeof host - 1);
  shared_tmp.write(std::string("ompi.") + host + "." + std::to_string(::getuid()), "another job's session\n");
  const std::string broken = "TMPDIR=" + quoted(shared_tmp.path()) + " ";
  auto plain = run_command(broken + MPIRUN "-n 1 true");
  EXPECT_NE(plain.exit_code, 0) << "the planted session directory should break a plain mpirun";
  // A program of ours, not /bin/true: in the sanitizer build the preloaded interposer needs the
  // sanitizer runtime that only our own programs link.
  auto r = run_command(broken + mpirun(dir, 1, dir / "run", SCALELENS_MPI_BARRIER_WAIT));
  EXPECT_EQ(r.exit_code, 0) << r.err;
}

TEST(MpiInterposer, WithoutARunFolderItPassesCallsThroughAndWritesNothing) {
  ScratchDir dir;
  ScratchDir mpi_tmp;
  auto r = run_command("cd " + dir.path().string() + " && " + private_mpi_env(mpi_tmp) + MPIRUN
                       "-n 2 -x LD_PRELOAD=" SCALELENS_MPI_LIB " " SCALELENS_MPI_BARRIER_WAIT);
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::is_empty(dir.path()));
}

TEST(MpiTrainExample, LossFallsAndRunFolderFeedsTheReport) {
  ScratchDir dir;
  ScratchDir mpi_tmp;
  auto r = run_command(private_mpi_env(mpi_tmp) + MPIRUN "-n 2 " SCALELENS_BIN
                       " run --study " + dir.path().string() + " --label sgd --mpi-comm -q -- " SCALELENS_MPI_TRAIN
                       " --epochs 4 --samples 4096");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // "epoch E loss L" from rank 0, one line per epoch: every epoch lowers the loss.
  std::vector<double> losses;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    int epoch;
    double loss;
    if (std::sscanf(line.c_str(), "epoch %d loss %lf", &epoch, &loss) == 2) losses.push_back(loss);
  }
  ASSERT_EQ(losses.size(), 4u) << r.out;
  for (std::size_t i = 1; i < losses.size(); ++i) EXPECT_LT(losses[i], losses[i - 1]) << r.out;
  auto s = scalelens::analyze(scalelens::ingest({{dir.path().string()}, {}, 1, {}}), {});
  ASSERT_EQ(s.configurations.size(), 1u);
  EXPECT_EQ(s.configurations[0].world_size, 2);
  EXPECT_TRUE(s.configurations[0].throughput_samples_per_s);  // samples logged through the C++ API
  EXPECT_TRUE(s.configurations[0].computation_score);         // comm/<rank>.csv from the interposer
  // CPU-only ranks are counted as ranks, not GPUs, in the table's header.
  EXPECT_EQ(s.world_size_unit, "ranks");
  auto report = run_scalelens("report " + quoted(dir.path()) + " -o " + quoted(dir.path() / "report"));
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_EQ(report.out.rfind("label  ranks  nodes", 0), 0u) << report.out;
}

// Inside `scalelens run` the interposer stamps comm/<rank>.csv on the run's clock (SCALELENS_CLOCK:
// its start plus the monotonic time elapsed), as the C++ API stamps epochs and steps: here a run
// that began in 2001 by the wall clock, one second of monotonic time ago. It stamped CLOCK_REALTIME,
// so an NTP step during the run entered its lines, and they disagreed with the run's other times.
TEST(MpiInterposer, StampsOnTheRunsClockInsideScalelensRun) {
  ScratchDir dir;
  constexpr long long kS = 1000000000LL, kStart2001 = 978303600LL * kS;
  timespec now{};
  ::clock_gettime(CLOCK_MONOTONIC, &now);
  const long long monotonic = now.tv_sec * kS + now.tv_nsec;
  auto r = run_command(mpirun(dir, 2, dir / "run",
                              fmt::format("-x SCALELENS_CLOCK={},{} {}", kStart2001, monotonic - kS, SCALELENS_MPI_BARRIER_WAIT)));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  for (const char* rank : {"0", "1"}) {
    std::istringstream lines(slurp(dir / "run/comm" / (std::string(rank) + ".csv")));
    std::string line;
    std::getline(lines, line);  // header
    int steps = 0;
    while (std::getline(lines, line)) {
      long long step = 0, start = 0, end = 0;
      ASSERT_EQ(std::sscanf(line.c_str(), "%*d,%lld,%lld,%lld,", &step, &start, &end), 3) << line;
      EXPECT_GE(start - kStart2001, kS) << "rank " << rank << ": " << line;
      EXPECT_LT(end - kStart2001, 60 * kS) << "rank " << rank << ": " << line;
      EXPECT_LE(start, end) << line;
      ++steps;
    }
    EXPECT_EQ(steps, 3) << "rank " << rank;
  }
}

#endif
