// `scalelens sweep` end to end: locally with the MPI example (as the demo uses it), the job scripts
// of --dry-run, and on a real SLURM (the private single-node cluster scripts/test.sh starts with
// scripts/slurm-cluster.sh): a sweep to its report, scancel then --resume, and `srun` around
// `scalelens run` as the collection sees it. CI sets SCALELENS_REQUIRE_SLURM, so there the SLURM
// tests cannot skip.
#include <gtest/gtest.h>

#include <sys/stat.h>

#include <simdjson.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <map>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>

#include <fmt/format.h>

#include "collect/sweep.hpp"
#include "support/run_binary.hpp"
#include "support/spawn_binary.hpp"
#include "support/study_figures.hpp"

using namespace scalelens::testing;
namespace fs = std::filesystem;

namespace {

std::string read(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  return {std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>()};
}

std::set<std::string> run_folders(const fs::path& study) {
  std::set<std::string> out;
  for (auto& e : fs::directory_iterator(study))
    if (e.is_directory() && fs::exists(e.path() / "scalelens.json")) out.insert(e.path().filename().string());
  return out;
}

// `file` with its first `from` written as `to`; false where it holds none.
bool rewrite_first(const fs::path& file, const std::string& from, const std::string& to) {
  auto text = read(file);
  const auto at = text.find(from);
  if (at == std::string::npos) return false;
  text.replace(at, from.size(), to);
  std::ofstream(file, std::ios::trunc) << text;
  return true;
}

// `sweep --status` of `study` as someone to whom it is read-only (no lock for them to take): root
// writes anywhere, so then it is taken as another user.
Output status_read_only(const fs::path& study) {
  fs::permissions(study, fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read | fs::perms::group_exec |
                             fs::perms::others_read | fs::perms::others_exec);
  const std::string reader = ::geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups" : "";
  auto looked = run_scalelens("sweep --study " + quoted(study) + " --status", reader);
  fs::permissions(study, fs::perms::owner_all, fs::perm_options::add);
  return looked;
}

scalelens::sweep::Plan plan_of(const fs::path& study) {
  auto plan = scalelens::sweep::read_plan(study / "sweep.json");
  EXPECT_TRUE(plan) << plan.error().message;
  return plan ? plan.value() : scalelens::sweep::Plan{};
}

// A shell prefix that runs the command in `folder`: the folder a sweep is planned in is where its
// commands run, so it must outlive the command (run_command's own working folder does not).
std::string in_folder(const fs::path& folder) { return "cd " + quoted(folder) + " &&"; }

// A local sweep of three sizes (or `tasks`) whose command (after `prefix`) waits for ever, started
// with stderr into `err`.
pid_t spawn_waiting_sweep(const ScratchDir& dir, const fs::path& err_file, const std::string& prefix = "",
                          const std::string& tasks = "1,2,3") {
  const std::string cmd = fmt::format("{}touch {}/started-{{tasks}}; exec sleep 60", prefix, dir.path().string());
  const int err = ::open(err_file.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
  EXPECT_GE(err, 0);
  const pid_t pid = spawn_scalelens({"sweep", "--study", (dir / "runs").string(), "--label", "w", "--tasks", tasks, "--launcher",
                                     "local", "--no-mpirun", "--workdir", dir.path().string(), "--", "sh", "-c", cmd},
                                    {}, {{2, err}});
  ::close(err);
  return pid;
}

// A local sweep (spawn_waiting_sweep, stderr into <dir>/err) that runs its first size, whose command
// writes its process group to <dir>/group. `outlive`: the command ignores the signals, so its
// wrapper outlives the sweep (10 s, --kill-after) and its run folder stays incomplete: only the
// mark says the entry runs. At the end the sweep and the command's group are killed.
class WaitingSweep {
 public:
  WaitingSweep(const ScratchDir& dir, bool outlive) : dir_(dir.path()) {
    const std::string group = fmt::format("echo $$ > {}/group; ", dir_.string());
    pid = spawn_waiting_sweep(dir, dir_ / "err", outlive ? "trap '' TERM INT HUP; " + group : group);
    started = wait_for([&] { return fs::exists(dir_ / "started-1"); }, 10s);
  }
  WaitingSweep(const WaitingSweep&) = delete;
  WaitingSweep& operator=(const WaitingSweep&) = delete;
  ~WaitingSweep() {
    kill();
    for (pid_t g : pids_in(dir_ / "group")) ::kill(-g, SIGKILL);
  }
  // SIGKILL, as a crash or `kill -9` ends a sweep: its mark stays in sweep.json.
  void kill() {
    if (killed_) return;
    killed_ = true;
    ::kill(pid, SIGKILL);
    EXPECT_EQ(wait_status(pid), 128 + SIGKILL);
  }
  // The process group of the run's command (which outlives a killed sweep).
  pid_t group() const {
    const auto pids = pids_in(dir_ / "group");
    EXPECT_EQ(pids.size(), 1u);
    return pids.empty() ? 0 : pids[0];
  }
  std::string err() const { return slurp(dir_ / "err"); }

  pid_t pid = -1;
  bool started = false;

 private:
  fs::path dir_;
  bool killed_ = false;
};

TEST(SweepCli, DryRunPrintsValidJobScriptsAndSubmitsNothing) {
  ScratchDir dir;
  auto r = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label ddp --nodes 1,2 --tasks-per-node 4 --gpus-per-task 1 "
                         "--repeats 2 --launcher slurm --dry-run --sbatch '--partition=booster --time=00:30:00' "
                         "-- torchrun --nnodes {nodes} --nproc-per-node 4 train.py --tag 'it'\"'\"'s {gpus}'");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_FALSE(fs::exists(dir / "runs/sweep.json")) << "a dry run writes nothing";
  EXPECT_FALSE(fs::exists(dir / "runs"));
  // Four scripts, each valid bash, each for its size.
  std::vector<std::string> scripts;
  for (std::size_t at = r.out.find("# ---- "); at != std::string::npos;) {
    const auto next = r.out.find("# ---- ", at + 1);
    scripts.push_back(r.out.substr(at, next == std::string::npos ? std::string::npos : next - at));
    at = next;
  }
  ASSERT_EQ(scripts.size(), 4u) << r.out;
  for (const auto& s : scripts) {
    auto file = dir.write("script.sh", s);
    EXPECT_EQ(run_command("bash -n " + quoted(file)).exit_code, 0) << s;
  }
  EXPECT_NE(scripts[2].find("#SBATCH --nodes=2\n#SBATCH --ntasks-per-node=4"), std::string::npos) << scripts[2];
  EXPECT_NE(scripts[2].find("--run-id ddp-2n8t-r1"), std::string::npos) << scripts[2];
  EXPECT_NE(scripts[2].find("--nnodes 2 --nproc-per-node 4 train.py --tag 'it'\\''s 8'"), std::string::npos) << scripts[2];

  // A template of the site's: its lines kept, the placeholders filled; one that runs nothing refused.
  auto tmpl = dir.write("site.sbatch", "#!/bin/bash\n#SBATCH -N {nodes}\nmodule load nccl\n{scalelens_run}\n");
  auto t = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label ddp --nodes 4 --launcher slurm --dry-run --template " +
                         quoted(tmpl) + " -- ./train");
  ASSERT_EQ(t.exit_code, 0) << t.err;
  EXPECT_NE(t.out.find("#SBATCH -N 4\nmodule load nccl\n"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find(" run --study "), std::string::npos) << t.out;
  auto none = dir.write("none.sbatch", "#!/bin/bash\necho hi\n");
  auto n = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label ddp --nodes 4 --launcher slurm --dry-run --template " +
                         quoted(none) + " -- ./train");
  EXPECT_EQ(n.exit_code, 1);
  EXPECT_NE(n.err.find("neither {scalelens_run} nor {command}"), std::string::npos) << n.err;
}

// --report-job is SLURM's; a local sweep given it wrote no report anywhere and exited 0.
TEST(SweepCli, ALocalSweepWithReportJobWritesTheReportItself) {
  ScratchDir dir;
  auto r = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label a --tasks 1 --launcher local --no-mpirun --report-job "
                         "--report-dir " + quoted(dir / "report") + " -- true",
                         in_folder(dir.path()));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_TRUE(fs::exists(dir / "report/report.html")) << r.out << r.err;
  EXPECT_NE(r.out.find("Wrote the report to " + (dir / "report").string()), std::string::npos) << r.out;
}

// Placeholders were filled in --run-args but handed to sbatch (and srun) as "{gpus}"; --dry-run
// did not show --sbatch's options at all.
TEST(SweepCli, DryRunShowsTheSbatchLineWithItsPlaceholdersFilled) {
  ScratchDir dir;
  auto r = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label s --tasks 2 --launcher slurm --sbatch "
                         "'--comment=gpus-{gpus} --hold' --srun '--label --job-name=r{repeat}' --run-args '--global-batch-size {gpus}' "
                         "--dry-run -- true");
  ASSERT_EQ(r.exit_code, 0) << r.err;
  EXPECT_NE(r.out.find("# ---- s-1n2t-r1\n# sbatch --parsable --comment=gpus-2 --hold " + (dir / "runs/.sweep/s-1n2t-r1.sh").string() +
                       "\n#!/bin/bash\n"),
            std::string::npos)
      << r.out;
  EXPECT_NE(r.out.find("srun --nodes=1 --ntasks-per-node=2 --label --job-name=r1 "), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find('{'), std::string::npos) << "no placeholder left\n" << r.out;
}

TEST(SweepCli, UsageErrorsAreNamed) {
  ScratchDir dir;
  auto both = run_scalelens("sweep --study " + quoted(dir / "r") + " --label x --nodes 1 --tasks 2 -- ./a");
  EXPECT_EQ(both.exit_code, 1);
  EXPECT_NE(both.err.find("--nodes or --tasks, not both"), std::string::npos);
  auto status = run_scalelens("sweep --study " + quoted(dir / "r") + " --status");
  EXPECT_EQ(status.exit_code, 2);
  EXPECT_NE(status.err.find("holds no sweep.json"), std::string::npos) << status.err;
  auto bad = dir.write("r/sweep.json", R"({"schema": "scalelens.sweep/1", "launcher": "local", "entries": [{"run_id": "../x"}]})");
  auto r = run_scalelens("sweep --study " + quoted(dir / "r") + " --status");
  EXPECT_EQ(r.exit_code, 2);
  EXPECT_NE(r.err.find("entries[0].run_id"), std::string::npos) << r.err;
  dir.write("r/sweep.json", R"({"schema": "scalelens.sweep/1", "launcher": "local", "workdir": 5, "entries": []})");
  auto w = run_scalelens("sweep --study " + quoted(dir / "r") + " --status");
  EXPECT_EQ(w.exit_code, 2);
  EXPECT_NE(w.err.find("workdir is not a string"), std::string::npos) << w.err;
  // Each count in range, their product beyond any machine: refused before anything is planned
  // (it overflowed into mpirun -n -1837367296).
  for (const char* sizes : {"--nodes 600000 --tasks-per-node 4096", "--tasks 1000000 --gpus-per-task 4096"}) {
    auto huge = run_scalelens("sweep --study " + quoted(dir / "huge") + " --label x " + sizes + " --launcher local --dry-run -- ./a");
    EXPECT_EQ(huge.exit_code, 1) << sizes;
    EXPECT_NE(huge.err.find("beyond any machine (at most 10000000)"), std::string::npos) << huge.err;
    EXPECT_FALSE(fs::exists(dir / "huge/sweep.json"));
  }
  // --help says where the commands run.
  auto help = run_scalelens("sweep --help");
  EXPECT_EQ(help.exit_code, 0);
  EXPECT_NE(help.out.find("in the folder the sweep was first planned in"), std::string::npos) << help.out;
}

