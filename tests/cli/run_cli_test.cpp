// `scalelens run` with real processes: exit statuses, signals, SIGKILL of the wrapper, sampler
// election, concurrent wrappers, launcher environments (SLURM, torchrun, Open MPI) and mpirun.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <set>
#include <sstream>
#include <thread>

#include <fmt/format.h>
#include <simdjson.h>

#include "analysis/analyze.hpp"
#include "common/subprocess.hpp"
#include "common/text.hpp"
#include "ingest/ingest.hpp"
#include "support/run_binary.hpp"
#include "support/spawn_binary.hpp"

extern char** environ;

using namespace scalelens;
using namespace scalelens::testing;
using namespace std::chrono_literals;

namespace {

const std::string kRecording = std::string(SCALELENS_TEST_DATA) + "/replay/a100x2-gpu.csv";

std::size_t line_count(const std::filesystem::path& p, std::string_view containing = {}) {
  return count_lines(slurp(p), containing);
}

std::vector<std::filesystem::path> run_folders(const std::filesystem::path& study) {
  std::vector<std::filesystem::path> out;
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator(study, ec))
    if (e.is_directory()) out.push_back(e.path());
  return out;
}

simdjson::dom::element parse(simdjson::dom::parser& parser, const std::filesystem::path& file, std::string& keep) {
  keep = slurp(file);
  simdjson::dom::element doc;
  EXPECT_EQ(parser.parse(keep).get(doc), simdjson::SUCCESS) << file << ": " << keep;
  return doc;
}

}  // namespace

