// `mpirun -n K scalelens trace|report` (docs/parallel.md): the processes share the files and the
// first writes exactly what one process writes, byte for byte, on the shared real data.
#include <gtest/gtest.h>

#include <fstream>
#include <regex>
#include <set>
#include <thread>
#include <sstream>

#include "support/gpu_study_writer.hpp"
#include "support/kineto_writer.hpp"
#include "support/run_binary.hpp"

using namespace scalelens::testing;
namespace fs = std::filesystem;

#ifdef SCALELENS_SHARED_FOR_PROBE

namespace {

std::string mpirun(const ScratchDir& scratch, int n) {
  return private_mpi_env(scratch) + MPIRUN "-n " + std::to_string(n) + " ";
}

// A file's bytes; PDF's creation date (gnuplot's cairo writes the wall clock) aside.
std::string contents_without_timestamps(const fs::path& p) {
  std::string bytes = slurp(p);
  if (p.extension() == ".pdf") bytes = std::regex_replace(bytes, std::regex(R"(/CreationDate \(D:[0-9Z+'-]*\))"), "");
  return bytes;
}

// Every file under `a` and `b` (same names, same bytes); what differs, one line each.
std::vector<std::string> tree_differences(const fs::path& a, const fs::path& b) {
  std::vector<std::string> diffs;
  std::set<std::string> names;
  for (const auto& root : {a, b})
    for (const auto& e : fs::recursive_directory_iterator(root))
      if (e.is_regular_file()) names.insert(fs::relative(e.path(), root).string());
  for (const auto& name : names) {
    if (!fs::exists(a / name) || !fs::exists(b / name)) diffs.push_back(name + ": only in one");
    else if (contents_without_timestamps(a / name) != contents_without_timestamps(b / name)) diffs.push_back(name + ": differs");
  }
  return diffs;
}


}  // namespace

TEST(ParallelTrace, TwoProcessesPrintWhatOnePrintsOnTheSharedTraces) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir mpi;
  // Every shared trace (and the reference JSONs beside them, which are refused by name): the
  // files, their errors and warnings, the cross-rank figures.
  const std::string in = quoted(data / "kineto") + " --no-cache";
  for (const std::string format : {"json", "table"}) {
    auto one = run_scalelens("trace " + in + " --format " + format);
    ASSERT_EQ(one.exit_code, 0) << one.err;
    ASSERT_GT(one.out.size(), 1000u);
    for (int k : {1, 2, 3}) {
      auto many = run_command(mpirun(mpi, k) + SCALELENS_BIN " trace " + in + " --format " + format);
      EXPECT_EQ(many.exit_code, 0) << many.err;
      EXPECT_EQ(many.out, one.out) << format << " from " << k << " processes";
      EXPECT_EQ(many.err, one.err) << format << " from " << k << " processes";
    }
  }
}

// A cache folder that cannot be made: every process finds it so, and the job says it once.
TEST(ParallelTrace, ACacheThatCannotBeWrittenIsSaidOnce) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir dir, mpi;
  dir.write("not-a-folder", "a file where the cache folder would go\n");
  const std::string in = quoted(data / "kineto/dlrm-8rank-v100") + " --cache-dir " + quoted(dir / "not-a-folder/cache");
  auto one = run_scalelens("trace " + in);
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_NE(one.err.find("cache-not-written"), std::string::npos) << one.err;
  auto two = run_command(mpirun(mpi, 2) + SCALELENS_BIN " trace " + in);
  EXPECT_EQ(two.exit_code, 0) << two.err;
  EXPECT_EQ(two.out, one.out);
  EXPECT_EQ(two.err, one.err);
}