TEST(SweepCli, AFailingRunIsMarkedAndResumeRunsOnlyIt) {
  ScratchDir dir;
  // The command fails while the marker exists: the first attempt of r2 fails, the resume succeeds.
  const auto marker = dir / "fail-r2";
  std::ofstream(marker) << "x";
  const std::string cmd = fmt::format("sh -c 'if [ {{repeat}} = 2 ] && [ -e {} ]; then exit 3; fi; exit 0'", marker.string());
  auto r = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label sh --tasks 1 --repeats 2 --launcher local --no-mpirun -- " + cmd,
                         in_folder(dir.path()));
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;  // a run failed
  auto plan = plan_of(dir / "runs");
  ASSERT_EQ(plan.entries.size(), 2u);
  EXPECT_EQ(plan.entries[0].state, scalelens::sweep::State::done);
  EXPECT_EQ(plan.entries[1].state, scalelens::sweep::State::failed);
  EXPECT_EQ(plan.entries[1].exit_status, 3);
  const auto first_manifest = read(dir / "runs/sh-1n1t-r1/scalelens.json");

  fs::remove(marker);
  // The failed attempt's folder cannot move aside (.sweep/attempts is a file): the rerun is not
  // started beside it, and the entry fails naming why (the attempt was rerun into the old folder's
  // place, or beside it, without a word).
  fs::create_directories(dir / "runs/.sweep");
  std::ofstream(dir / "runs/.sweep/attempts") << "x";
  auto blocked = run_scalelens("sweep --study " + quoted(dir / "runs") + " --resume -q");
  EXPECT_EQ(blocked.exit_code, 5) << blocked.out << blocked.err;
  EXPECT_NE(blocked.err.find("sh-1n1t-r2: " + (dir / "runs/.sweep/attempts").string() + ": cannot create the folder"),
            std::string::npos)
      << blocked.err;
  plan = plan_of(dir / "runs");
  EXPECT_EQ(plan.entries[1].state, scalelens::sweep::State::failed);
  EXPECT_NE(plan.entries[1].note.find("cannot create the folder"), std::string::npos) << plan.entries[1].note;
  EXPECT_EQ(plan.entries[1].exit_status, 3) << "the earlier attempt's folder, untouched";
  fs::remove(dir / "runs/.sweep/attempts");
  auto again = run_scalelens("sweep --study " + quoted(dir / "runs") + " --resume -q");
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  plan = plan_of(dir / "runs");
  for (const auto& e : plan.entries) EXPECT_EQ(e.state, scalelens::sweep::State::done) << e.run_id;
  EXPECT_EQ(read(dir / "runs/sh-1n1t-r1/scalelens.json"), first_manifest) << "a finished run is never run again";
  EXPECT_EQ(run_folders(dir / "runs"), (std::set<std::string>{"sh-1n1t-r1", "sh-1n1t-r2"}));
  EXPECT_TRUE(fs::exists(dir / "runs/.sweep/attempts/sh-1n1t-r2.1/scalelens.json")) << "the failed attempt is kept aside";
  // Nothing left to do: a third call launches nothing.
  auto third = run_scalelens("sweep --study " + quoted(dir / "runs") + " --resume -q");
  EXPECT_EQ(third.exit_code, 0);
  EXPECT_EQ(read(dir / "runs/sh-1n1t-r1/scalelens.json"), first_manifest);
  // An exit status beyond int is no success (cut to int, 4294967296 read as 0, and the run as done).
  std::string manifest = first_manifest;
  const auto at = manifest.find("\"exit_status\"");
  ASSERT_NE(at, std::string::npos) << manifest;
  manifest.replace(at, manifest.find_first_of(",}", at) - at, "\"exit_status\": 4294967296");
  std::ofstream(dir / "runs/sh-1n1t-r1/scalelens.json") << manifest;
  auto status = run_scalelens("sweep --study " + quoted(dir / "runs") + " --status");
  const auto row = status.out.find("sh-1n1t-r1");
  ASSERT_NE(row, std::string::npos) << status.out;
  EXPECT_NE(status.out.substr(row, status.out.find('\n', row) - row).find("failed"), std::string::npos) << status.out;
}

// A run id is made from the label as a file name: labels that differ only in characters it
// replaces ("d d,p" and "d_d_p"; every non-ASCII byte) shared one, and the second label was taken
// as done without running; so was the same size at another GPU count.
TEST(SweepCli, EntriesThatWouldShareARunIdEachRunOrAreRefusedByName) {
  ScratchDir dir;
  const std::string study = quoted(dir / "runs");
  for (const char* label : {"d d,p", "d_d_p", "ддп", "фсд"}) {
    auto r = run_scalelens("sweep --study " + study + " --label " + quoted(label) + " --tasks 1 --launcher local --no-mpirun -q -- true",
                           in_folder(dir.path()));
    EXPECT_EQ(r.exit_code, 0) << label << r.out << r.err;
  }
  auto plan = plan_of(dir / "runs");
  ASSERT_EQ(plan.entries.size(), 4u);
  std::set<std::string> ids;
  for (const auto& e : plan.entries) {
    EXPECT_EQ(e.state, scalelens::sweep::State::done) << e.run_id;
    ids.insert(e.run_id);
  }
  EXPECT_EQ(ids.size(), 4u) << "each label its own run id";
  EXPECT_EQ(plan.entries[1].run_id, "d_d_p-1n1t-r1") << "a label that is a file name keeps it";
  EXPECT_EQ(run_folders(dir / "runs"), ids);

  // A label spelled as another's run id, and the same size at another GPU count: refused, naming
  // the entry that holds the run id; nothing is planned.
  const std::string hashed = plan.entries[0].run_id.substr(0, plan.entries[0].run_id.find("-1n1t-r1"));
  auto spelled = run_scalelens("sweep --study " + study + " --label " + quoted(fs::path(hashed)) + " --tasks 1 --launcher local --no-mpirun -q -- true");
  EXPECT_EQ(spelled.exit_code, 1) << spelled.out << spelled.err;
  EXPECT_NE(spelled.err.find("run id " + plan.entries[0].run_id + " is planned for label 'd d,p', 1 node x 1 task per node, 1 GPU, repeat 1"),
            std::string::npos)
      << spelled.err;
  auto wider = run_scalelens("sweep --study " + study + " --label d_d_p --tasks 1 --gpus-per-task 4 --launcher local --no-mpirun -q -- true");
  EXPECT_EQ(wider.exit_code, 1) << wider.out << wider.err;
  EXPECT_NE(wider.err.find("run id d_d_p-1n1t-r1 is planned for label 'd_d_p', 1 node x 1 task per node, 1 GPU, repeat 1; this call asks "
                           "for label 'd_d_p', 1 node x 1 task per node, 4 GPUs, repeat 1"),
            std::string::npos)
      << wider.err;
  // The same entry with another command: refused too (it would not be run again).
  auto other = run_scalelens("sweep --study " + study + " --label d_d_p --tasks 1 --launcher local --no-mpirun -q -- false");
  EXPECT_EQ(other.exit_code, 1) << other.out << other.err;
  EXPECT_NE(other.err.find("d_d_p-1n1t-r1 is planned with the command true, not false"), std::string::npos) << other.err;
  EXPECT_EQ(plan_of(dir / "runs").entries.size(), 4u);
}

// A command that starts its own workers (--no-mpirun) was recorded at world size 1 for every
// size, and the report pooled the 1-, 2- and 4-task runs into one configuration.
TEST(SweepCli, EachRunIsRecordedAtItsEntrysWorldSize) {
  ScratchDir dir;
  auto r = run_scalelens("sweep --study " + quoted(dir / "runs") +
                             " --label w --tasks 1,2 --gpus-per-task 2 --launcher local --no-mpirun -q -- true",
                         in_folder(dir.path()));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto plan = plan_of(dir / "runs");
  ASSERT_EQ(plan.entries.size(), 2u);
  for (const auto& e : plan.entries) {
    SCOPED_TRACE(e.run_id);
    simdjson::dom::parser parser;
    simdjson::dom::element m = parser.load((dir / "runs" / e.run_id / "scalelens.json").string());
    EXPECT_EQ(int64_t(m["world_size"]), e.tasks * 2);
    EXPECT_EQ(std::string_view(m["detected_from"]["world_size"]), "--world-size");
  }
  // One way to state it: --run-args with --world-size is refused.
  auto stated = run_scalelens("sweep --study " + quoted(dir / "other") +
                              " --label w --tasks 1 --launcher local --no-mpirun --run-args '--world-size 4' -q -- true");
  EXPECT_EQ(stated.exit_code, 1);
  EXPECT_NE(stated.err.find("--run-args cannot hold --world-size"), std::string::npos) << stated.err;
  EXPECT_FALSE(fs::exists(dir / "other/sweep.json"));
}

// --run-args with an option the sweep gives each run itself (--label, --run-id, --study) was
// planned, and every run failed, "exit status 1", with `scalelens run`'s "--label: At Most 1
// required but received 2" on stderr. Now the plan is refused, naming the option and what to do.
TEST(SweepCli, RunArgsWithAnOptionTheSweepGivesEachRunAreRefusedSayingWhatToDo) {
  const std::map<std::string, std::string> said = {
      {"--label b", "--run-args cannot hold --label: each run is given the sweep's --label, which names its entries and run ids; "
                    "give the label as the sweep's --label\n"},
      {"--label=b", "--run-args cannot hold --label: each run is given the sweep's --label, which names its entries and run ids; "
                    "give the label as the sweep's --label\n"},
      {"--run-id r", "--run-args cannot hold --run-id: each run is given its entry's (<label>-<nodes>n<tasks>t-r<repeat>), one run "
                     "folder per entry\n"},
      {"--study elsewhere", "--run-args cannot hold --study: each run is given the sweep's --study; give the study as the sweep's "
                            "--study\n"}};
  for (const auto& [args, why] : said) {
    SCOPED_TRACE(args);
    ScratchDir dir;
    auto r = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label a --tasks 1 --launcher local --no-mpirun --run-args '" +
                               args + "' -- touch " + quoted(dir / "ran"),
                           in_folder(dir.path()));
    EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
    EXPECT_EQ(r.err, "scalelens sweep: " + why);
    EXPECT_FALSE(fs::exists(dir / "runs/sweep.json"));
    EXPECT_FALSE(fs::exists(dir / "ran"));
  }
}