TEST(RunCli, HelpShowsTheExamples) {
  auto r = run_scalelens("run --help");
  EXPECT_EQ(r.exit_code, 0);
  EXPECT_NE(r.out.find("srun --ntasks-per-node=1 scalelens run"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("mpirun -n 8 scalelens run --study runs/ --label mpi -- ./solver"), std::string::npos);
}

TEST(RunCli, ExitStatusIsTheChildsAndTheRunFolderIsComplete) {
  ScratchDir d;
  auto r = run_scalelens("run -q --study " + quoted(d / "runs") + " --label t --interval 0.01 -- sh -c 'exit 3'");
  EXPECT_EQ(r.exit_code, 3) << r.err;
  auto folders = run_folders(d / "runs");
  ASSERT_EQ(folders.size(), 1u);
  simdjson::dom::parser parser;
  std::string keep;
  auto m = parse(parser, folders[0] / "scalelens.json", keep);
  EXPECT_EQ(std::string_view(m["schema"]), "scalelens.run/1");
  EXPECT_EQ(int64_t(m["exit_status"]), 3);
  EXPECT_EQ(std::string_view(m["status"]), "complete");
  EXPECT_GE(int64_t(m["end_ns"]), int64_t(m["start_ns"]));
  std::string keep2;
  simdjson::dom::parser p2;
  auto rank = parse(p2, folders[0] / "ranks/0.json", keep2);
  EXPECT_EQ(std::string_view(rank["schema"]), "scalelens.rank/1");
  EXPECT_EQ(int64_t(rank["exit_status"]), 3);
  EXPECT_TRUE(std::filesystem::exists(folders[0] / "traces"));
}

TEST(RunCli, ChildKilledBySignalGives128PlusSignal) {
  ScratchDir d;
  auto r = run_scalelens("run -q --study " + quoted(d.path()) + " -- sh -c 'kill -TERM $$'");
  EXPECT_EQ(r.exit_code, 128 + SIGTERM) << r.err;
  auto r2 = run_scalelens("run -q --study " + quoted(d.path()) + " -- /nonexistent/solver");
  EXPECT_EQ(r2.exit_code, 127);
  EXPECT_NE(r2.err.find("/nonexistent/solver"), std::string::npos) << r2.err;
}

TEST(RunCli, SignalsSentToTheWrapperReachTheChild) {
  for (int sig : {SIGTERM, SIGUSR1}) {
    ScratchDir d;
    auto marker = d / "got";
    auto ready = d / "ready";
    std::string script = "trap 'echo $0 > " + marker.string() + "; exit 5' TERM USR1; touch " + ready.string() +
                         "; while :; do sleep 0.02; done";
    pid_t w = spawn_scalelens({"run", "-q", "--study", (d / "runs").string(), "--interval", "0.01", "--", "sh", "-c", script});
    ASSERT_TRUE(wait_for([&] { return std::filesystem::exists(ready); })) << "child never started";
    ::kill(w, sig);
    EXPECT_EQ(wait_status(w), 5) << "the child's own exit status after its trap, signal " << sig;
    EXPECT_TRUE(std::filesystem::exists(marker)) << "signal " << sig << " was not forwarded";
    auto folders = run_folders(d / "runs");
    ASSERT_EQ(folders.size(), 1u);
    EXPECT_NE(slurp(folders[0] / "scalelens.json").find("\"exit_status\":5"), std::string::npos);
  }
}

TEST(RunCli, SigkillOfTheWrapperLeavesEveryCsvReadableAndStopsTheChild) {
  ScratchDir d;
  auto pidfile = d / "child.pid";
  pid_t w = spawn_scalelens({"run", "-q", "--study", (d / "runs").string(), "--run-id", "k", "--interval", "0.005",
                             "--flush", "0", "--gpu-source", "replay:" + kRecording, "--host", "n01", "--", "sh", "-c",
                             "echo $$ > " + pidfile.string() + "; exec sleep 30"});
  auto node = d / "runs/k/nodes/n01";
  ASSERT_TRUE(wait_for([&] { return line_count(node / "gpu.csv") >= 6 && line_count(node / "host.csv") >= 6; }));
  ASSERT_TRUE(wait_for([&] { return !slurp(pidfile).empty(); }));
  ::kill(w, SIGKILL);
  EXPECT_EQ(wait_status(w), 128 + SIGKILL);
  // The child learns of its parent's death (PR_SET_PDEATHSIG) and does not run on alone.
  pid_t child = static_cast<pid_t>(std::stol(slurp(pidfile)));
  EXPECT_TRUE(wait_for([&] {
    auto stat = slurp("/proc/" + std::to_string(child) + "/stat");
    return stat.empty() || stat.find(") Z ") != std::string::npos;
  })) << "child " << child << " still runs";
  for (const char* f : {"gpu.csv", "host.csv"}) {
    auto text = slurp(node / f);
    ASSERT_FALSE(text.empty());
    EXPECT_EQ(text.back(), '\n') << f << " ends inside a line";
  }
  IngestOptions in;
  in.inputs = {(d / "runs").string()};
  Study s = ingest(in);
  ASSERT_EQ(s.runs.size(), 1u);
  EXPECT_EQ(s.runs[0].gpus.size(), 2u);
  EXPECT_FALSE(s.runs[0].end_ns) << "the manifest of an unfinished run has no end";
  for (const auto& diag : s.diagnostics)
    EXPECT_NE(diag.code, "bad-lines") << diag.message;
}

TEST(RunCli, TwoWrappersOnOneNodeElectOneSampler) {
  ScratchDir d;
  std::vector<pid_t> pids;
  for (int r = 0; r < 2; ++r)
    pids.push_back(spawn_scalelens({"run", "-q", "--study", (d / "runs").string(), "--label", "pair", "--interval", "0.002",
                                    "--gpu-source", "replay:" + kRecording, "--host", "n01", "--", "sleep", "2"},
                                   {"OMPI_COMM_WORLD_RANK=" + std::to_string(r), "OMPI_COMM_WORLD_SIZE=2",
                                    "OMPI_COMM_WORLD_LOCAL_RANK=" + std::to_string(r), "PMIX_NAMESPACE=4711"}));
  // The wrappers of one node run side by side for the job's length (2 s: long enough that the
  // second starts before the first ends even on a loaded CI machine; with 0.3 s, an ASan build
  // under load started the second after the first had released the node's lock, and both sampled).
  for (auto p : pids) EXPECT_EQ(wait_status(p), 0);
  auto run = d / "runs/pair-ompi-4711";
  // The recording has 8 readings of GPU 0: one sampler writes them once, two would write 16.
  EXPECT_EQ(line_count(run / "nodes/n01/gpu.csv", ",0,GPU-6f2c5e2a"), 8u);
  EXPECT_TRUE(std::filesystem::exists(run / "ranks/0.json"));
  EXPECT_TRUE(std::filesystem::exists(run / "ranks/1.json"));
}

TEST(RunCli, FourConcurrentSlurmWrappersOnTwoNodesWriteOneRun) {
  ScratchDir d;
  std::vector<pid_t> pids;
  for (int r = 0; r < 4; ++r) {
    std::string host = r < 2 ? "gpu01" : "gpu02";
    std::string line = std::to_string(r) + ",0,1000000000,2000000000,250";
    pids.push_back(spawn_scalelens(
        {"run", "-q", "--study", (d / "runs").string(), "--label", "ddp", "--interval", "0.01", "--samples-per-epoch",
         "1000", "--", "sh", "-c", "printf '%s\\n' \"$SCALELENS_RANK,0,1000000000,2000000000,250\" >> \"$SCALELENS_RUN_DIR/epochs.csv\""},
        {"SLURM_JOB_ID=8812", "SLURM_STEP_ID=0", "SLURM_PROCID=" + std::to_string(r), "SLURM_LOCALID=" + std::to_string(r % 2),
         "SLURM_NTASKS=4", "SLURM_NNODES=2", "SLURM_JOB_NODELIST=gpu[01-02]", "SCALELENS_HOST=" + host}));
  }
  for (auto p : pids) EXPECT_EQ(wait_status(p), 0);
  ASSERT_EQ(run_folders(d / "runs").size(), 1u);
  auto run = d / "runs/ddp-slurm-8812.0";
  ASSERT_TRUE(std::filesystem::exists(run / "scalelens.json"));
  EXPECT_EQ(line_count(run / "epochs.csv"), 5u) << slurp(run / "epochs.csv");
  IngestOptions in;
  in.inputs = {(d / "runs").string()};
  Study s = ingest(in);
  ASSERT_EQ(s.runs.size(), 1u);
  const auto& r = s.runs[0];
  EXPECT_EQ(r.ranks.size(), 4u);
  EXPECT_EQ(r.world_size, 4);
  EXPECT_EQ(r.nodes, 2);
  EXPECT_EQ(r.hosts, (std::vector<std::string>{"gpu01", "gpu02"}));
  EXPECT_EQ(r.epochs.size(), 4u);
  EXPECT_EQ(r.detected_from.at("world_size"), "SLURM_NTASKS");
  EXPECT_EQ(r.detected_from.at("run_id"), "SLURM_JOB_ID+SLURM_STEP_ID");
  EXPECT_EQ(r.host_series.size(), 2u) << "one sampler per node";
  EXPECT_NE(slurp(run / "scalelens.json").find("\"job_id\":\"8812\""), std::string::npos);
}

TEST(RunCli, TorchrunEnvironmentAndAWrappedTorchrunCommand) {
  ScratchDir d;
  // A stand-in torchrun on PATH: the wrapper reads the launcher's arguments, not its behaviour.
  d.write("bin/torchrun", "#!/bin/sh\nexit 0\n");
  std::filesystem::permissions(d / "bin/torchrun", std::filesystem::perms::owner_all);
  pid_t w = spawn_scalelens({"run", "-q", "--study", (d / "runs").string(), "--label", "ddp", "--", "torchrun",
                             "--nproc-per-node", "4", "train.py"},
                            {"PATH=" + (d / "bin").string() + ":/usr/bin:/bin", "TORCHELASTIC_RUN_ID=r42", "RANK=0",
                             "LOCAL_RANK=0", "WORLD_SIZE=1"});
  ASSERT_EQ(wait_status(w), 0);
  auto manifest = slurp(d / "runs/ddp-torchrun-r42/scalelens.json");
  EXPECT_NE(manifest.find("\"world_size\":4"), std::string::npos) << manifest;
  EXPECT_NE(manifest.find("\"kind\":\"torchrun\""), std::string::npos) << manifest;
  EXPECT_NE(manifest.find("\"world_size\":\"command: torchrun --nproc-per-node\""), std::string::npos) << manifest;
}

TEST(RunCli, UnwritableStudyIsAClearErrorBeforeTheCommandRuns) {
  ScratchDir d;
  d.write("not-a-folder", "x");
  auto marker = d / "ran";
  auto r = run_scalelens("run --study " + quoted(d / "not-a-folder") + " -- touch " + quoted(marker));
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.err.find("not-a-folder"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("cannot create"), std::string::npos) << r.err;
  EXPECT_FALSE(std::filesystem::exists(marker));
  // A study folder the user may not write in is named, not the hidden folder the claim makes in it.
  std::filesystem::create_directories(d / "read-only");
  std::filesystem::permissions(d / "read-only", std::filesystem::perms::owner_read | std::filesystem::perms::owner_exec |
                                                    std::filesystem::perms::others_read | std::filesystem::perms::others_exec);
  const std::string as_user = ::geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "";  // root writes anywhere
  auto ro = run_command(as_user + SCALELENS_BIN " run --study " + quoted(d / "read-only") + " --gpu-source none --no-host -- true");
  EXPECT_EQ(ro.exit_code, 1) << ro.err;
  EXPECT_NE(ro.err.find("error: " + (d / "read-only").string() + ": cannot create a run folder in it"), std::string::npos) << ro.err;
  EXPECT_EQ(ro.err.find(".claim-"), std::string::npos) << ro.err;
}

TEST(RunCli, NoGpuLibraryStillCompletesAndTheManifestSaysWhy) {
  if (std::filesystem::exists("/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1")) GTEST_SKIP() << "NVML installed";
  ScratchDir d;
  auto r = run_scalelens("run -q --study " + quoted(d.path()) + " --run-id x -- true");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto manifest = slurp(d / "x/scalelens.json");
  EXPECT_NE(manifest.find("\"missing\":{"), std::string::npos);
  EXPECT_NE(manifest.find("no NVML library found (libnvidia-ml.so.1)"), std::string::npos) << manifest;
}

// `--world-size 2` around a command that starts its workers itself (one wrapper, one record): the
// report said "1 of 2 ranks left a rank record; the others may have failed to start", for every run
// a `scalelens sweep --no-mpirun` makes. The record is the wrapper's, as around a launcher.
TEST(RunCli, AWorldSizeBeyondTheWrappersCountsTheirRecordsNotRanks) {
  ScratchDir d;
  for (int world : {1, 2}) {
    auto r = run_scalelens(fmt::format("run -q --study {} --label w --run-id w-{} --world-size {} --gpu-source none --no-host -- true",
                                       quoted(d / "runs"), world, world));
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_EQ(slurp(d / "runs/w-1/scalelens.json").find("\"launcher\""), std::string::npos);
  EXPECT_NE(slurp(d / "runs/w-2/scalelens.json").find("\"launcher\":\"true\""), std::string::npos);
  auto report = run_scalelens("report " + quoted(d / "runs") + " -q --format json -o " + quoted(d / "out"));
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_EQ(report.out.find("missing-ranks"), std::string::npos) << report.out;
  EXPECT_NE(report.out.find("\"world_size\":2"), std::string::npos) << report.out;
}

TEST(RunCli, MpirunWithTwoRanksYieldsOneRunThatReportReads) {
  if (::system("command -v mpirun >/dev/null 2>&1") != 0) GTEST_SKIP() << "no mpirun (scripts/setup-debian.sh installs Open MPI)";
  ScratchDir d;
  const std::string python = std::string(SCALELENS_SOURCE_DIR) + "/python";
  // A real program: 3 epochs logged through python/scalelens_log.py.
  std::string program =
      "import sys, time; sys.path.insert(0, '" + python + "'); import scalelens_log as sl\n"
      "for e in range(3):\n"
      "    with sl.epoch(e, samples=100):\n"
      "        time.sleep(0.05)\n";
  d.write("train.py", program);
  auto r = run_scalelens("run --study " + quoted(d / "demo-runs") + " --label demo --interval 0.02 -- python3 " +
                             quoted(d / "train.py"),
                         "cd " + quoted(d.path()) + " && " + private_mpi_env(d) + "OMPI_MCA_plm_rsh_agent= mpirun --allow-run-as-root --oversubscribe -n 2");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto folders = run_folders(d / "demo-runs");
  ASSERT_EQ(folders.size(), 1u) << "both ranks agree on one folder";
  EXPECT_TRUE(std::filesystem::exists(folders[0] / "ranks/0.json"));
  EXPECT_TRUE(std::filesystem::exists(folders[0] / "ranks/1.json"));
  EXPECT_EQ(line_count(folders[0] / "epochs.csv"), 7u) << slurp(folders[0] / "epochs.csv");
  auto manifest = slurp(folders[0] / "scalelens.json");
  EXPECT_NE(manifest.find("\"world_size\":2"), std::string::npos) << manifest;
  EXPECT_NE(manifest.find("\"kind\":\"openmpi\""), std::string::npos) << manifest;
  auto report = run_scalelens("report " + quoted(d / "demo-runs") + " --format json -q");
  ASSERT_EQ(report.exit_code, 0) << report.err;
  EXPECT_NE(report.out.find("\"label\":\"demo\""), std::string::npos) << report.out.substr(0, 2000);
}

// SIGTERM, SIGINT and SIGHUP sent to the wrapper reach every process of the job, not only the
// shell it started: its two background sleeps go too (started by a non-interactive shell, they
// ignore SIGINT: the SIGKILL after --kill-after ends them), and the wrapper exits as the shell did.
TEST(RunCli, SignalsReachTheJobsGrandchildrenAndNothingIsLeft) {
  for (int sig : {SIGTERM, SIGINT, SIGHUP, SIGQUIT}) {
    ScratchDir d;
    auto pids = d / "pids";
    auto ready = d / "ready";
    std::string script = "sleep 1000 & echo $! >> " + pids.string() + "; sleep 1000 & echo $! >> " + pids.string() +
                         "; echo $$ >> " + pids.string() + "; touch " + ready.string() + "; wait";
    pid_t w = spawn_scalelens({"run", "-q", "--study", (d / "runs").string(), "--kill-after", "1", "--", "bash", "-c", script});
    ASSERT_TRUE(wait_for([&] { return std::filesystem::exists(ready); })) << "job never started";
    auto started = pids_in(pids);
    ASSERT_EQ(started.size(), 3u);
    ::kill(w, sig);
    // The shell's own status. bash may wait out SIGINT for children that ignore it (then SIGKILL
    // ends it too), or die of it at once, depending on where in `wait` it was.
    const int status = wait_status(w);
    if (sig == SIGINT || sig == SIGQUIT) EXPECT_TRUE(status == 128 + sig || status == 128 + SIGKILL) << status;
    else EXPECT_EQ(status, 128 + sig) << "signal " << sig;
    for (pid_t p : started) EXPECT_TRUE(process_gone(p)) << "pid " << p << " survived signal " << sig;
  }
}

// A grandchild that ignores SIGTERM is killed --kill-after seconds later, and the wrapper says so.
TEST(RunCli, GrandchildIgnoringSigtermGetsSigkillAfterTheGracePeriod) {
  ScratchDir d;
  auto pids = d / "pids";
  auto ready = d / "ready";
  // The subshell ignores TERM and execs sleep, which keeps the ignored disposition.
  std::string script = "(trap '' TERM; exec sleep 1000) & echo $! >> " + pids.string() + "; echo $$ >> " + pids.string() +
                       "; touch " + ready.string() + "; wait";
  int err_pipe[2];
  ASSERT_EQ(::pipe(err_pipe), 0);
  pid_t w = ::fork();
  if (w == 0) {
    ::dup2(err_pipe[1], 2);
    ::close(err_pipe[0]);
    ::execl(SCALELENS_BIN, "scalelens", "run", "-q", "--study", (d / "runs").c_str(), "--kill-after", "0.5", "--", "bash", "-c",
            script.c_str(), static_cast<char*>(nullptr));
    ::_exit(127);
  }
  ::close(err_pipe[1]);
  ASSERT_TRUE(wait_for([&] { return std::filesystem::exists(ready) && pids_in(pids).size() == 2; })) << "job never started";
  auto started = pids_in(pids);
  std::this_thread::sleep_for(100ms);  // the subshell's trap is set before it execs sleep
  auto t0 = std::chrono::steady_clock::now();
  ::kill(w, SIGTERM);
  EXPECT_EQ(wait_status(w), 128 + SIGTERM) << "bash itself died of SIGTERM";
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_GE(took, 0.4) << "SIGKILL came before the grace period";
  EXPECT_LT(took, 4.0);
  for (pid_t p : started) EXPECT_TRUE(process_gone(p)) << "pid " << p << " survived";
  std::string err;
  char buf[4096];
  for (ssize_t n; (n = ::read(err_pipe[0], buf, sizeof buf)) > 0;) err.append(buf, static_cast<std::size_t>(n));
  ::close(err_pipe[0]);
  EXPECT_NE(err.find("sent SIGKILL"), std::string::npos) << err;
  EXPECT_NE(err.find("0.5 s after SIGTERM"), std::string::npos) << err;
}

// A command that ends but leaves a background process behind: the wrapper stops it and says so.
TEST(RunCli, ProcessesLeftRunningWhenTheCommandEndsAreStopped) {
  ScratchDir d;
  auto pidfile = d / "pid";
  auto r = run_scalelens("run -q --study " + quoted(d / "runs") + " --kill-after 2 -- sh -c 'sleep 1000 & echo $! > " +
                         pidfile.string() + "; exit 4'");
  EXPECT_EQ(r.exit_code, 4) << "the command's own status";
  EXPECT_NE(r.err.find("still running after it ended"), std::string::npos) << r.err;
  auto left = pids_in(pidfile);
  ASSERT_EQ(left.size(), 1u);
  EXPECT_TRUE(process_gone(left[0]));
}

// Processes that left the command's group (setsid, a daemon) and outlive it are handed to the
// wrapper, a subreaper: it names them and stops them, SIGKILL for one that ignores SIGTERM.
TEST(RunCli, ProcessesThatLeftTheGroupAreNamedAndStopped) {
  ScratchDir d;
  auto pidfile = d / "pids";
  // (Their output goes elsewhere: left running, they would hold the test's pipes open.)
  const std::string script = "(setsid sleep 304 >/dev/null 2>&1 & echo $! >> " + pidfile.string() +
                             ") ; (setsid sh -c \"trap '' TERM; exec sleep 305\" >/dev/null 2>&1 & echo $! >> " + pidfile.string() +
                             "); sleep 0.2; exit 3";
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_scalelens("run -q --study " + quoted(d / "runs") + " --kill-after 0.5 -- sh -c " + shell_quote(script));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.exit_code, 3) << "the command's own status" << r.err;
  auto left = pids_in(pidfile);
  ASSERT_EQ(left.size(), 2u);
  for (pid_t p : left) {
    EXPECT_TRUE(process_gone(p)) << "pid " << p << " outlived the run";
    EXPECT_NE(r.err.find(fmt::format("pid {} (sleep 30", p)), std::string::npos) << r.err;
  }
  EXPECT_NE(r.err.find("left the command's process group"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("0.5 s after SIGTERM; sent SIGKILL"), std::string::npos) << r.err;
  EXPECT_LT(took, 4.0);
}

// The same --run-id given to two jobs: the second job records into <id>-2 and says so, while the
// wrappers of one SLURM job (same job and step id) still share one folder.
TEST(RunCli, SameRunIdForTwoJobsIsNotMerged) {
  ScratchDir d;
  auto study = d / "runs";
  auto wrapper = [&](const std::string& job, int rank) {
    return run_scalelens("run --study " + quoted(study) + " --run-id shared --label ddp --gpu-source none --no-host -- true",
                         "SLURM_JOB_ID=" + job + " SLURM_STEP_ID=0 SLURM_PROCID=" + std::to_string(rank) +
                             " SLURM_NTASKS=2 SLURM_NNODES=1 SCALELENS_HOST=n01");
  };
  auto a0 = wrapper("100", 0), a1 = wrapper("100", 1);
  ASSERT_EQ(a0.exit_code, 0) << a0.err;
  ASSERT_EQ(a1.exit_code, 0) << a1.err;
  EXPECT_EQ(a0.err.find("already holds"), std::string::npos) << a0.err;
  EXPECT_TRUE(std::filesystem::exists(study / "shared/ranks/0.json"));
  EXPECT_TRUE(std::filesystem::exists(study / "shared/ranks/1.json")) << "one job's wrappers share the folder";
  EXPECT_NE(slurp(study / "shared/scalelens.json").find("\"job_key\":\"slurm-100.0\""), std::string::npos);

  auto b1 = wrapper("101", 1), b0 = wrapper("101", 0);  // rank 1 first: it must reach the same answer
  ASSERT_EQ(b0.exit_code, 0) << b0.err;
  ASSERT_EQ(b1.exit_code, 0) << b1.err;
  EXPECT_NE(b0.err.find("already holds job slurm-100.0"), std::string::npos) << b0.err;
  EXPECT_NE(b0.err.find((study / "shared-2").string()), std::string::npos) << b0.err;
  EXPECT_TRUE(std::filesystem::exists(study / "shared-2/ranks/0.json"));
  EXPECT_TRUE(std::filesystem::exists(study / "shared-2/ranks/1.json"));
  auto second = slurp(study / "shared-2/scalelens.json");
  EXPECT_NE(second.find("\"run_id\":\"shared-2\""), std::string::npos) << second;
  EXPECT_NE(second.find("\"job_key\":\"slurm-101.0\""), std::string::npos) << second;
  EXPECT_NE(slurp(study / "shared/scalelens.json").find("\"job_key\":\"slurm-100.0\""), std::string::npos)
      << "the first job's manifest is untouched";

  // Without a scheduler every run is its own job.
  auto c = run_scalelens("run --study " + quoted(study) + " --run-id shared --gpu-source none --no-host -- true",
                         "unset SLURM_JOB_ID OMPI_COMM_WORLD_RANK PMI_RANK RANK LOCAL_RANK WORLD_SIZE TORCHELASTIC_RUN_ID;");
  ASSERT_EQ(c.exit_code, 0) << c.err;
  EXPECT_NE(c.err.find("shared-3"), std::string::npos) << c.err;
  IngestOptions in;
  in.inputs = {study.string()};
  EXPECT_EQ(ingest(in).runs.size(), 3u);
}

// Signals the wrapper was started with ignored stay ignored for the command, and are not
// forwarded: under nohup, a SIGHUP killed the job (exit 129), where `nohup sleep` survives it; a
// SIGPIPE ignored by the caller was given back ignored, but SIGHUP and SIGINT were made deadly.
TEST(RunCli, SignalsStartedIgnoredStayIgnoredForTheCommand) {
  ScratchDir d;
  const std::string study = quoted(d / "runs");
  auto r = run_command("nohup " SCALELENS_BIN " run --study " + study + " --run-id hup --gpu-source none --no-host -- "
                       "sh -c 'sleep 1; touch " + (d / "survived").string() + "' >/dev/null 2>&1 & p=$!; sleep 0.3; kill -HUP $p; "
                       "wait $p; echo rc=$?");
  EXPECT_NE(r.out.find("rc=0"), std::string::npos) << r.out << r.err;
  EXPECT_TRUE(std::filesystem::exists(d / "survived"));
  // The command's ignored set: SIGHUP (bit 0) and SIGPIPE (bit 12) as inherited, SIGINT (bit 1) not.
  auto mask_of = [&](const std::string& ignoring, const std::string& id) {
    const auto file = d / (id + ".status");
    run_command("(trap '' " + ignoring + "; " SCALELENS_BIN " run --study " + study + " --run-id " + id +
                " --gpu-source none --no-host -- sh -c 'grep SigIgn /proc/$$/status > " + file.string() + "')");
    const auto line = slurp(file);
    return std::stoull(line.substr(line.find(':') + 1), nullptr, 16);
  };
  const auto ignored = mask_of("HUP PIPE", "ign");
  EXPECT_TRUE(ignored & 0x1) << std::hex << ignored;
  EXPECT_TRUE(ignored & 0x1000) << std::hex << ignored;
  const auto plain = mask_of("", "plain");
  EXPECT_FALSE(plain & 0x1) << std::hex << plain;
  EXPECT_FALSE(plain & 0x1000) << std::hex << plain;
}

// One srun step's shell running two runs one after the other (or torchrun twice with one
// --rdzv-id): one launch key for both, so the second joined the first's folder and overwrote its
// manifest (the first run, which failed, was lost). A rank that finds its own record in its
// launch's folder is a later run of that launch.
TEST(RunCli, RunsOneAfterAnotherInOneStepGetFoldersOfTheirOwn) {
  ScratchDir d;
  auto study = d / "runs";
  auto run = [&](const std::string& command) {
    return run_scalelens("run --study " + quoted(study) + " --label i --gpu-source none --no-host -- " + command,
                         "SLURM_JOB_ID=7 SLURM_STEP_ID=0 SLURM_PROCID=0 SLURM_NTASKS=1 SLURM_NNODES=1 SCALELENS_HOST=n01");
  };
  auto first = run("sh -c 'exit 3'"), second = run("true");
  EXPECT_EQ(first.exit_code, 3) << first.err;
  ASSERT_EQ(second.exit_code, 0) << second.err;
  EXPECT_NE(second.err.find("an earlier run of job slurm-7.0"), std::string::npos) << second.err;
  EXPECT_NE(slurp(study / "i-slurm-7.0/scalelens.json").find("\"exit_status\":3"), std::string::npos)
      << "the first run's record is its own";
  EXPECT_NE(slurp(study / "i-slurm-7.0-2/scalelens.json").find("\"exit_status\":0"), std::string::npos);
  // Another step of job 7 whose key is a prefix of the holder's (7.1 of 7.10) is another job.
  auto step = [&](const std::string& id) {
    return run_scalelens("run --study " + quoted(study) + " --run-id z --label i --gpu-source none --no-host -- true",
                         "SLURM_JOB_ID=7 SLURM_STEP_ID=" + id + " SLURM_PROCID=0 SLURM_NTASKS=1 SLURM_NNODES=1 SCALELENS_HOST=n01");
  };
  ASSERT_EQ(step("10").exit_code, 0);
  const auto later = step("1");
  EXPECT_NE(later.err.find("already holds job slurm-7.10 (a run folder holds one run); recording this job, slurm-7.1, in"),
            std::string::npos) << later.err;
}

// Invocations started at once with one --run-id: each gets a folder of its own (r, r-2, ...), never
// one shared by two, which the report would read as one run with double the throughput.
TEST(RunCli, ConcurrentInvocationsWithOneRunIdGetOneFolderEach) {
  ScratchDir d;
  constexpr int kRuns = 6;
  std::vector<pid_t> pids;
  for (int i = 0; i < kRuns; ++i)
    pids.push_back(spawn_scalelens({"run", "-q", "--study", (d / "runs").string(), "--label", "race", "--run-id", "r",
                                    "--gpu-source", "none", "--no-host", "--", "sleep", "0.3"}));
  for (auto p : pids) EXPECT_EQ(wait_status(p), 0);
  std::set<std::string> names;
  for (const auto& f : run_folders(d / "runs")) {
    names.insert(f.filename().string());
    EXPECT_TRUE(std::filesystem::exists(f / "ranks/0.json")) << f;
    EXPECT_EQ(count_lines(slurp(f / "scalelens.json"), "\"status\":\"complete\""), 1u) << f;
  }
  EXPECT_EQ(names, (std::set<std::string>{"r", "r-2", "r-3", "r-4", "r-5", "r-6"}));
  IngestOptions in;
  in.inputs = {(d / "runs").string()};
  EXPECT_EQ(ingest(in).runs.size(), static_cast<std::size_t>(kRuns));
}

// A disk that filled during a run left half a line at the end of host.csv, and nobody heard of
// it. On a real full file system (a 64 KiB tmpfs; mounting needs root), the command fills the
// disk as a checkpoint might, then frees it and ends: the wrapper said which file could not be
// written and why, once, the command ran on to its end, host.csv ends at a whole line, and the
// manifest's `missing` says the samples stop early, which the report repeats.
TEST(RunCli, ADiskThatFillsMidRunIsSaidAndRecordedAndTheCommandRunsOn) {
  ScratchDir d;
  const auto small = d / "small";
  std::filesystem::create_directories(small);
  if (run_command("mount -t tmpfs -o size=64k tmpfs " + quoted(small)).exit_code != 0) GTEST_SKIP() << "cannot mount a tmpfs here (not root)";
  struct Unmount {
    std::filesystem::path at;
    ~Unmount() { run_command("umount " + quoted(at)); }
  } unmount{small};
  const auto filler = small / "checkpoint", finished = d / "finished";
  // Then node.json cannot be rewritten either (its temporary name, node.json.tmp.<wrapper's pid>,
  // is taken by a folder): the manifest still gets the node's missing samples.
  const std::string command = fmt::format(
      "head -c 1000000 /dev/zero > {0} 2>/dev/null; sleep 2; rm -f {0}; mkdir \"$SCALELENS_RUN_DIR/nodes/n01/node.json.tmp.$PPID\"; touch {1}",
      filler.string(), finished.string());
  auto r = run_scalelens("run --study " + quoted(small / "runs") + " --label full --gpu-source none --interval 0.005 --flush 0.01 -- sh -c " +
                             quoted(std::filesystem::path(command)),
                         "SCALELENS_HOST=n01");
  EXPECT_EQ(r.exit_code, 0) << r.err;
  EXPECT_TRUE(std::filesystem::exists(finished)) << "the command ran to its end";
  const auto folders = run_folders(small / "runs");
  ASSERT_EQ(folders.size(), 1u) << r.err;
  const auto run = folders.front();
  const std::string host_csv = (run / "nodes/n01/host.csv").string();
  const std::string said = "scalelens run: warning: cannot write " + host_csv + ": No space left on device; its samples stop ";
  EXPECT_EQ(count_lines(r.err, said), 1u) << r.err;
  EXPECT_NE(r.err.find("; the command goes on\n"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("scalelens run: warning: " + (run / "nodes/n01/node.json").string() + ": cannot write: Is a directory\n"),
            std::string::npos)
      << r.err;
  const auto text = slurp(host_csv);
  ASSERT_FALSE(text.empty());
  EXPECT_EQ(text.back(), '\n') << "no half line at the end";

  simdjson::dom::parser parser;
  simdjson::dom::element m = parser.load((run / "scalelens.json").string());
  EXPECT_EQ(std::string_view(m["status"]), "complete");
  std::string_view said_missing;
  ASSERT_EQ(m["missing"]["samples"].get(said_missing), simdjson::SUCCESS) << slurp(run / "scalelens.json");
  const std::string samples(said_missing);
  EXPECT_EQ(samples.rfind("cannot write " + host_csv + ": No space left on device; its samples stop ", 0), 0u) << samples;
  const Study study = ingest(IngestOptions{{run.string()}, {}, 1, {}});
  for (const auto& diag : study.diagnostics)  // no cut line, at the end or followed by later samples
    EXPECT_TRUE(diag.code != "truncated-line" && diag.code != "bad-lines") << diag.code << ": " << diag.message;
  const auto summary = analyze(study, {});
  EXPECT_TRUE(std::any_of(summary.warnings.begin(), summary.warnings.end(), [&](const Diagnostic& w) {
    return w.code == "missing-figure" && w.message == "GPU and host samples not computed for full/1: " + samples;
  })) << samples;
}

// In a SLURM batch script (or salloc shell) every run outside srun has the key slurm-J.batch:
// consecutive runs there are separate runs, while the ranks of one launcher started from it
// (MPICH's Hydra, here the test process as their common parent) still share a folder.
TEST(RunCli, ConsecutiveRunsInOneBatchScriptGetTwoFolders) {
  ScratchDir d;
  auto study = d / "runs";
  const std::string batch_env = "unset SLURM_STEP_ID OMPI_COMM_WORLD_RANK PMI_RANK RANK LOCAL_RANK WORLD_SIZE TORCHELASTIC_RUN_ID; "
                                "SLURM_JOB_ID=777 SLURM_NTASKS=1 SCALELENS_HOST=n01";
  for (int i = 0; i < 2; ++i) {
    auto r = run_scalelens("run --study " + quoted(study) + " --label b --gpu-source none --no-host -- true", batch_env);
    ASSERT_EQ(r.exit_code, 0) << r.err;
  }
  EXPECT_TRUE(std::filesystem::exists(study / "b-slurm-777.batch/ranks/0.json"));
  EXPECT_TRUE(std::filesystem::exists(study / "b-slurm-777.batch-2/ranks/0.json"));
  EXPECT_EQ(run_folders(study).size(), 2u);

  std::vector<pid_t> pids;
  for (int r = 0; r < 2; ++r)
    pids.push_back(spawn_scalelens({"run", "-q", "--study", (d / "mpich").string(), "--label", "m", "--gpu-source", "none",
                                    "--no-host", "--", "true"},
                                   {"SLURM_JOB_ID=777", "PMI_RANK=" + std::to_string(r), "PMI_SIZE=2", "SCALELENS_HOST=n01"}));
  for (auto p : pids) EXPECT_EQ(wait_status(p), 0);
  ASSERT_EQ(run_folders(d / "mpich").size(), 1u);
  EXPECT_TRUE(std::filesystem::exists(d / "mpich/m-slurm-777.batch/ranks/0.json"));
  EXPECT_TRUE(std::filesystem::exists(d / "mpich/m-slurm-777.batch/ranks/1.json"));
}

// A wrapper whose stderr is a pipe nobody reads (`scalelens run … 2>&1 | true`) once died of
// SIGPIPE at its first message, before the command started, leaving the manifest "running".
// Now it runs the command, completes the run, and the command gets SIGPIPE's default disposition.
TEST(RunCli, StderrAClosedPipeStillRunsTheCommandWithSigpipeAsItWas) {
  ScratchDir d;
  int pipe_fds[2];
  ASSERT_EQ(::pipe(pipe_fds), 0);
  ::close(pipe_fds[0]);  // no reader: a write gets SIGPIPE
  auto ignored = d / "sigign";
  pid_t w = spawn_scalelens({"run", "--study", (d / "runs").string(), "--run-id", "p9", "--gpu-source", "none", "--no-host",
                             "--", "sh", "-c", "grep SigIgn /proc/self/status > '" + ignored.string() + "'"},
                            {}, {{2, pipe_fds[1]}});
  ::close(pipe_fds[1]);
  ASSERT_EQ(wait_status(w), 0);
  EXPECT_NE(slurp(d / "runs/p9/scalelens.json").find("\"status\":\"complete\""), std::string::npos);
  auto line = slurp(ignored);
  ASSERT_EQ(line.rfind("SigIgn:", 0), 0u) << line;
  const auto mask = std::stoull(std::string(trim(line.substr(7))), nullptr, 16);
  EXPECT_EQ(mask & (1ull << (SIGPIPE - 1)), 0u) << "the command must not inherit an ignored SIGPIPE: " << line;
}

// With stdout and stderr closed (`>&- 2>&-`) the run folder's first files got fds 1 and 2, and
// the wrapper's messages were written into host.csv and sampler.lock.
TEST(RunCli, ClosedStdoutAndStderrKeepMessagesOutOfTheRunFiles) {
  ScratchDir d;
  pid_t w = spawn_scalelens({"run", "--study", (d / "runs").string(), "--run-id", "closed", "--interval", "0.01",
                             "--gpu-source", "replay:" + kRecording, "--", "sh", "-c", "printf '%s-%s\\n' from-the command; sleep 0.2"},
                            {}, {{1, -1}, {2, -1}});
  ASSERT_EQ(wait_status(w), 0);
  auto run = d / "runs/closed";
  std::size_t files = 0;
  for (const auto& e : std::filesystem::recursive_directory_iterator(run)) {
    if (!e.is_regular_file()) continue;
    ++files;
    auto text = slurp(e.path());
    EXPECT_EQ(text.find("recording to"), std::string::npos) << e.path() << ": " << text;
    EXPECT_EQ(text.find("from-the-command"), std::string::npos) << e.path() << ": " << text;
  }
  EXPECT_GE(files, 6u);  // manifest, rank record, epochs, steps, gpu.csv, host.csv, node.json, lock
  IngestOptions in;
  in.inputs = {(d / "runs").string()};
  Study s = ingest(in);
  ASSERT_EQ(s.runs.size(), 1u);
  for (const auto& diag : s.diagnostics) EXPECT_NE(diag.code, "bad-lines") << diag.message;
}

// A wrapped `torchrun --nproc-per-node gpu` runs one process per GPU the job may use: the GPUs
// the sampler selects on the node (here CUDA_VISIBLE_DEVICES leaves one of the recording's two),
// not world size 1 beside gpus_per_node 2.
TEST(RunCli, TorchrunNprocPerNodeGpuCountsTheSelectedGpus) {
  ScratchDir d;
  d.write("bin/torchrun", "#!/bin/sh\nexit 0\n");
  std::filesystem::permissions(d / "bin/torchrun", std::filesystem::perms::owner_all);
  auto r = run_scalelens("run --study " + quoted(d / "runs") + " --run-id g --gpu-source replay:" + kRecording +
                             " -- torchrun --nnodes 2 --nproc-per-node gpu train.py",
                         "unset SLURM_JOB_ID SLURM_GPUS_ON_NODE RANK LOCAL_RANK WORLD_SIZE TORCHELASTIC_RUN_ID; PATH=" +
                             quoted(d / "bin") + ":/usr/bin:/bin CUDA_VISIBLE_DEVICES=1");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  auto manifest = slurp(d / "runs/g/scalelens.json");
  EXPECT_NE(manifest.find("\"world_size\":2,"), std::string::npos) << manifest;
  EXPECT_NE(manifest.find("\"world_size\":\"command: torchrun --nproc-per-node gpu × --nnodes (1 GPU seen on this node)\""),
            std::string::npos) << manifest;
  auto elastic = run_scalelens("run --study " + quoted(d / "runs") + " --run-id e --gpu-source none -- torchrun --nnodes 1:4 "
                               "--nproc-per-node 4 train.py",
                               "unset SLURM_JOB_ID RANK LOCAL_RANK WORLD_SIZE TORCHELASTIC_RUN_ID; PATH=" + quoted(d / "bin") + ":/usr/bin:/bin");
  ASSERT_EQ(elastic.exit_code, 0) << elastic.err;
  EXPECT_NE(elastic.err.find("warning: the command's torchrun --nnodes is an elastic range"), std::string::npos) << elastic.err;
  EXPECT_EQ(slurp(d / "runs/e/scalelens.json").find("\"world_size\":"), std::string::npos);
  // A GPU library that cannot be opened (none here) is no count of GPUs: `auto` is not the CPUs.
  auto no_library = run_scalelens("run --study " + quoted(d / "runs") + " --run-id a --gpu-source nvml -- torchrun "
                                  "--nproc-per-node auto train.py",
                                  "unset SLURM_JOB_ID SLURM_GPUS_ON_NODE RANK LOCAL_RANK WORLD_SIZE TORCHELASTIC_RUN_ID; PATH=" +
                                      quoted(d / "bin") + ":/usr/bin:/bin");
  ASSERT_EQ(no_library.exit_code, 0) << no_library.err;
  EXPECT_NE(no_library.err.find("--nproc-per-node auto: this wrapper does not count the node's GPUs"), std::string::npos)
      << no_library.err;
  EXPECT_EQ(slurp(d / "runs/a/scalelens.json").find("\"world_size\":"), std::string::npos);
}

// The wrapper stamps the run's start with the wall clock and later times as the start plus the
// monotonic time elapsed, and hands its clock to the command (SCALELENS_CLOCK) for its logging
// helpers: one clock for the run's start, end, samples and the command's own times. (A clock step
// cannot be made here; the stamps are checked against the monotonic clock around the run.)
TEST(RunCli, TheRunsTimesAreItsStartPlusTheMonotonicTimeElapsed) {
  ScratchDir d;
  auto monotonic_ns = [] {
    return std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now().time_since_epoch()).count();
  };
  const long long before = monotonic_ns();
  auto r = run_scalelens("run -q --study " + quoted(d / "runs") + " --label clk --interval 0.01 --gpu-source " +
                         shell_quote("replay:" + kRecording) + " -- sh -c " +
                         shell_quote("printf '%s' \"$SCALELENS_CLOCK\" > \"$SCALELENS_RUN_DIR/clock.txt\"; sleep 0.3"));
  const long long after = monotonic_ns();
  ASSERT_EQ(r.exit_code, 0) << r.err;
  const auto runs = run_folders(d / "runs");
  ASSERT_EQ(runs.size(), 1u);
  simdjson::dom::parser parser;
  std::string keep;
  simdjson::dom::element manifest = parse(parser, runs[0] / "scalelens.json", keep);
  const long long start = int64_t(manifest["start_ns"]), end = int64_t(manifest["end_ns"]);
  const std::string clock = slurp(runs[0] / "clock.txt");
  const auto comma = clock.find(',');
  ASSERT_NE(comma, std::string::npos) << clock;
  EXPECT_EQ(std::stoll(clock.substr(0, comma)), start) << clock;
  const long long monotonic_start = std::stoll(clock.substr(comma + 1));
  EXPECT_GE(monotonic_start, before);
  EXPECT_LE(monotonic_start, after);
  // The end is the start plus the monotonic time elapsed: at least the command's 0.3 s, and no
  // more than the wrapper lasted by the monotonic clock.
  EXPECT_GE(end - start, 300000000LL);
  EXPECT_LE(end - start, after - monotonic_start);
  // The samples lie on the same clock, within the run.
  std::istringstream lines(slurp(runs[0] / "nodes" / std::filesystem::directory_iterator(runs[0] / "nodes")->path().filename() / "gpu.csv"));
  std::string line;
  std::getline(lines, line);
  std::size_t samples = 0;
  while (std::getline(lines, line)) {
    const long long t = std::stoll(line.substr(0, line.find(',')));
    EXPECT_GE(t, start) << line;
    EXPECT_LE(t, end + 1000000000LL) << line;  // the last sample follows the end's stamp
    ++samples;
  }
  EXPECT_GT(samples, 0u);
}