TEST(ParallelReport, TwoProcessesWriteWhatOneWritesOnTheSharedData) {
  SCALELENS_REQUIRE_REALDATA(data);
  ScratchDir dir, mpi;
  // Traces alone (runs formed from them), MLPerf logs, the bundled toy study (scalelens run
  // folders with host samples, steps, epochs) and generated GPU logs (reduced where they are read,
  // on whichever process reads them): every reader and the merge of their outputs.
  std::mt19937_64 rng(3);
  GpuStudyShape shape;
  shape.runs = 6, shape.gpus = 4, shape.nvsmi_too = true;
  const ScratchDir gpu_study;
  write_gpu_study(gpu_study, rng, shape);
  // And GPU logs alone in their folders: summarized where they are read (GpuDigest), then gathered.
  GpuStudyShape alone = shape;
  alone.nvsmi_too = false;
  const ScratchDir gpu_logs_alone;
  write_gpu_study(gpu_logs_alone, rng, alone);
  for (int r = 0; r < alone.runs; ++r) {  // run ids of their own, not copies of the study's above
    const fs::path manifest = gpu_logs_alone.path() / fmt::format("run-{}/scalelens.json", r);
    std::string text = slurp(manifest);
    const std::string id = "\"run_id\": \"r";
    text.replace(text.find(id), id.size(), "\"run_id\": \"alone-r");
    gpu_logs_alone.write(fmt::format("run-{}/scalelens.json", r), text);
  }
  const std::string in = quoted(data / "kineto") + " " + quoted(data / "mlperf-hpc-v1.0-deepcam") + " " +
                         quoted(fs::path(SCALELENS_SOURCE_DIR) / "examples/toy-study") + " " + quoted(gpu_study.path()) + " " +
                         quoted(gpu_logs_alone.path()) + " --no-cache";
  auto report = [&](const std::string& where, const std::string& launch, const std::string& more) {
    fs::create_directories(dir / where);
    return run_command("cd " + quoted(dir / where) + " && " + launch + SCALELENS_BIN " report " + in + " -o out " + more);
  };
  auto one = report("one", "", "");
  ASSERT_EQ(one.exit_code, 0) << one.err;
  ASSERT_TRUE(fs::exists(dir / "one/out/summary.json"));
  auto one_json = report("one-json", "", "--format json");
  ASSERT_EQ(one_json.exit_code, 0) << one_json.err;
  for (int k : {2, 3}) {
    const std::string name = "many-" + std::to_string(k);
    auto many = report(name, mpirun(mpi, k), "");
    ASSERT_EQ(many.exit_code, 0) << many.err;
    EXPECT_EQ(many.out, one.out) << k << " processes";
    EXPECT_EQ(many.err, one.err) << k << " processes";
    auto diffs = tree_differences(dir / "one/out", dir / name / "out");
    EXPECT_TRUE(diffs.empty()) << k << " processes: " << ::testing::PrintToString(diffs);
    auto many_json = report(name + "-json", mpirun(mpi, k), "--format json");
    EXPECT_EQ(many_json.out, one_json.out) << k << " processes";
    EXPECT_EQ(many_json.err, one_json.err) << k << " processes";
  }
}

// Not enough to run as one process: with nothing to read, K processes say so once, as one would.
TEST(ParallelReport, NoUsableDataIsSaidOnceWithTheSameExitCode) {
  ScratchDir dir, mpi;
  dir.write("empty/notes.txt", "nothing here\n");
  auto one = run_scalelens("report " + quoted(dir / "empty") + " -o " + quoted(dir / "out1"));
  auto two = run_command(mpirun(mpi, 2) + SCALELENS_BIN " report " + quoted(dir / "empty") + " -o " + quoted(dir / "out2"));
  EXPECT_EQ(one.exit_code, 2);
  EXPECT_EQ(two.exit_code, 2) << two.err;
  // Ours once, as one process says it; mpirun adds its own note of the exit code after it.
  EXPECT_EQ(two.err.substr(0, one.err.size()), one.err);
  EXPECT_EQ(two.err.find("no usable data"), two.err.rfind("no usable data"));
}

// A folder on one node's disk alone: the other processes cannot read their share there. One
// process would have read every file; reading some gives other figures, so the job ends, naming
// the process, the file and its host, rather than going on with an error line and exit 0.
TEST(ParallelReport, AFileOnlyTheFirstProcessSeesEndsTheJobNamingProcessFileAndHost) {
  ScratchDir dir, mpi;
  // Rank 0 works in first/, rank 1 in second/, where the same relative paths hold the manifests
  // alone (the study as rank 0 lists it, from a disk the other node lacks) or no trace at all.
  fs::create_directories(dir / "first");
  fs::copy(fs::path(SCALELENS_SOURCE_DIR) / "examples/toy-study", dir / "first/study", fs::copy_options::recursive);
  for (const auto& e : fs::recursive_directory_iterator(dir / "first/study"))
    if (e.path().filename() == "scalelens.json") {
      fs::create_directories(dir / "second/study" / fs::relative(e.path().parent_path(), dir / "first/study"));
      fs::copy_file(e.path(), dir / "second/study" / fs::relative(e.path(), dir / "first/study"));
    }
  for (int r = 0; r < 4; ++r) {
    KinetoTraceSpec spec;
    spec.rank = r, spec.world_size = 4, spec.step_us = {1000, 1000, 1000};
    dir.write(fmt::format("first/traces/rank{}.pt.trace.json", r), kineto_trace(spec));
  }
  fs::create_directories(dir / "second/traces");
  auto split = [&](const std::string& args) {
    const std::string launch = private_mpi_env(mpi) + MPIRUN;
    return run_command("timeout 120 env " + launch + "-n 1 -wdir " + quoted(dir / "first") + " " SCALELENS_BIN " " + args +
                       " : -n 1 -wdir " + quoted(dir / "second") + " " SCALELENS_BIN " " + args);
  };
  for (const std::string args : {"report study -q -o out --no-cache", "trace traces --no-cache"}) {
    auto r = split(args);
    EXPECT_EQ(r.exit_code, 6) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("scalelens: process 1 of 2 failed: "), std::string::npos) << args << "\n" << r.err;
    EXPECT_NE(r.err.find(": No such file or directory on host "), std::string::npos) << args << "\n" << r.err;
    EXPECT_NE(r.err.find("though process 0 listed it"), std::string::npos) << args << "\n" << r.err;
    EXPECT_EQ(r.out.find("GPUs"), std::string::npos) << args << ": no figures from part of the inputs\n" << r.out;
  }
}