// A label of 250 characters made a run id longer than a file name may be (255 bytes, with the
// names `scalelens run` makes of it): every run failed, "exit status 1", with "cannot create a
// run folder in it: File name too long". Now the label's part of the run id is cut and the
// label's hash added (as for a label that is not a file name), so two long labels that begin
// alike still have two run ids.
TEST(SweepCli, ALabelTooLongForAFolderNameIsCutAndHashedAndRuns) {
  ScratchDir dir;
  const std::string first(250, 'x'), second = std::string(249, 'x') + "y";
  for (const auto& label : {first, second}) {
    auto r = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label " + label + " --tasks 1 --launcher local --no-mpirun -q -- true",
                           in_folder(dir.path()));
    EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  const auto plan = plan_of(dir / "runs");
  ASSERT_EQ(plan.entries.size(), 2u);
  EXPECT_NE(plan.entries[0].run_id, plan.entries[1].run_id);
  for (const auto& e : plan.entries) {
    SCOPED_TRACE(e.run_id);
    EXPECT_EQ(e.state, scalelens::sweep::State::done) << e.note;
    EXPECT_LE(e.run_id.size(), 200u);
    EXPECT_EQ(e.run_id.rfind(std::string(151, 'x') + ".", 0), 0u) << "the label's beginning, then its hash";
    EXPECT_TRUE(fs::exists(dir / "runs" / e.run_id / "scalelens.json"));
  }
  EXPECT_EQ(plan.entries[0].label, first) << "the label itself is kept whole";
  EXPECT_EQ(plan.entries[1].label, second);
}

// A fresh sweep took a folder already named like its entry as the entry's done run, though it held
// another label's run at another world size: the command never ran, exit 0, "1 done".
TEST(SweepCli, AFolderOfAnotherRunIsNotTakenAsTheEntrysRun) {
  ScratchDir dir;
  const std::string study = quoted(dir / "runs");
  // Runs as `scalelens run` writes them: another label, and this label at another world size.
  auto old = run_scalelens("run --study " + study + " --label old --run-id ddp-1n1t-r1 --world-size 8 -q -- true");
  ASSERT_EQ(old.exit_code, 0) << old.err;
  auto wider = run_scalelens("run --study " + study + " --label ddp --run-id ddp-1n1t-r2 --world-size 2 -q -- true");
  ASSERT_EQ(wider.exit_code, 0) << wider.err;
  const std::string cmd = "sh -c 'echo {repeat} >> ran.txt'";
  auto r = run_scalelens("sweep --study " + study + " --label ddp --tasks 1 --repeats 2 --launcher local --no-mpirun -- " + cmd,
                         in_folder(dir.path()));
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;
  EXPECT_FALSE(fs::exists(dir / "ran.txt")) << "nothing ran";
  auto plan = plan_of(dir / "runs");
  ASSERT_EQ(plan.entries.size(), 2u);
  for (const auto& e : plan.entries) EXPECT_EQ(e.state, scalelens::sweep::State::failed) << e.run_id;
  EXPECT_NE(plan.entries[0].note.find("holds a run of label 'old', world size 8, not this entry's ('ddp', 1 GPU)"), std::string::npos)
      << plan.entries[0].note;
  EXPECT_NE(plan.entries[1].note.find("holds a run of label 'ddp', world size 2, not this entry's ('ddp', 1 GPU)"), std::string::npos)
      << plan.entries[1].note;
  EXPECT_NE(r.out.find("not taken as its run"), std::string::npos) << r.out;
  // --resume moves them aside and runs the entries.
  auto again = run_scalelens("sweep --study " + study + " --resume -q");
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(read(dir / "ran.txt"), "1\n2\n");
  for (const auto& e : plan_of(dir / "runs").entries) EXPECT_EQ(e.state, scalelens::sweep::State::done) << e.run_id;
  EXPECT_TRUE(fs::exists(dir / "runs/.sweep/attempts/ddp-1n1t-r1.1/scalelens.json"));
}

// A later call rewrote the plan's settings (its mpirun flag, its run args) for every entry, so a
// --resume reran an entry planned with --no-mpirun under mpirun; --resume and --status dropped a
// label, sizes and a command without a word.
TEST(SweepCli, OptionsThatAreNotThePlansAreRefusedNamingWhatDiffers) {
  ScratchDir dir;
  const std::string study = quoted(dir / "runs");
  auto r = run_scalelens("sweep --study " + study + " --label a --tasks 2 --launcher local --no-mpirun -q -- sh -c 'exit 1'",
                         in_folder(dir.path()));
  ASSERT_EQ(r.exit_code, 5) << r.out << r.err;
  const std::string planned = read(dir / "runs/sweep.json");
  auto mpirun = run_scalelens("sweep --study " + study + " --label a --tasks 1 --launcher local -q -- true");
  EXPECT_EQ(mpirun.exit_code, 1) << mpirun.out << mpirun.err;
  EXPECT_NE(mpirun.err.find("--no-mpirun: the plan's commands run as given, this call's under mpirun"), std::string::npos) << mpirun.err;
  auto args = run_scalelens("sweep --study " + study + " --label a --tasks 1 --launcher local --no-mpirun --run-args "
                            "'--global-batch-size 64' -q -- true");
  EXPECT_EQ(args.exit_code, 1) << args.out << args.err;
  EXPECT_NE(args.err.find("--run-args (with --mpi-comm): the plan's none, this call's --global-batch-size 64"), std::string::npos)
      << args.err;
  EXPECT_EQ(read(dir / "runs/sweep.json"), planned) << "the plan is as it was";

  for (const char* mode : {"--resume", "--status"}) {
    auto dropped = run_scalelens("sweep --study " + study + " " + mode + " --label zzz --tasks 8 -- touch made.txt", in_folder(dir.path()));
    EXPECT_EQ(dropped.exit_code, 1) << mode << dropped.out << dropped.err;
    EXPECT_NE(dropped.err.find(std::string(mode) + " takes the plan as it is in sweep.json; --label, --tasks, the command would not apply"),
              std::string::npos)
        << dropped.err;
  }
  EXPECT_FALSE(fs::exists(dir / "made.txt"));
  EXPECT_EQ(read(dir / "runs/sweep.json"), planned);
  // With the plan's settings, a later size is planned.
  auto more = run_scalelens("sweep --study " + study + " --label a --tasks 1 --launcher local --no-mpirun -q -- true");
  EXPECT_EQ(more.exit_code, 5) << more.out << more.err;  // the first entry still failed
  EXPECT_EQ(plan_of(dir / "runs").entries.size(), 2u);
}

// A local sweep of 2 nodes ran on this one machine and was shown as a 2-node run, done.
TEST(SweepCli, ALocalSweepOfMoreThanOneNodeIsRefused) {
  ScratchDir dir;
  auto r = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label n --nodes 1,2 --tasks-per-node 2 --launcher local -- true");
  EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
  EXPECT_NE(r.err.find("--launcher local runs on this machine only: 2 nodes cannot be (--tasks 4 is the same tasks on one node"),
            std::string::npos)
      << r.err;
  EXPECT_FALSE(fs::exists(dir / "runs/sweep.json"));
  auto one = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label n --nodes 1 --launcher local --no-mpirun -q -- true",
                           in_folder(dir.path()));
  EXPECT_EQ(one.exit_code, 0) << one.out << one.err;
  EXPECT_EQ(run_folders(dir / "runs"), (std::set<std::string>{"n-1n1t-r1"}));
}

TEST(SweepCli, CommandsRunWhereTheSweepWasPlannedAlsoOnResumeFromElsewhere) {
  ScratchDir dir;
  const auto work = dir / "work";
  fs::create_directories(work);
  // Relative paths, as in `python train.py`: they name files of the folder the sweep was planned in.
  const std::string cmd = "sh -c 'test -e go && pwd > ran-here'";
  auto r = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label w --tasks 1 --launcher local --no-mpirun -q -- " + cmd,
                         in_folder(work));
  EXPECT_EQ(r.exit_code, 5) << r.out << r.err;  // no ./go yet
  std::ofstream(work / "go") << "x";
  // Resumed from another folder (run_command's own): the command still runs in `work`.
  auto again = run_scalelens("sweep --study " + quoted(dir / "runs") + " --resume -q");
  EXPECT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(plan_of(dir / "runs").entries.at(0).state, scalelens::sweep::State::done);
  EXPECT_EQ(read(work / "ran-here"), fs::canonical(work).string() + "\n");

  // The folder gone: refused before anything runs, and --workdir names another.
  fs::remove_all(work);
  auto gone = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label w --tasks 2 --launcher local --no-mpirun -q -- " + cmd);
  EXPECT_EQ(gone.exit_code, 2);
  EXPECT_NE(gone.err.find(work.string() + ", where this sweep's commands run, is not a folder"), std::string::npos) << gone.err;
  EXPECT_NE(gone.err.find("--workdir"), std::string::npos) << gone.err;
  EXPECT_FALSE(fs::exists(dir / "runs/w-1n2t-r1"));
  const auto other = dir / "other";
  fs::create_directories(other);
  std::ofstream(other / "go") << "x";
  auto moved = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label w --tasks 2 --launcher local --no-mpirun -q --workdir " +
                             quoted(other) + " -- " + cmd);
  EXPECT_EQ(moved.exit_code, 0) << moved.out << moved.err;
  EXPECT_EQ(read(other / "ran-here"), fs::canonical(other).string() + "\n") << "the planned size ran in --workdir";
  EXPECT_EQ(plan_of(dir / "runs").workdir, other.string());

  // A plan written before the folder was kept: --status from elsewhere does not pin it there.
  dir.write("old/sweep.json", R"({"schema": "scalelens.sweep/1", "launcher": "local", "entries": []})");
  auto status = run_scalelens("sweep --study " + quoted(dir / "old") + " --status");
  EXPECT_EQ(status.exit_code, 0) << status.err;
  EXPECT_EQ(plan_of(dir / "old").workdir, "");
}

TEST(SweepCli, NextMeasuresTheSizeTheScalingModelSuggestsOrSaysWhyNot) {
  ScratchDir dir;
  // An Amdahl curve, 10 s + 90 s / p per epoch, at 1..8 GPUs, 3 repeats with 2% noise.
  std::mt19937_64 rng(1);
  std::normal_distribution<double> noise(0, 0.02);
  for (int p : {1, 2, 4, 8})
    for (int r = 0; r < 3; ++r) {
      const double t = (10 + 90.0 / p) * (1 + noise(rng));
      const auto ns = [](double s) { return static_cast<std::int64_t>(1e9 + s * 1e9); };
      const std::string run = fmt::format("runs/ddp-{}-{}", p, r);
      dir.write(run + "/scalelens.json",
                fmt::format(R"({{"schema": "scalelens.run/1", "run_id": "ddp-{}-{}", "label": "ddp", "world_size": {}, "nodes": 1, )"
                            R"("gpus_per_node": {}, "start_ns": 1000000000, "end_ns": {}, "status": "complete"}})",
                            p, r, p, p, ns(4 * t)));
      std::string csv = "rank,epoch,start_ns,end_ns,samples\n";
      for (int e = 0; e < 4; ++e) csv += fmt::format("0,{},{},{},1000\n", e, ns(e * t), ns((e + 1) * t));
      dir.write(run + "/epochs.csv", csv);
    }
  auto r = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label ddp --next --target-gpus 64 --launcher local --dry-run "
                         "--no-mpirun -- ./train --gpus {gpus}");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  // The size it names is measured: its command line, with the size filled in.
  const auto said = r.out.find("suggests measuring ");
  ASSERT_NE(said, std::string::npos) << r.out;
  const int p = std::stoi(r.out.substr(said + 19));
  EXPECT_GT(p, 8);
  EXPECT_LT(p, 64);
  EXPECT_NE(r.out.find(fmt::format("--run-id ddp-1n{}t-r1 --world-size {} -q -- ./train --gpus {}", p, p, p)), std::string::npos) << r.out;
  // A label the study does not hold: refused with the reason.
  auto none = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label fsdp --next --target-gpus 64 --launcher local "
                            "--dry-run -- ./train");
  EXPECT_EQ(none.exit_code, 2);
  EXPECT_NE(none.err.find("no measured curve labelled 'fsdp'"), std::string::npos) << none.err;
}

#ifdef SCALELENS_MPI_TRAIN
const std::string kTrain = std::string(SCALELENS_MPI_TRAIN) + " --mode strong --epochs 2 --samples 4096";

TEST(SweepCli, LocalSweepOfTheMpiExampleFillsTheStudyAndResumesOnlyWhatIsMissing) {
  ScratchDir dir;
  ScratchDir mpi_tmp;
  const std::string env = private_mpi_env(mpi_tmp) + MPIRUN_ENV;
  auto r = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label mpi --tasks 1,2 --repeats 2 --launcher local --mpi-comm "
                         "--run-args '--global-batch-size 256' --report-dir " + quoted(dir / "report") + " -q -- " + kTrain,
                         in_folder(dir.path()) + env);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  EXPECT_EQ(run_folders(dir / "runs"), (std::set<std::string>{"mpi-1n1t-r1", "mpi-1n1t-r2", "mpi-1n2t-r1", "mpi-1n2t-r2"}));
  auto s = report_of((dir / "runs").string());
  ASSERT_EQ(s.configurations.size(), 2u);
  for (const auto& c : s.configurations) EXPECT_EQ(c.runs, 2u) << c.key();
  EXPECT_TRUE(s.configurations[1].computation_score) << "--mpi-comm reached scalelens run";
  EXPECT_TRUE(fs::exists(dir / "report/summary.json"));

  const auto kept = read(dir / "runs/mpi-1n1t-r1/scalelens.json");
  fs::remove_all(dir / "runs/mpi-1n2t-r2");
  auto again = run_scalelens("sweep --study " + quoted(dir / "runs") + " --resume -q", env);
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  EXPECT_EQ(run_folders(dir / "runs").size(), 4u);
  EXPECT_EQ(read(dir / "runs/mpi-1n1t-r1/scalelens.json"), kept);
}
#endif

// `sweep --status` until nothing is queued or running (at most `seconds`).
// The sweep's job logs (everything in .sweep but the job scripts), for a failure's message: a job
// that SLURM reports failed says why only there.
std::string job_logs(const fs::path& study) {
  std::string out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(study / ".sweep", ec)) {
    if (!e.is_regular_file() || e.path().extension() == ".sh") continue;
    std::string text = read(e.path());
    if (text.size() > 3000) text = "..." + text.substr(text.size() - 3000);
    out += "\n== " + e.path().filename().string() + "\n" + text;
  }
  return out;
}

void wait_idle(const fs::path& study, int seconds = 120) {
  for (int i = 0; i < seconds * 5; ++i) {
    auto plan = plan_of(study);
    bool busy = false;
    for (const auto& e : plan.entries) busy |= scalelens::sweep::in_flight(e.state);
    if (!busy) return;
    run_scalelens("sweep --study " + quoted(study) + " --status");
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
  FAIL() << "the sweep did not end in " << seconds << " s";
}

#ifdef SCALELENS_MPI_TRAIN
TEST(SweepSlurm, ASweepWaitsForItsJobsAndReportsTwoConfigurationsOfTwoRuns) {
  SCALELENS_REQUIRE_SLURM();
  ScratchDir dir;
  auto r = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label mpi --tasks 1,2 --repeats 2 --launcher slurm "
                         "--srun=--mpi=pmix --mpi-comm --wait --poll 0.5 --run-args '--global-batch-size 256' --report-dir " +
                         quoted(dir / "report") + " -q -- " + kTrain,
                         in_folder(dir.path()) + MPIRUN_ENV);
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err << read(dir / "runs/.sweep/mpi-1n1t-r1.sh");
  EXPECT_EQ(run_folders(dir / "runs").size(), 4u);
  std::set<std::string> jobs;
  for (const auto& e : plan_of(dir / "runs").entries) {
    SCOPED_TRACE(e.run_id);
    EXPECT_EQ(e.state, scalelens::sweep::State::done);
    simdjson::dom::parser parser;
    simdjson::dom::element m = parser.load((dir / "runs" / e.run_id / "scalelens.json").string());
    EXPECT_EQ(std::string_view(m["scheduler"]["kind"]), "slurm");
    EXPECT_EQ(std::string(std::string_view(m["scheduler"]["job_id"])), e.job_id);
    EXPECT_FALSE(m["scheduler"]["step_id"].error());
    EXPECT_EQ(std::string_view(m["system"]), "scalelens-test");  // the cluster's name
    EXPECT_EQ(int64_t(m["world_size"]), e.tasks);
    jobs.insert(e.job_id);
  }
  EXPECT_EQ(jobs.size(), 4u) << "one job per run";
  auto s = report_of((dir / "runs").string());
  ASSERT_EQ(s.configurations.size(), 2u);
  for (const auto& c : s.configurations) EXPECT_EQ(c.runs, 2u) << c.key();
  EXPECT_TRUE(fs::exists(dir / "report/report.html"));
}
#endif

TEST(SweepSlurm, ACancelledJobIsResubmittedAndNothingRunsTwice) {
  SCALELENS_REQUIRE_SLURM();
  ScratchDir dir;
  const auto hold = dir / "hold";
  std::ofstream(hold) << "x";
  // Each job waits while the hold file exists.
  const std::string cmd = fmt::format("sh -c 'while [ -e {} ]; do sleep 0.2; done'", hold.string());
  // Planned in `dir`: the jobs start there, also those that start after this command's own
  // scratch folder is gone.
  auto r = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label wait --tasks 1 --repeats 2 --launcher slurm -q -- " + cmd,
                         in_folder(dir.path()));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  auto plan = plan_of(dir / "runs");
  ASSERT_EQ(plan.entries.size(), 2u);
  const std::string cancelled = plan.entries[0].job_id, kept = plan.entries[1].job_id;
  ASSERT_FALSE(cancelled.empty());
  ASSERT_EQ(run_command("scancel " + cancelled).exit_code, 0);
  std::this_thread::sleep_for(std::chrono::seconds(1));
  fs::remove(hold);
  wait_idle(dir / "runs");
  plan = plan_of(dir / "runs");
  EXPECT_EQ(plan.entries[0].state, scalelens::sweep::State::cancelled) << plan.entries[0].note << job_logs(dir / "runs");
  EXPECT_EQ(plan.entries[1].state, scalelens::sweep::State::done) << plan.entries[1].note << job_logs(dir / "runs");

  auto again = run_scalelens("sweep --study " + quoted(dir / "runs") + " --resume --wait --poll 0.5 -q");
  ASSERT_EQ(again.exit_code, 0) << again.out << again.err;
  plan = plan_of(dir / "runs");
  EXPECT_EQ(plan.entries[0].state, scalelens::sweep::State::done);
  EXPECT_NE(plan.entries[0].job_id, cancelled) << "resubmitted";
  EXPECT_EQ(plan.entries[1].job_id, kept) << "a finished run is never submitted again";
  EXPECT_EQ(run_folders(dir / "runs"), (std::set<std::string>{"wait-1n1t-r1", "wait-1n1t-r2"}));
}

// Two nodes asked of the private cluster's one: SLURM keeps the job PENDING with reason
// PartitionNodeLimit for ever. --wait said nothing and never returned, --status showed no reason.
TEST(SweepSlurm, WaitStopsOnAJobSlurmWillNeverStartAndStatusSaysWhy) {
  SCALELENS_REQUIRE_SLURM();
  ScratchDir dir;
  auto r = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label big --nodes 2 --launcher slurm --wait --poll 0.5 -- true",
                         in_folder(dir.path()) + " timeout 60");
  auto status = run_scalelens("sweep --study " + quoted(dir / "runs") + " --status");
  const auto plan = plan_of(dir / "runs");
  ASSERT_EQ(plan.entries.size(), 1u);
  const std::string job = plan.entries[0].job_id;
  ASSERT_FALSE(job.empty());
  EXPECT_EQ(run_command("scancel " + job).exit_code, 0);
  EXPECT_EQ(r.exit_code, 1) << "124: still waiting after 60 s\n" << r.out << r.err;
  const std::string why = "big-2n2t-r1 (job " + job + "): SLURM: PENDING (PartitionNodeLimit): it can never start as submitted";
  EXPECT_NE(r.out.find(why), std::string::npos) << "the progress says why it waits\n" << r.out;
  EXPECT_NE(r.err.find("--wait stops: SLURM will not start these jobs as submitted"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find(why), std::string::npos) << r.err;
  EXPECT_NE(status.out.find("SLURM: PENDING (PartitionNodeLimit): it can never start as submitted"), std::string::npos) << status.out;
  EXPECT_EQ(plan.entries[0].state, scalelens::sweep::State::submitted) << "still in the queue until cancelled";
}