TEST(ParallelLoop, ResultsCrossProcessesInPartsAndArriveWhole) {
  ScratchDir mpi;
  for (int k : {2, 3}) {
    auto r = run_command(mpirun(mpi, k) + SCALELENS_SHARED_FOR_PROBE " gather");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "gathered 40 items from " + std::to_string(k) + " processes\n");
  }
}

TEST(ParallelLoop, AFailingProcessEndsTheJobNamingTheFile) {
  ScratchDir mpi;
  auto r = run_command("timeout 60 env " + mpirun(mpi, 2) + SCALELENS_SHARED_FOR_PROBE " fail");
  EXPECT_EQ(r.exit_code, 6) << "the job's exit code is the failing process's (124: the other was left waiting)";
  EXPECT_NE(r.err.find("failed: trace-2.json: not a Kineto trace after all"), std::string::npos) << r.err;
  EXPECT_EQ(r.out.find("gathered"), std::string::npos);
}

// mpirun binds each process to its own core; once the others have left, rank 0 (which analyses
// and writes, and starts gnuplot) may run on all of them, not on its one core alone.
TEST(ParallelLoop, TheFirstProcessTakesItsNodesCoresWhenTheOthersLeave) {
  if (std::thread::hardware_concurrency() < 2) GTEST_SKIP() << "one CPU: two processes cannot have cores of their own";
  ScratchDir mpi;
  // Bound explicitly: whether mpirun binds by default depends on its version, the count and --oversubscribe.
  auto r = run_command(mpirun(mpi, 2) + "--bind-to core " SCALELENS_SHARED_FOR_PROBE " cores");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  std::set<std::string> before, alone;
  std::istringstream lines(r.out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream words(line);
    std::string who, rank, word;
    words >> who;
    if (who == "rank") words >> rank;
    words >> word;  // "cpus"
    for (std::string cpu; words >> cpu;) (who == "alone" ? alone : before).insert(cpu);
  }
  ASSERT_EQ(before.size(), 2u) << "each process bound to its own core: " << r.out;
  EXPECT_EQ(alone, before) << r.out;
}

TEST(ParallelSrun, TasksWithoutMpisInterfaceAreToldHowAndTasksWithPmixShareTheWork) {
  SCALELENS_REQUIRE_SLURM();
  ScratchDir dir;
  const std::string in = quoted(fs::path(SCALELENS_SOURCE_DIR) / "examples/toy-study");
  auto plain = run_command("timeout 120 srun -n 2 " SCALELENS_BIN " report " + in + " -o " + quoted(dir / "out"));
  EXPECT_EQ(plain.exit_code, 1) << plain.err;
  EXPECT_NE(plain.err.find("srun --mpi=pmix"), std::string::npos) << plain.err;
  EXPECT_EQ(plain.err.find("srun --mpi=pmix"), plain.err.rfind("srun --mpi=pmix")) << "said once, not by every task";
  EXPECT_FALSE(fs::exists(dir / "out"));

  auto one = run_scalelens("report " + in + " --format json");
  auto pmix = run_command("timeout 120 env " MPIRUN_ENV "srun --mpi=pmix -n 2 " SCALELENS_BIN " report " + in + " --format json");
  EXPECT_EQ(pmix.exit_code, 0) << pmix.err;
  EXPECT_EQ(pmix.out, one.out);
}

#endif  // SCALELENS_SHARED_FOR_PROBE