// A reason that clears (a user's hold) is shown while the job waits, and gone once it runs.
TEST(SweepSlurm, AHeldJobShowsItsReasonUntilItRuns) {
  SCALELENS_REQUIRE_SLURM();
  ScratchDir dir;
  const auto hold = dir / "hold";
  std::ofstream(hold) << "x";
  const std::string cmd = fmt::format("sh -c 'while [ -e {} ]; do sleep 0.2; done'", hold.string());
  auto r = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label h --tasks 1 --launcher slurm --sbatch=--hold -q -- " + cmd,
                         in_folder(dir.path()));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string job = plan_of(dir / "runs").entries.at(0).job_id;
  auto status = run_scalelens("sweep --study " + quoted(dir / "runs") + " --status");
  EXPECT_NE(status.out.find("SLURM: PENDING (JobHeldUser)\n"), std::string::npos) << status.out;
  ASSERT_EQ(run_command("scontrol release " + job).exit_code, 0);
  scalelens::sweep::Entry e;
  for (int i = 0; i < 150 && e.state != scalelens::sweep::State::running; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    run_scalelens("sweep --study " + quoted(dir / "runs") + " --status");
    e = plan_of(dir / "runs").entries.at(0);
  }
  EXPECT_EQ(e.state, scalelens::sweep::State::running) << e.note;
  EXPECT_EQ(e.note, "") << "the reason it waited is over";
  fs::remove(hold);
  wait_idle(dir / "runs");
  EXPECT_EQ(plan_of(dir / "runs").entries.at(0).state, scalelens::sweep::State::done) << job_logs(dir / "runs");
}

// Where squeue gave no answer (the controller down, squeue not installed) --status said nothing of
// it and exited 0, and without sbatch on PATH it refused to look ("sbatch is not on PATH"). Now it
// names squeue's failure in squeue's words, shows the jobs as last known (none taken as ended) and
// exits 1: whether a run failed is not known.
TEST(SweepSlurm, StatusSaysWhySqueueGaveNoAnswerAndTakesNoJobAsEnded) {
  SCALELENS_REQUIRE_SLURM();
  ScratchDir dir;
  auto r = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label h --tasks 1,2 --launcher slurm --sbatch=--hold -q -- true",
                         in_folder(dir.path()));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  std::string jobs;
  for (const auto& e : plan_of(dir / "runs").entries) jobs += " " + e.job_id;
  // The controller down, as its clients see it: this cluster's configuration with the controller
  // at a port where none listens (MessageTimeout=1: squeue gives up at once, not after 18 s).
  std::string conf;
  std::istringstream cluster(read(std::getenv("SLURM_CONF")));
  for (std::string line; std::getline(cluster, line);)
    if (line.rfind("SlurmctldPort=", 0) != 0 && line.rfind("MessageTimeout=", 0) != 0) conf += line + "\n";
  const auto down = dir.write("down.conf", conf + "SlurmctldPort=1\nMessageTimeout=1\n");
  const std::map<std::string, std::string> cases = {
      {"SLURM_CONF=" + quoted(down), "scalelens sweep: squeue exited with 1: slurm_load_jobs error: Unable to contact slurm controller"},
      {"PATH=" + quoted(dir / "empty"), "scalelens sweep: squeue could not be started: squeue: No such file or directory; the jobs in "
                                        "flight are shown as last known\n"}};
  for (const auto& [env, said] : cases) {
    SCOPED_TRACE(env);
    auto status = run_scalelens("sweep --study " + quoted(dir / "runs") + " --status", env);
    EXPECT_EQ(status.exit_code, 1) << status.out << status.err;
    EXPECT_EQ(status.err.rfind(said, 0), 0u) << status.err;
    EXPECT_NE(status.out.find("2 submitted\n"), std::string::npos) << status.out;
    for (const auto& e : plan_of(dir / "runs").entries) EXPECT_EQ(e.state, scalelens::sweep::State::submitted) << e.run_id << ": " << e.note;
  }
  EXPECT_EQ(run_command("scancel" + jobs).exit_code, 0);
}

// docs/sweep.md's template line "#SBATCH --output={study}/.sweep/{run_id}.%j.out" with a study path
// holding a space: {study} went in unquoted, sbatch refused the directive, and the sweep still said
// "Submitted" with a --status command that named another study ("my").
TEST(SweepSlurm, ATemplateStudyPathWithASpaceStaysOneWord) {
  SCALELENS_REQUIRE_SLURM();
  ScratchDir dir;
  const auto study = dir / "my study";
  auto tmpl = dir.write("site.sbatch", "#!/bin/bash\n#SBATCH --nodes={nodes}\n#SBATCH --ntasks-per-node=1\n"
                                       "#SBATCH --output={study}/.sweep/{run_id}.%j.out\nsrun {scalelens_run}\n");
  auto r = run_scalelens("sweep --study " + quoted(study) + " --label t --tasks 1 --launcher slurm --template " + quoted(tmpl) +
                             " --wait --poll 0.5 -- sh -c 'echo hi'",
                         in_folder(dir.path()) + " timeout 60");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto plan = plan_of(study);
  ASSERT_EQ(plan.entries.size(), 1u);
  EXPECT_EQ(plan.entries[0].state, scalelens::sweep::State::done) << plan.entries[0].note;
  const auto log = study / ".sweep" / ("t-1n1t-r1." + plan.entries[0].job_id + ".out");
  EXPECT_NE(read(log).find("hi"), std::string::npos) << "the job's output where the template put it\n" << job_logs(study);
  EXPECT_NE(r.out.find("scalelens sweep --study '" + study.string() + "' --status"), std::string::npos) << r.out;
  auto dry = run_scalelens("sweep --study " + quoted(study) + " --label t --tasks 2 --launcher slurm --template " + quoted(tmpl) +
                           " --dry-run -- true");
  EXPECT_NE(dry.out.find("#SBATCH --output='" + study.string() + "'/.sweep/t-1n2t-r1.%j.out\n"), std::string::npos) << dry.out;
}

TEST(SweepSlurm, SbatchOptionsGetTheEntrysPlaceholders) {
  SCALELENS_REQUIRE_SLURM();
  ScratchDir dir;
  auto r = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label s --tasks 2 --launcher slurm --sbatch "
                         "'--comment=gpus-{gpus} --hold' -q -- true",
                         in_folder(dir.path()));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string job = plan_of(dir / "runs").entries.at(0).job_id;
  ASSERT_FALSE(job.empty());
  auto shown = run_command("scontrol show job " + job);
  EXPECT_EQ(run_command("scancel " + job).exit_code, 0);
  EXPECT_NE(shown.out.find("Comment=gpus-2"), std::string::npos) << shown.out;
}

TEST(SweepSlurm, SrunAroundScalelensRunRecordsEveryRankAndForwardsScancel) {
  SCALELENS_REQUIRE_SLURM();
  ScratchDir dir;
  // Two tasks under a real srun: one run folder, ranks 0 and 1 with SLURM's ids.
  auto r = run_command("srun -n 2 " SCALELENS_BIN " run --study " + quoted(dir / "runs") + " --label srun -q -- true");
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const auto folders = run_folders(dir / "runs");
  ASSERT_EQ(folders.size(), 1u);
  const auto run = dir / "runs" / *folders.begin();
  simdjson::dom::parser parser;
  simdjson::dom::element m = parser.load((run / "scalelens.json").string());
  EXPECT_EQ(int64_t(m["world_size"]), 2);
  EXPECT_EQ(std::string_view(m["detected_from"]["rank"]), "SLURM_PROCID");
  EXPECT_EQ(std::string_view(m["detected_from"]["world_size"]), "SLURM_STEP_NUM_TASKS");
  for (int rank : {0, 1}) {
    simdjson::dom::parser p;
    simdjson::dom::element rr = p.load((run / "ranks" / (std::to_string(rank) + ".json")).string());
    EXPECT_EQ(int64_t(rr["rank"]), rank);
    EXPECT_FALSE(rr["local_rank"].error());
  }

  // scancel of a batch job: the wrapper forwards the signal and still completes its manifest.
  auto job = run_command("sbatch --parsable -n 1 --chdir=" + quoted(dir.path()) + " --output=" + quoted(dir / "job.out") + " --wrap " +
                         quoted(fs::path(std::string("srun ") + SCALELENS_BIN + " run --study " + (dir / "cancel").string() + " --label c -q -- sleep 60")));
  ASSERT_EQ(job.exit_code, 0) << job.err;
  const std::string id(job.out.substr(0, job.out.find_first_of(";\n")));
  for (int i = 0; i < 100 && !fs::exists(dir / "cancel"); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  std::this_thread::sleep_for(std::chrono::seconds(1));
  ASSERT_EQ(run_command("scancel " + id).exit_code, 0);
  bool complete = false;
  for (int i = 0; i < 150 && !complete; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    for (const auto& f : fs::exists(dir / "cancel") ? run_folders(dir / "cancel") : std::set<std::string>{})
      complete |= read(dir / "cancel" / f / "scalelens.json").find("\"status\":\"complete\"") != std::string::npos;
  }
  EXPECT_TRUE(complete) << read(dir / "job.out");
}

// `scalelens run` straight in the script of `sbatch -n 2` (SLURM's batch step: one process, no
// srun) recorded world size 2 from SLURM_NTASKS. Now 1, with a warning naming SLURM_NTASKS; srun
// started from the script by the wrapper runs the job's 2 tasks and is recorded so.
TEST(SweepSlurm, RunInTheBatchStepIsOneProcessAndSrunFromItTheJobsTasks) {
  SCALELENS_REQUIRE_SLURM();
  ScratchDir dir;
  const std::string run = std::string(SCALELENS_BIN) + " run --gpu-source none --study " + (dir / "runs").string();
  const std::string script = run + " --label plain -- true && " + run + " --label srun -q -- srun true";
  auto job = run_command("sbatch --wait -n 2 --chdir=" + quoted(dir.path()) + " --output=" + quoted(dir / "job.out") + " --wrap " +
                         quoted(fs::path(script)));
  ASSERT_EQ(job.exit_code, 0) << job.err << read(dir / "job.out");
  std::map<std::string, fs::path> runs;
  for (const auto& f : run_folders(dir / "runs")) runs[f.substr(0, f.find('-'))] = dir / "runs" / f;
  ASSERT_EQ(runs.size(), 2u) << read(dir / "job.out");
  simdjson::dom::parser parser;
  simdjson::dom::element plain = parser.load((runs["plain"] / "scalelens.json").string());
  EXPECT_EQ(int64_t(plain["world_size"]), 1) << read(dir / "job.out");
  EXPECT_EQ(std::string_view(plain["detected_from"]["world_size"]), "one process: SLURM's batch step runs the command once");
  EXPECT_EQ(std::string_view(plain["scheduler"]["kind"]), "slurm");
  EXPECT_NE(read(dir / "job.out").find("warning: SLURM_NTASKS=2 counts the job's tasks, but this wrapper runs in the job's batch step"),
            std::string::npos)
      << read(dir / "job.out");
  simdjson::dom::parser p2;
  simdjson::dom::element srun = p2.load((runs["srun"] / "scalelens.json").string());
  EXPECT_EQ(int64_t(srun["world_size"]), 2) << read(dir / "job.out");
  EXPECT_EQ(std::string_view(srun["detected_from"]["world_size"]), "SLURM_NTASKS (the job's tasks, which srun starts)");
}

}  // namespace

// A label with line breaks split the job script's comment line: the rest became a command (here
// one that writes a file) and ended the #SBATCH header. In scripts the label is one line, and
// shell-quoted where a template puts it in a command.
TEST(SweepCli, ALabelWithLineBreaksStaysOneLineOfTheJobScript) {
  ScratchDir dir;
  const std::string label = "ddp\ntouch " + (dir / "injected").string() + "\n#";
  auto ours = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label " + quoted(fs::path(label)) +
                            " --nodes 2 --launcher slurm --dry-run -- ./train");
  ASSERT_EQ(ours.exit_code, 0) << ours.err;
  auto tmpl = dir.write("site.sbatch", "#!/bin/bash\n#SBATCH --comment={label}\necho {label}\n{scalelens_run}\n");
  auto site = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label " + quoted(fs::path(label)) +
                            " --nodes 2 --launcher slurm --dry-run --template " + quoted(tmpl) + " -- ./train");
  ASSERT_EQ(site.exit_code, 0) << site.err;
  for (const std::string& out : {ours.out, site.out}) {
    const auto script = out.substr(out.find('\n', out.find("# ---- ")) + 1);
    std::size_t last_sbatch = 0, first_command = std::string::npos, at = 0;
    for (std::size_t n = 0; at < script.size(); ++n) {
      const auto end = script.find('\n', at);
      const auto line = script.substr(at, end - at);
      EXPECT_NE(line.rfind("touch ", 0), 0u) << "a line of the label became a command:\n" << script;
      if (line.rfind("#SBATCH", 0) == 0) last_sbatch = n;
      else if (!line.empty() && line[0] != '#' && first_command == std::string::npos) first_command = n;
      if (end == std::string::npos) break;
      at = end + 1;
    }
    EXPECT_LT(last_sbatch, first_command) << "every #SBATCH line before the first command:\n" << script;
    auto file = dir.write("job.sh", script);
    EXPECT_EQ(run_command("bash -n " + quoted(file)).exit_code, 0) << script;
  }
  EXPECT_NE(site.out.find("echo 'ddp touch "), std::string::npos) << site.out;
}

// --status once waited for ever on a sweep.json that is a FIFO, and read a link to /dev/zero until
// memory ran out: the state file is read only when it is a regular file, and the refusal names it.
// 20,000 sizes × 1,000 repeats planned 20 million entries (7 GB within a minute, --dry-run too).
TEST(SweepCli, APlanOfMoreRunsThanAnyoneWaitsForIsAUsageError) {
  ScratchDir dir;
  std::string sizes;
  for (int t = 1; t <= 200; ++t) sizes += (t > 1 ? "," : "") + std::to_string(t);
  auto r = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label x --tasks " + sizes +
                         " --repeats 1000 --dry-run --launcher local -- true", "timeout 20");
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_NE(r.err.find("200000 runs (200 sizes × 1000 repeats) are more than a sweep plans (at most 100000)"), std::string::npos) << r.err;
}

TEST(SweepCli, AStateFileThatIsAPipeOrADeviceIsRefusedByName) {
  ScratchDir dir;
  fs::create_directories(dir / "fifo");
  ASSERT_EQ(::mkfifo((dir / "fifo/sweep.json").c_str(), 0644), 0);
  fs::create_directories(dir / "zero");
  fs::create_symlink("/dev/zero", dir / "zero/sweep.json");
  for (const auto& [study, kind] : {std::pair{"fifo", "a named pipe (FIFO)"}, std::pair{"zero", "a character device"}}) {
    auto r = run_scalelens("sweep --study " + quoted(dir / study) + " --status", "timeout 20");
    EXPECT_EQ(r.exit_code, 2) << r.err;
    EXPECT_NE(r.err.find((dir / study / "sweep.json").string() + ": " + kind + ", not a regular file"), std::string::npos) << r.err;
  }
  // A run folder's manifest in the same state: the entry failed, its note naming the file (it was
  // silently left in its old state).
  const auto runs = dir / "runs";
  auto done = run_scalelens("sweep --study " + quoted(runs) + " --label sh --tasks 1 --launcher local --no-mpirun -q -- true",
                            in_folder(dir.path()));
  ASSERT_EQ(done.exit_code, 0) << done.out << done.err;
  fs::path manifest;
  for (const auto& e : fs::directory_iterator(runs))
    if (fs::exists(e.path() / "scalelens.json")) manifest = e.path() / "scalelens.json";
  ASSERT_FALSE(manifest.empty());
  fs::remove(manifest);
  ASSERT_EQ(::mkfifo(manifest.c_str(), 0644), 0);
  auto status = run_scalelens("sweep --study " + quoted(runs) + " --status", "timeout 20");
  EXPECT_EQ(status.exit_code, 5) << status.out << status.err;
  EXPECT_NE(status.out.find("failed"), std::string::npos) << status.out;
  EXPECT_NE(status.out.find("a named pipe (FIFO), not a regular file"), std::string::npos) << status.out;
}

// --status exited 0 with failed runs (the exit codes say 5: some run failed), and on a study it
// could not write it failed with "cannot write" instead of showing what it knows. It only looks:
// sweep.json is rewritten when something changed and the study can be written.
TEST(SweepCli, StatusExitsFiveOnAFailedRunAndOnlyLooksAtAReadOnlyStudy) {
  ScratchDir dir;
  const auto study = dir / "runs";
  auto r = run_scalelens("sweep --study " + quoted(study) + " --label sh --tasks 1 --launcher local --no-mpirun -q -- sh -c 'exit 3'",
                         in_folder(dir.path()));
  ASSERT_EQ(r.exit_code, 5) << r.out << r.err;
  const auto plan_file = study / "sweep.json";
  struct stat before {}, after {};
  ASSERT_EQ(::stat(plan_file.c_str(), &before), 0);
  auto status = run_scalelens("sweep --study " + quoted(study) + " --status");
  EXPECT_EQ(status.exit_code, 5) << status.out << status.err;
  ASSERT_EQ(::stat(plan_file.c_str(), &after), 0);
  EXPECT_EQ(before.st_ino, after.st_ino) << "nothing changed: sweep.json is not rewritten";

  // The plan still says running; the run folder says it failed; the study is read-only to us.
  ASSERT_TRUE(rewrite_first(plan_file, "\"state\":\"failed\"", "\"state\":\"running\"")) << read(plan_file);
  const auto text = read(plan_file);
  auto looked = status_read_only(study);
  EXPECT_EQ(looked.exit_code, 5) << looked.out << looked.err;
  EXPECT_EQ(looked.err, "");
  const auto row = looked.out.find("sh-1n1t-r1");
  ASSERT_NE(row, std::string::npos) << looked.out;
  EXPECT_NE(looked.out.substr(row, looked.out.find('\n', row) - row).find("failed"), std::string::npos) << looked.out;
  EXPECT_EQ(read(plan_file), text) << "a read-only study is left as it was";
  // Writable again: what --status learnt is kept.
  EXPECT_EQ(run_scalelens("sweep --study " + quoted(study) + " --status").exit_code, 5);
  EXPECT_NE(read(plan_file).find("\"state\":\"failed\""), std::string::npos);
}

// A new study in a folder the user may not write in was "sweep.lock: cannot create the sampler
// lock: No such file or directory". Now sweep and run name the study folder and why it cannot be
// made, and nothing runs.
TEST(SweepCli, ANewStudyWhereNoFolderCanBeMadeIsNamedWithTheReason) {
  ScratchDir dir;
  fs::create_directories(dir / "locked");
  fs::permissions(dir / "locked", fs::perms::owner_read | fs::perms::owner_exec | fs::perms::others_read | fs::perms::others_exec);
  const std::string as_user = ::geteuid() == 0 ? "setpriv --reuid=65534 --regid=65534 --clear-groups " : "";  // root writes anywhere
  const auto study = dir / "locked" / "study";
  const std::string sweep = " sweep --study " + quoted(study) + " --label x --tasks 1 --launcher local --no-mpirun -q -- touch " +
                            quoted(dir / "ran");
  auto r = run_command(as_user + SCALELENS_BIN + sweep);
  EXPECT_EQ(r.exit_code, 1) << r.err;
  EXPECT_EQ(r.err, "scalelens sweep: " + study.string() + ": cannot create the folder: Permission denied\n");
  auto run = run_command(as_user + SCALELENS_BIN " run --study " + quoted(study) + " --gpu-source none --no-host -- touch " + quoted(dir / "ran"));
  EXPECT_EQ(run.exit_code, 1) << run.err;
  EXPECT_EQ(run.err, "scalelens run: error: " + study.string() + ": cannot create the folder: Permission denied\n");
  EXPECT_FALSE(fs::exists(dir / "ran"));
  EXPECT_FALSE(fs::exists(study));

  // A read-only file system (a small tmpfs mounted read-only; mounting needs root).
  fs::create_directories(dir / "ro");
  if (run_command("mount -t tmpfs -o ro,size=64k tmpfs " + quoted(dir / "ro")).exit_code != 0)
    GTEST_SKIP() << "cannot mount a read-only tmpfs here (not root)";
  const auto on_ro = dir / "ro" / "study";
  auto ro = run_scalelens("sweep --study " + quoted(on_ro) + " --label x --tasks 1 --launcher local --no-mpirun -q -- touch " +
                          quoted(dir / "ran"));
  auto ro_run = run_scalelens("run --study " + quoted(on_ro) + " --gpu-source none --no-host -- touch " + quoted(dir / "ran"));
  run_command("umount " + quoted(dir / "ro"));
  EXPECT_EQ(ro.exit_code, 1) << ro.err;
  EXPECT_EQ(ro.err, "scalelens sweep: " + on_ro.string() + ": cannot create the folder: Read-only file system\n");
  EXPECT_EQ(ro_run.exit_code, 1) << ro_run.err;
  EXPECT_EQ(ro_run.err, "scalelens run: error: " + on_ro.string() + ": cannot create the folder: Read-only file system\n");
  EXPECT_FALSE(fs::exists(dir / "ran"));
}

// Ctrl-C (SIGINT) or SIGTERM stops a local sweep, not only the run in progress: the run ends, is
// marked cancelled with its own status, the sizes not yet started stay planned, and the sweep exits
// 128+signal as a shell expects.
TEST(SweepCli, ASignalStopsALocalSweepAndLeavesTheRestPlanned) {
  for (int sig : {SIGINT, SIGTERM}) {
    ScratchDir dir;
    const auto err_file = dir / "err";
    const pid_t sweep = spawn_waiting_sweep(dir, err_file);
    ASSERT_TRUE(wait_for([&] { return fs::exists(dir / "started-1"); }, 10s)) << slurp(err_file);
    ::kill(sweep, sig);
    EXPECT_EQ(wait_status(sweep, 20s), 128 + sig) << slurp(err_file);
    EXPECT_FALSE(fs::exists(dir / "started-2")) << "the next size started after the signal";
    auto plan = plan_of(dir / "runs");
    ASSERT_EQ(plan.entries.size(), 3u);
    EXPECT_EQ(plan.entries[0].state, scalelens::sweep::State::cancelled) << plan.entries[0].note;
    EXPECT_EQ(plan.entries[0].exit_status, 128 + sig) << "the run's own status";
    EXPECT_EQ(plan.entries[1].state, scalelens::sweep::State::planned);
    EXPECT_EQ(plan.entries[2].state, scalelens::sweep::State::planned);
    const std::string err = slurp(err_file);
    EXPECT_NE(err.find(fmt::format("stopped by SIG{}: w-1n1t-r1 cancelled; 2 more not started", sigabbrev_np(sig))), std::string::npos) << err;
  }
}

// A local sweep marks the entry it runs as running (with its pid), holds the study's lock so that a
// second sweep can neither launch nor set aside its entries, lets --status look meanwhile, and a
// mark left by a sweep that was killed reads as stale, not running.
TEST(SweepCli, ARunningLocalSweepIsMarkedLockedAndItsMarkIsStaleOnceItDies) {
  ScratchDir dir;
  WaitingSweep running(dir, true);
  ASSERT_TRUE(running.started) << running.err();
  const pid_t sweep = running.pid;
  auto plan = plan_of(dir / "runs");
  ASSERT_EQ(plan.entries.size(), 3u);
  EXPECT_EQ(plan.entries[0].state, scalelens::sweep::State::running);
  EXPECT_EQ(plan.entries[0].pid, sweep);

  auto status = run_scalelens("sweep --study " + quoted(dir / "runs") + " --status");
  EXPECT_EQ(status.exit_code, 0) << status.err;
  const auto row = status.out.find("w-1n1t-r1");
  ASSERT_NE(row, std::string::npos) << status.out;
  EXPECT_NE(status.out.substr(row, status.out.find('\n', row) - row).find("running"), std::string::npos) << status.out;

  for (const std::string second : {"--label w --tasks 1,2,3 --launcher local --no-mpirun -- true", "--resume"}) {
    auto r = run_scalelens("sweep --study " + quoted(dir / "runs") + " " + second);
    EXPECT_EQ(r.exit_code, 1) << second << r.out << r.err;
    EXPECT_NE(r.err.find(fmt::format("another sweep (pid {} on ", sweep)), std::string::npos) << r.err;
  }
  EXPECT_FALSE(fs::exists(dir / "runs/.sweep/attempts")) << "the running entry's folder was moved away";
  EXPECT_FALSE(fs::exists(dir / "started-2"));

  // Killed: its mark is stale while its run's wrapper still waits for the command.
  running.kill();
  auto after = run_scalelens("sweep --study " + quoted(dir / "runs") + " --status");
  EXPECT_EQ(after.exit_code, 5) << after.out << after.err;
  EXPECT_NE(after.out.find(fmt::format("stale: the sweep that ran it (pid {} on", sweep)), std::string::npos) << after.out;
  EXPECT_EQ(plan_of(dir / "runs").entries[0].state, scalelens::sweep::State::failed);
}

// Stopped while its last size ran, a sweep said "w-1n1t-r1 cancelled; 0 more not started
// (--resume runs them)": only what remains is said.
TEST(SweepCli, ASignalDuringTheLastRunSaysNoZeroCountOfRunsNotStarted) {
  ScratchDir dir;
  const auto err_file = dir / "err";
  const pid_t sweep = spawn_waiting_sweep(dir, err_file, "", "1");
  ASSERT_TRUE(wait_for([&] { return fs::exists(dir / "started-1"); }, 10s)) << slurp(err_file);
  ::kill(sweep, SIGINT);
  EXPECT_EQ(wait_status(sweep, 20s), 128 + SIGINT) << slurp(err_file);
  const std::string err = slurp(err_file);
  EXPECT_NE(err.find("scalelens sweep: stopped by SIGINT: w-1n1t-r1 cancelled (--resume runs it)\n"), std::string::npos) << err;
  EXPECT_EQ(err.find("more not started"), std::string::npos) << err;
}

// A mark names its sweep by pid, start time and host. A live sweep whose sweep.lock had been
// removed (a clean-up of "stale" lock files) was "failed, stale" to --status, which took the new
// file's lock as proof that no sweep ran and wrote that into sweep.json.
TEST(SweepCli, ALiveSweepIsRunningAlsoWhereItsLockFileWasRemoved) {
  ScratchDir dir;
  const auto study = dir / "runs";
  WaitingSweep sweep(dir, false);
  ASSERT_TRUE(sweep.started) << sweep.err();
  ASSERT_EQ(plan_of(study).entries.at(0).pid, sweep.pid);
  EXPECT_FALSE(plan_of(study).entries.at(0).pid_start.empty());
  fs::remove(study / "sweep.lock");  // the kernel's lock stays with the removed file
  auto live = run_scalelens("sweep --study " + quoted(study) + " --status");
  EXPECT_EQ(live.exit_code, 0) << live.out << live.err;
  EXPECT_EQ(live.out.find("stale"), std::string::npos) << live.out;
  EXPECT_EQ(plan_of(study).entries.at(0).state, scalelens::sweep::State::running) << plan_of(study).entries.at(0).note;
}

namespace {

// A live WaitingSweep whose sweep.lock was removed while it runs (a clean-up of "stale" lock files):
// the kernel's lock stays with the removed file, so a second sweep takes the new file's.
struct LocklessSweep {
  LocklessSweep() {
    if (sweep.started) fs::remove(study / "sweep.lock");
  }
  ScratchDir dir;
  WaitingSweep sweep{dir, false};
  fs::path study = dir / "runs";
};

// Beside the live WaitingSweep in `dir` (its lock file removed), a --resume and a call that plans
// more are each refused, saying `said`: no planned size starts, sweep.json stays as it was.
void expect_nothing_launched_beside(const ScratchDir& dir, const std::string& said) {
  const auto study = dir / "runs";
  const std::string plan_before = read(study / "sweep.json");
  for (const std::string second : {"--resume", "--label v --tasks 1 --launcher local --no-mpirun -- true"}) {
    // (timeout: a size launched beside the sweep would wait 60 s)
    auto r = run_scalelens("sweep --study " + quoted(study) + " " + second, "timeout 20");
    EXPECT_EQ(r.exit_code, 1) << second << r.out << r.err;
    EXPECT_NE(r.err.find(said), std::string::npos) << second << r.err;
  }
  EXPECT_FALSE(fs::exists(dir / "started-2")) << "a planned size started beside the live sweep";
  EXPECT_EQ(read(study / "sweep.json"), plan_before) << "written over by a sweep that launched nothing";
}

}  // namespace

// The lock the live sweep holds is on the removed file: a --resume (or a call that plans more) took
// the new file's and ran the entries still planned (w-1n2t-r1, w-1n3t-r1) beside the live sweep,
// which runs them itself once its own run ends: each size twice, and two sweeps writing sweep.json.
TEST(SweepCli, NothingIsLaunchedBesideALiveSweepWhoseLockFileWasRemoved) {
  LocklessSweep live;
  ASSERT_TRUE(live.sweep.started) << live.sweep.err();
  expect_nothing_launched_beside(live.dir, fmt::format("scalelens sweep: another sweep is running this study, so this one launches nothing "
                                                  "beside it (scalelens sweep --study {} --status follows it):\n  w-1n1t-r1: running "
                                                  "in a sweep of this host (pid {}) that holds no lock (its sweep.lock was removed "
                                                  "while it ran)",
                                                  live.study.string(), live.sweep.pid));
}

// A sweep killed on this host whose pid now belongs to another process (reused) was still
// "running" to --status where the study's lock could not be taken (a study read-only to the one
// who looks): the pid alone was taken as the sweep, also a pid of another user's process.
TEST(SweepCli, AKilledSweepWhosePidWasReusedIsStale) {
  ScratchDir dir;
  const auto study = dir / "runs";
  WaitingSweep sweep(dir, true);
  ASSERT_TRUE(sweep.started) << sweep.err();
  sweep.kill();
  // Its pid now names another process of this host: its run's command, which outlives it.
  const pid_t group = sweep.group();
  ASSERT_NE(group, 0);
  ASSERT_TRUE(rewrite_first(study / "sweep.json", fmt::format("\"pid\":{},", sweep.pid), fmt::format("\"pid\":{},", group)))
      << read(study / "sweep.json");
  auto dead = status_read_only(study);
  EXPECT_EQ(dead.exit_code, 5) << dead.out << dead.err;
  EXPECT_NE(dead.out.find(fmt::format("stale: the sweep that ran it (pid {} on", group)), std::string::npos) << dead.out;
}

// Between two entries of a live sweep (one ended, the next not yet marked) no entry is marked
// running: a second sweep whose lock did not keep it out (sweep.lock removed; on NFS without locks
// no lock at all) found nothing running and launched the entries still planned beside it. The live
// sweep's own mark (the plan's owner, kept for its whole life) refuses it. The moment is made by
// taking the running entry's mark out of the live sweep's plan, as its save between entries leaves it.
TEST(SweepCli, NothingIsLaunchedBetweenTwoEntriesOfALiveSweepWhoseLockFileWasRemoved) {
  LocklessSweep live;
  ASSERT_TRUE(live.sweep.started) << live.sweep.err();
  const auto& study = live.study;
  auto between = plan_of(study);
  EXPECT_TRUE(between.owner && between.owner->pid == live.sweep.pid) << read(study / "sweep.json");
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
  auto& first = between.entries.at(0);
  first.state = scalelens::sweep::State::failed;  // ended; the next entry not yet marked running
  first.pid.reset(), first.pid_start.clear(), first.host.clear();
  ASSERT_TRUE(scalelens::sweep::write_plan(study / "sweep.json", between));
  expect_nothing_launched_beside(live.dir, fmt::format("scalelens sweep: another sweep (pid {} on {}) is launching this study's entries "
                                                       "and holds no lock this one could see, so this one launches nothing beside it",
                                                       live.sweep.pid, host));
}

// The owner's mark of a sweep that is gone: on this host (its pid ended) it is taken over; of another
// host it holds until that host is named gone (--stale-host), as an entry's mark. The sweep that
// took over leaves no owner behind when it ends.
TEST(SweepCli, AnOwnerMarkOfAGoneSweepIsTakenOverAndOneOfAnotherHostNeedsStaleHost) {
  ScratchDir dir;
  const auto study = dir / "runs";
  fs::create_directories(study);
  char host[256] = {};
  ASSERT_EQ(::gethostname(host, sizeof host - 1), 0);
  const pid_t dead = ::fork();
  if (dead == 0) ::_exit(0);
  ASSERT_EQ(wait_status(dead), 0);
  scalelens::sweep::Sizes sizes;
  sizes.tasks = {1, 2};
  for (const std::string owner_host : {std::string(host), std::string("node-elsewhere")}) {
    SCOPED_TRACE(owner_host);
    fs::remove_all(dir / "ran-1"), fs::remove_all(dir / "ran-2");
    for (const std::string run : {"w-1n1t-r1", "w-1n2t-r1"}) fs::remove_all(study / run);
    scalelens::sweep::Plan planned;
    planned.mpirun = false;
    planned.workdir = dir.path().string();
    planned.entries = scalelens::sweep::plan_entries("w", sizes, {"touch", (dir / "ran-{tasks}").string()});
    planned.owner = scalelens::sweep::Owner{static_cast<int>(dead), "1", owner_host};
    ASSERT_TRUE(scalelens::sweep::write_plan(study / "sweep.json", planned));
    auto r = run_scalelens("sweep --study " + quoted(study) + " --resume -q");
    if (owner_host == host) {
      EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    } else {
      EXPECT_EQ(r.exit_code, 1) << r.out << r.err;
      EXPECT_NE(r.err.find(fmt::format("another sweep (pid {} on node-elsewhere) is launching this study's entries", dead)),
                std::string::npos)
          << r.err;
      EXPECT_NE(r.err.find("--stale-host node-elsewhere takes its mark as stale"), std::string::npos) << r.err;
      EXPECT_FALSE(fs::exists(dir / "ran-1"));
      r = run_scalelens("sweep --study " + quoted(study) + " --resume -q --stale-host node-elsewhere");
      EXPECT_EQ(r.exit_code, 0) << r.out << r.err;
    }
    EXPECT_TRUE(fs::exists(dir / "ran-1"));
    EXPECT_TRUE(fs::exists(dir / "ran-2"));
    EXPECT_FALSE(plan_of(study).owner) << "the owner's mark outlived its sweep";
  }
}

// A mark of another host (a study on a shared file system) cannot be checked by its pid from here,
// and the study's lock may not reach across hosts (flock on NFS without lock support, Lustre with
// localflock): --status took the lock it could take as proof that the sweep was gone, marked the
// entry failed, and --resume ran it again, beside the sweep still running it on its own host.
TEST(SweepCli, AMarkOfAnotherHostRunsUntilThatHostIsNamedStale) {
  ScratchDir dir;
  const auto study = dir / "runs";
  fs::create_directories(study);
  scalelens::sweep::Sizes sizes;
  sizes.tasks = {1, 2};
  scalelens::sweep::Plan planned;
  planned.mpirun = false;
  planned.workdir = dir.path().string();
  planned.entries = scalelens::sweep::plan_entries("w", sizes, {"touch", (dir / "ran-{tasks}").string()});
  auto& mark = planned.entries.at(0);
  mark.state = scalelens::sweep::State::running;
  mark.pid = 4242;
  mark.pid_start = "1234567";
  mark.host = "node-elsewhere";
  ASSERT_TRUE(scalelens::sweep::write_plan(study / "sweep.json", planned));
  const std::string note = "marked running by a sweep on node-elsewhere (pid 4242), which this host cannot check; where that sweep "
                           "is gone, --stale-host node-elsewhere takes the mark as stale";

  auto status = run_scalelens("sweep --study " + quoted(study) + " --status");
  EXPECT_EQ(status.exit_code, 0) << status.out << status.err;
  const auto row = status.out.find("w-1n1t-r1");
  ASSERT_NE(row, std::string::npos) << status.out;
  const std::string line = status.out.substr(row, status.out.find('\n', row) - row);
  EXPECT_NE(line.find(" running "), std::string::npos) << status.out;
  EXPECT_NE(line.find(note), std::string::npos) << status.out;
  EXPECT_EQ(plan_of(study).entries.at(0).state, scalelens::sweep::State::running) << plan_of(study).entries.at(0).note;

  auto resume = run_scalelens("sweep --study " + quoted(study) + " --resume");
  EXPECT_EQ(resume.exit_code, 1) << resume.out << resume.err;
  EXPECT_NE(resume.err.find("another sweep is running this study, so this one launches nothing beside it"), std::string::npos) << resume.err;
  EXPECT_NE(resume.err.find("\n  w-1n1t-r1: " + note + "\n"), std::string::npos) << resume.err;
  EXPECT_FALSE(fs::exists(dir / "ran-1"));
  EXPECT_FALSE(fs::exists(dir / "ran-2")) << "a planned entry launched beside the other host's sweep";

  // Said gone by someone who knows: the mark is stale, and the entry runs again.
  auto taken = run_scalelens("sweep --study " + quoted(study) + " --resume --stale-host node-elsewhere -q");
  EXPECT_EQ(taken.exit_code, 0) << taken.out << taken.err;
  EXPECT_TRUE(fs::exists(dir / "ran-1"));
  EXPECT_TRUE(fs::exists(dir / "ran-2"));
  for (const auto& e : plan_of(study).entries) EXPECT_EQ(e.state, scalelens::sweep::State::done) << e.run_id << ": " << e.note;
}

// The run column was 28 characters wide: longer run ids (labels that differ at their end) pushed
// their rows' columns out of line with the header and with each other.
TEST(SweepCli, StatusShowsLongRunIdsWholeWithTheColumnsInLine) {
  ScratchDir dir;
  const auto study = dir / "runs";
  const std::vector<std::string> labels = {"resnet50-imagenet-ddp-bucket-cap-25mb", "resnet50-imagenet-ddp-bucket-cap-250mb"};
  for (const auto& label : labels) {
    auto r = run_scalelens("sweep --study " + quoted(study) + " --label " + label + " --tasks 1 --launcher local --no-mpirun -q -- true",
                           in_folder(dir.path()));
    ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  }
  auto status = run_scalelens("sweep --study " + quoted(study) + " --status");
  ASSERT_EQ(status.exit_code, 0) << status.out << status.err;
  const auto state_column = status.out.find("state");
  ASSERT_LT(state_column, status.out.find('\n')) << status.out;
  for (const auto& label : labels) {
    const auto row = status.out.find("\n" + label + "-1n1t-r1 ");
    ASSERT_NE(row, std::string::npos) << status.out;
    EXPECT_EQ(status.out.find("done", row) - (row + 1), state_column) << "the state column out of line:\n" << status.out;
  }
}

TEST(SweepSlurmWords, SacctLinesGiveEachJobsStateWord) {
  const auto jobs = scalelens::sweep::parse_sacct("4242|COMPLETED\n4243|CANCELLED by 0\n4244|FAILED\n\n");
  ASSERT_EQ(jobs.size(), 3u);
  EXPECT_EQ(jobs[0].id, "4242");
  EXPECT_EQ(jobs[0].state, "COMPLETED");
  EXPECT_EQ(jobs[1].state, "CANCELLED");
  EXPECT_EQ(scalelens::sweep::state_from_slurm(jobs[1].state), scalelens::sweep::State::cancelled);
  EXPECT_EQ(jobs[2].state, "FAILED");
}

// A job that ended without a run folder and that SLURM has since forgotten (purged after MinJobAge;
// no accounting that keeps it) was "submitted" to --status for ever: squeue and scontrol no longer
// know it, and nothing else said it had ended.
TEST(SweepSlurm, AJobSlurmForgotWithoutARunFolderHasEnded) {
  SCALELENS_REQUIRE_SLURM();
  // The private cluster keeps ended jobs 10 s (scripts/slurm-cluster.sh's MinJobAge).
  const auto config = run_command("scontrol show config").out;
  long age = -1;  // "MinJobAge               = 10 sec"
  if (const auto at = config.find("MinJobAge"); at != std::string::npos) std::sscanf(config.c_str() + at, "MinJobAge = %ld", &age);
  if (age < 1 || age > 60) {
    const std::string why = fmt::format("this cluster's MinJobAge ({} s) keeps ended jobs too long to see one forgotten "
                                        "(scripts/slurm-cluster.sh starts one that keeps them 10 s)", age);
    if (std::getenv("SCALELENS_REQUIRE_SLURM")) FAIL() << why;
    GTEST_SKIP() << why;
  }
  ScratchDir dir;
  // A job that ends at once and writes no run folder (a module load that failed, say).
  auto tmpl = dir.write("gone.sbatch", "#!/bin/bash\n#SBATCH --output={study}/.sweep/{run_id}.%j.out\nexit 0\n{scalelens_run}\n");
  auto r = run_scalelens("sweep --study " + quoted(dir / "runs") + " --label gone --tasks 1 --launcher slurm -q --template " + quoted(tmpl) +
                             " -- true",
                         in_folder(dir.path()));
  ASSERT_EQ(r.exit_code, 0) << r.out << r.err;
  const std::string job = plan_of(dir / "runs").entries.at(0).job_id;
  ASSERT_FALSE(job.empty());
  bool forgotten = false;
  for (int i = 0; i < 120 && !forgotten; ++i) {
    std::this_thread::sleep_for(std::chrono::seconds(1));
    forgotten = run_command("scontrol show job " + job).err.find("Invalid job id specified") != std::string::npos;
  }
  ASSERT_TRUE(forgotten) << "SLURM still knows job " << job;
  auto status = run_scalelens("sweep --study " + quoted(dir / "runs") + " --status");
  EXPECT_EQ(status.exit_code, 5) << status.out << status.err;
  EXPECT_NE(status.out.find("the job ended without a run folder (SLURM no longer lists job " + job + ")"), std::string::npos) << status.out;
  const auto entry = plan_of(dir / "runs").entries.at(0);
  EXPECT_EQ(entry.state, scalelens::sweep::State::failed) << entry.note;
}
