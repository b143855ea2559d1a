// `scalelens sweep`: plan, launch, follow and resume a scaling study (src/collect/sweep.hpp).
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <map>
#include <set>
#include <thread>

#include <fmt/format.h>

#include "analysis/analyze.hpp"
#include "collect/job_environment.hpp"
#include "collect/launcher.hpp"
#include "collect/run_folder.hpp"
#include "collect/sweep.hpp"
#include "commands.hpp"
#include "common/file_io.hpp"
#include "common/subprocess.hpp"
#include "common/text.hpp"
#include "ingest/ingest.hpp"
#include "report/output_folder.hpp"

namespace scalelens::cli {

namespace {

namespace fs = std::filesystem;
using sweep::Entry;
using sweep::Plan;
using sweep::State;

struct SweepArgs {
  std::string study = "runs";
  std::string label;
  std::vector<int> nodes, tasks;
  int tasks_per_node = 1, gpus_per_task = 1, repeats = 1;
  std::string launcher = "auto";
  std::string sbatch, srun;
  std::string template_file;
  std::string run_args_line;
  std::string workdir;
  bool mpi_comm = false, no_mpirun = false;
  bool status = false, resume = false, dry_run = false, wait = false, next = false;
  int target_gpus = 0;
  double poll_s = 10;
  std::string report_dir;
  bool report_job = false;
  bool quiet = false;
  std::vector<std::string> stale_hosts;  // --stale-host: hosts whose sweeps are gone
  std::vector<std::string> command;
};

std::string self_path() {
  std::error_code ec;
  auto p = fs::read_symlink("/proc/self/exe", ec);
  return ec ? std::string("scalelens") : p.string();
}

// A command's output without its line ends and blanks around.
std::string stripped(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  return std::string(s);
}

bool on_path(const std::string& tool) { return run_capture({"sh", "-c", "command -v " + shell_quote(tool)}).status == 0; }

void say(const SweepArgs& a, const std::string& text) {
  if (!a.quiet) std::fputs(text.c_str(), stdout), std::fflush(stdout);
}

std::string this_host() {
  char buf[256] = {};
  return ::gethostname(buf, sizeof buf - 1) == 0 && buf[0] ? buf : "localhost";
}

// A process that has ended and waits for its parent to reap it (state Z in /proc/PID/stat).
bool zombie(int pid) {
  auto text = read_head(fmt::format("/proc/{}/stat", pid), 4096);
  if (!text) return false;
  const auto close = text.value().rfind(')');
  return close != std::string::npos && close + 2 < text.value().size() && text.value()[close + 2] == 'Z';
}

// A mark of another host than this one (a study on a shared file system).
bool other_host(const std::string& host) { return !host.empty() && host != this_host(); }
bool other_host(const Entry& e) { return other_host(e.host); }

// Whether the sweep a mark names (an entry's, or the plan's owner) is gone (killed, its machine
// rebooted). A mark of this host names its process by pid and start time: the sweep runs while that
// process does, whoever holds the lock (a sweep.lock removed and made again while it runs is no sign
// of its end), and a pid now of another process (reused) runs nothing. A mark of another host cannot
// be checked from here, nor can the lock be trusted to reach across hosts (flock on NFS without lock
// support, Lustre mounted with localflock): it runs until someone names that host's sweeps gone
// (`stale_hosts`, --stale-host) while no sweep holds the lock (`holding_lock`: this process
// launches none yet). One without a start time (a plan written before it was kept) is gone where
// no local sweep runs, or where its pid is gone.
bool sweep_gone(std::optional<int> pid, const std::string& pid_start, const std::string& host, bool holding_lock,
                const std::vector<std::string>& stale_hosts) {
  if (other_host(host)) return holding_lock && std::find(stale_hosts.begin(), stale_hosts.end(), host) != stale_hosts.end();
  const bool here = pid && host == this_host();
  if (here && !pid_start.empty()) {
    const std::string started = collect::process_start(*pid);
    if (started != "0") return started != pid_start || zombie(*pid);
    // Unreadable: no such process, or no /proc (then the pid alone says).
  }
  if (holding_lock && (!here || pid_start.empty())) return true;
  return here && ::kill(*pid, 0) != 0 && errno == ESRCH;
}

// A local entry marked running whose sweep is gone runs no more.
bool stale(const Entry& e, bool holding_lock, const std::vector<std::string>& stale_hosts) {
  return e.state == State::running && sweep_gone(e.pid, e.pid_start, e.host, holding_lock, stale_hosts);
}

// What a mark of another host says on this one: who runs it, and how to say that sweep is gone.
std::string other_host_note(const Entry& e) {
  return fmt::format("marked running by a sweep on {} (pid {}), which this host cannot check; where that sweep is gone, "
                     "--stale-host {} takes the mark as stale",
                     printable(e.host), e.pid ? std::to_string(*e.pid) : std::string("not recorded"), printable(shell_quote(e.host)));
}

// Why squeue gave no answer (not found, the controller down: its own words), "" when it answered.
// "Invalid job id" is an answer: every job asked about has left the queue (scontrol then says).
std::string squeue_failure(const Captured& q) {
  if (q.status == 0 || q.err.find("Invalid job id specified") != std::string::npos) return "";
  const std::string said = stripped(q.err.empty() ? q.out : q.err);
  const std::string how = q.status == 127 ? "could not be started" : q.status > 128 ? fmt::format("was killed by signal {}", q.status - 128)
                                                                             : fmt::format("exited with {}", q.status);
  return fmt::format("squeue {}{}{}", how, said.empty() ? "" : ": ", printable(said));
}

// What refresh learnt beyond the entries' states.
struct Refreshed {
  std::string never;      // the jobs SLURM will never start as submitted, a line each ("" when none)
  std::string unanswered; // why squeue did not answer ("" when it did): the jobs in flight keep their states
};

// The scheduler's word on the entries in flight, then the run folders' (the ground truth of a
// finished run). A job that ended without a complete run folder failed. Where squeue does not
// answer, the jobs in flight are as last known (said on stderr, once per reason): its silence
// says nothing of them, so none is taken as ended, failed or forgotten.
Refreshed refresh(Plan& plan, const fs::path& study, bool holding_lock = false, const std::vector<std::string>& stale_hosts = {}) {
  Refreshed learnt;
  std::string& never = learnt.never;
  // Jobs SLURM no longer knows (ended longer ago than its MinJobAge, and no accounting that has
  // them): ended, so a run folder that is not complete by now never will be.
  std::set<std::string> forgotten;
  if (plan.launcher == "slurm") {
    std::string ids;
    for (const auto& e : plan.entries)
      if (sweep::in_flight(e.state) && !e.job_id.empty()) ids += (ids.empty() ? "" : ",") + e.job_id;
    std::map<std::string, sweep::JobWord> word;
    if (!ids.empty()) {
      const auto queue = run_capture({"squeue", "-h", "-o", "%i %T %r", "-j", ids});
      learnt.unanswered = squeue_failure(queue);
      static std::string said;  // refresh runs several times a call, and every poll of --wait
      if (!learnt.unanswered.empty() && learnt.unanswered != said)
        std::fprintf(stderr, "scalelens sweep: %s; the jobs in flight are shown as last known\n", learnt.unanswered.c_str());
      said = learnt.unanswered;
      if (learnt.unanswered.empty()) {
        for (auto& w : sweep::parse_squeue(queue.out)) word[w.id] = w;
        for (auto& e : plan.entries)
          if (sweep::in_flight(e.state) && !e.job_id.empty() && !word.count(e.job_id)) {
            const auto shown = run_capture({"scontrol", "show", "job", "-o", e.job_id});
            for (auto& w : sweep::parse_scontrol(shown.out)) word[w.id] = w;
            // Only the controller's own "no such job" is forgetting; a controller that did not
            // answer this time says nothing of the job.
            if (!word.count(e.job_id) && shown.err.find("Invalid job id specified") != std::string::npos) forgotten.insert(e.job_id);
          }
        // The accounting database keeps the jobs the controller has purged, where the site has one
        // (sacct fails where accounting_storage is none: then they stay forgotten).
        if (!forgotten.empty()) {
          std::string gone;
          for (const auto& id : forgotten) gone += (gone.empty() ? "" : ",") + id;
          const auto acct = run_capture({"sacct", "-n", "-X", "-P", "-o", "JobID,State", "-j", gone});
          if (acct.status == 0)
            for (auto& w : sweep::parse_sacct(acct.out))
              if (forgotten.erase(w.id)) word[w.id] = w;
        }
      }
    }
    for (auto& e : plan.entries) {
      if (!sweep::in_flight(e.state)) continue;
      auto it = word.find(e.job_id);
      if (it == word.end()) continue;  // not answered for, or forgotten: the run folder says
      const auto& w = it->second;
      e.state = sweep::state_from_slurm(w.state);
      if (e.state == State::running) {
        e.note.clear();  // the reason it waited is over
        continue;
      }
      // Why a job waits is what someone following the sweep needs (a size its partition cannot
      // hold waits for ever); SLURM's "None" says nothing.
      const bool reason = !w.reason.empty() && w.reason != "None";
      if (e.state != State::submitted) e.note = "SLURM: " + w.state;
      else if (!reason) e.note.clear();
      else e.note = fmt::format("SLURM: {} ({})", w.state, w.reason);
      if (e.state == State::submitted && reason && sweep::never_starts(w.reason)) {
        e.note += ": it can never start as submitted";
        never += fmt::format("\n  {} (job {}): {}", e.run_id, e.job_id, printable(e.note));
      }
    }
  }
  for (auto& e : plan.entries) {
    if (!learnt.unanswered.empty() && sweep::in_flight(e.state)) continue;
    std::optional<int> code;
    std::string unreadable;
    auto folder = sweep::state_from_run_folder(study, e, code, &unreadable);
    if (folder == State::done || folder == State::failed) {
      // A run stopped on purpose (Ctrl-C of a local sweep) stays cancelled, not failed.
      if (!(folder == State::failed && e.state == State::cancelled)) e.state = *folder;
      e.exit_status = code;
      if (*folder == State::done) e.note.clear();
      else if (!unreadable.empty()) e.note = unreadable;
      else if (e.note.empty()) e.note = fmt::format("the command exited with {}", code.value_or(-1));
    } else if (e.state == State::done) {
      e.state = State::failed;  // the scheduler says it ended well, but its run folder is not complete
      e.note = folder ? "the job ended; its run folder is incomplete" : "the job ended without a run folder";
    } else if (sweep::in_flight(e.state) && forgotten.count(e.job_id)) {
      e.state = State::failed;
      e.note = fmt::format("{} (SLURM no longer lists job {})",
                           folder ? "the job ended; its run folder is incomplete" : "the job ended without a run folder", e.job_id);
    } else if (plan.launcher == "local" && stale(e, holding_lock, stale_hosts)) {
      e.state = State::failed;
      e.note = e.pid ? fmt::format("stale: the sweep that ran it (pid {} on {}) is gone", *e.pid, e.host)
                     : "stale: the sweep that ran it is gone";
    } else if (plan.launcher == "local" && e.state == State::running) {
      e.note = other_host(e) ? other_host_note(e) : "";  // a live mark of this host needs no note
    }
    if (e.state != State::running) e.pid.reset(), e.pid_start.clear(), e.host.clear();
  }
  return learnt;
}

// A local entry still marked running holds a sweep that this one could not lock out: one of this
// host whose sweep.lock was removed while it ran, or one of another host, whose lock may not reach
// here. That sweep launches the entries after it itself: launched here too, they would run twice,
// and two sweeps would write sweep.json. Refused (exit 1) naming it and what to do.
bool may_launch_beside(const Plan& plan, const fs::path& study) {
  std::string marks;
  for (const auto& e : plan.entries) {
    if (e.state != State::running) continue;
    if (other_host(e)) marks += fmt::format("\n  {}: {}", e.run_id, other_host_note(e));
    else
      marks += fmt::format("\n  {}: running in a sweep of this host (pid {}) that holds no lock (its sweep.lock was removed while it "
                           "ran); it launches the entries after it itself",
                           e.run_id, e.pid ? std::to_string(*e.pid) : std::string("not recorded"));
  }
  if (marks.empty()) return true;
  std::fprintf(stderr,
               "scalelens sweep: another sweep is running this study, so this one launches nothing beside it (scalelens sweep "
               "--study %s --status follows it):%s\n",
               shell_quote(study.string()).c_str(), marks.c_str());
  return false;
}

// The plan's owner (sweep::Owner) is a sweep that launches this study's entries for as long as it
// runs, also between two entries, where none is marked running (may_launch_beside finds nothing)
// and a sweep that its lock did not keep out launched the next entries beside it. Refused (exit 1)
// naming it; an owner whose sweep is gone (as an entry's mark, sweep_gone) is taken over.
bool may_launch_beside_owner(Plan& plan, const fs::path& study, bool holding_lock, const std::vector<std::string>& stale_hosts) {
  if (!plan.owner) return true;
  const sweep::Owner& o = *plan.owner;
  if (sweep_gone(o.pid, o.pid_start, o.host, holding_lock, stale_hosts)) {
    plan.owner.reset();
    return true;
  }
  const std::string how = other_host(o.host)
                              ? fmt::format("; this host cannot check it: where that sweep is gone, --stale-host {} takes its mark as stale",
                                            printable(shell_quote(o.host)))
                              : " (its sweep.lock was removed while it ran)";
  std::fprintf(stderr,
               "scalelens sweep: another sweep (pid %d on %s) is launching this study's entries and holds no lock this one could "
               "see, so this one launches nothing beside it (scalelens sweep --study %s --status follows it)%s\n",
               o.pid, printable(o.host).c_str(), shell_quote(study.string()).c_str(), how.c_str());
  return false;
}

// The study's lock, sweep.lock beside sweep.json (flock; the kernel frees it when the sweep ends,
// also by SIGKILL): a sweep that launches holds it while it runs, so two sweeps never launch, nor
// set aside, the same entries. Refused (exit 1) naming the holder, which the file records.
bool lock_study(const fs::path& study, std::optional<collect::NodeLock>& held) {
  if (auto made = create_folder(study); !made) {
    std::fprintf(stderr, "scalelens sweep: %s: %s\n", made.error().path.c_str(), made.error().message.c_str());
    return false;
  }
  const fs::path file = study / "sweep.lock";
  auto got = collect::NodeLock::try_acquire(file);
  if (!got) {
    std::fprintf(stderr, "scalelens sweep: %s: %s\n", got.error().path.c_str(), got.error().message.c_str());
    return false;
  }
  if (!got.value()) {
    const auto holder = read_head(file, 256);
    std::fprintf(stderr, "scalelens sweep: another sweep (%s) is running this study; scalelens sweep --study %s --status shows it\n",
                 holder && !stripped(holder.value()).empty() ? stripped(holder.value()).c_str() : "its pid is not recorded",
                 shell_quote(study.string()).c_str());
    return false;
  }
  held.emplace(std::move(*got.value()));
  // Written in place: a new file (an atomic rename) would not be the locked one.
  std::ofstream(file, std::ios::trunc) << fmt::format("pid {} on {}\n", ::getpid(), this_host());
  return true;
}

std::string status_table(const Plan& plan) {
  // The run column as wide as its longest id: labels that differ only at their end (a long
  // common prefix) stay told apart, and the columns after it stay in line.
  std::size_t run_width = 3;  // "run"
  for (const auto& e : plan.entries) run_width = std::max(run_width, display_width(printable(e.run_id)));
  std::string out = fmt::format("{:<{}} {:>5} {:>5} {:>5} {:>6}  {:<9} {:>8}  {}\n", "run", run_width, "nodes", "tasks", "gpus", "repeat",
                                "state", "job", "note");
  std::map<State, int> counts;
  for (const auto& e : plan.entries) {
    ++counts[e.state];
    out += fmt::format("{:<{}} {:>5} {:>5} {:>5} {:>6}  {:<9} {:>8}  {}\n", printable(e.run_id), run_width, e.nodes, e.tasks, e.gpus,
                       e.repeat, sweep::state_name(e.state), e.job_id.empty() ? "-" : e.job_id, printable(e.note));
  }
  std::string summary;
  for (const auto& [s, n] : counts) summary += fmt::format("{}{} {}", summary.empty() ? "" : ", ", n, sweep::state_name(s));
  return out + summary + "\n";
}

// An earlier attempt's run folder moves aside (into .sweep/attempts/, which reports skip), so the
// rerun writes <run id> again and the study holds each run once.
// Where it cannot move, the rerun is not started: it would run beside the earlier attempt, and the
// study would hold both (a failed run beside its rerun).
Result<bool> set_aside(const fs::path& study, const Entry& e) {
  std::error_code ec;
  const fs::path dir = study / e.run_id;
  if (!fs::exists(dir, ec)) return true;
  const fs::path attempts = study / ".sweep" / "attempts";
  if (auto made = create_folder(attempts); !made) return made.error();
  for (int k = 1; k < 10000; ++k) {
    const fs::path to = attempts / fmt::format("{}.{}", e.run_id, k);
    if (fs::exists(to, ec)) continue;
    fs::rename(dir, to, ec);
    if (ec) return Error{fmt::format("cannot move the earlier attempt aside to {}: {}", to.string(), ec.message()), dir.string()};
    return true;
  }
  return Error{"cannot move the earlier attempt aside: 9999 attempts are there already", dir.string()};
}

// Its earlier attempt set aside, else the entry fails with the reason (said on stderr).
bool set_aside_or_fail(const fs::path& study, Entry& e) {
  auto moved = set_aside(study, e);
  if (moved) return true;
  e.state = State::failed;
  e.note = fmt::format("{}: {}", moved.error().path, moved.error().message);
  std::fprintf(stderr, "scalelens sweep: %s: %s\n", e.run_id.c_str(), e.note.c_str());
  return false;
}

int submit_slurm(Plan& plan, Entry& e, const fs::path& study, const std::string& tmpl, bool dry_run) {
  auto script = sweep::job_script(plan, e, study, self_path(), tmpl);
  if (!script) {
    std::fprintf(stderr, "scalelens sweep: %s: %s\n", script.error().path.c_str(), script.error().message.c_str());
    return 1;
  }
  const fs::path file = study / ".sweep" / (e.run_id + ".sh");
  const auto argv = sweep::sbatch_argv(plan, e, file);
  if (dry_run) {
    // The submission too: --sbatch's options are part of what a job asks for.
    std::printf("# ---- %s\n# %s\n%s\n", e.run_id.c_str(), sweep::shell_line(argv).c_str(), script.value().c_str());
    return 0;
  }
  if (auto made = create_folder(file.parent_path()); !made) {
    std::fprintf(stderr, "scalelens sweep: %s: %s\n", made.error().path.c_str(), made.error().message.c_str());
    return 1;
  }
  if (auto ok = write_file_atomic(file, script.value()); !ok) {
    std::fprintf(stderr, "scalelens sweep: %s: %s\n", ok.error().path.c_str(), ok.error().message.c_str());
    return 1;
  }
  if (!set_aside_or_fail(study, e)) return 1;
  auto r = run_capture(argv, plan.workdir);
  if (r.status != 0) {
    e.state = State::failed;
    e.note = "sbatch: " + stripped(r.err.empty() ? r.out : r.err);
    std::fprintf(stderr, "scalelens sweep: %s: %s\n", e.run_id.c_str(), e.note.c_str());
    return 1;
  }
  std::string id = stripped(r.out);
  if (auto semi = id.find(';'); semi != std::string::npos) id.resize(semi);  // "<id>;<cluster>"
  e.job_id = id;
  e.state = State::submitted;
  e.note.clear();
  e.exit_status.reset();
  return 0;
}

int run_local(const SweepArgs& a, Plan& plan, Entry& e, const fs::path& study, bool dry_run) {
  std::vector<std::string> argv;
  if (plan.mpirun) argv = {"mpirun", "--oversubscribe", "-n", std::to_string(e.tasks)};
  auto run = sweep::run_argv(plan, e, study, self_path());
  argv.insert(argv.end(), run.begin(), run.end());
  const std::string line = sweep::shell_line(argv);
  if (dry_run) {
    std::printf("%s\n", line.c_str());
    return 0;
  }
  say(a, fmt::format("== {} ({} task{}, repeat {})\n", e.run_id, e.tasks, e.tasks == 1 ? "" : "s", e.repeat));
  if (!set_aside_or_fail(study, e)) return 0;  // no signal stopped it: the sweep goes on
  std::vector<std::pair<std::string, std::string>> env;
  if (::geteuid() == 0) env = {{"OMPI_ALLOW_RUN_AS_ROOT", "1"}, {"OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1"}};  // Open MPI refuses root otherwise
  collect::ChildOptions options;
  options.cwd = plan.workdir;
  auto outcome = collect::run_child(argv, env, options);
  std::optional<int> code;
  auto folder = sweep::state_from_run_folder(study, e, code);
  // The run's own status where its folder has it (143 for a SIGTERM), not mpirun's (1).
  e.exit_status = code.value_or(outcome.status);
  e.pid.reset();
  e.pid_start.clear();
  e.host.clear();
  e.state = outcome.status == 0 && folder == State::done ? State::done : outcome.stopped_by ? State::cancelled : State::failed;
  e.note = e.state == State::done ? ""
           : e.state == State::cancelled ? fmt::format("stopped by SIG{} (exit status {})", sigabbrev_np(outcome.stopped_by), *e.exit_status)
           : !outcome.ran         ? outcome.error
                                  : fmt::format("exit status {}", *e.exit_status);
  return outcome.stopped_by;
}

int write_report(const SweepArgs& a, const fs::path& study) {
  IngestOptions in;
  in.inputs = {study.string()};
  Study s = ingest(in);
  Summary summary = analyze(s, {});
  if (summary.configurations.empty()) {
    std::fprintf(stderr, "scalelens sweep: no usable run in %s for a report\n", study.c_str());
    return 2;
  }
  std::string figures_failed;
  auto written = write_report_files(summary, s, a.report_dir, &figures_failed);
  if (!written) {
    std::fprintf(stderr, "scalelens sweep: %s: %s\n", written.error().path.c_str(), written.error().message.c_str());
    return 1;
  }
  if (!figures_failed.empty()) std::fprintf(stderr, "scalelens sweep: warning: figures: %s\n", printable(figures_failed).c_str());
  say(a, fmt::format("Wrote the report to {}\n", a.report_dir));
  return 0;
}

// --next: the GPU count the label's scaling model would measure next for --target-gpus; `unit`
// what the study's counts count ("GPUs", or "ranks" for CPU-only runs), for the messages.
std::optional<int> next_size(const SweepArgs& a, const fs::path& study, std::string& unit) {
  IngestOptions in;
  in.inputs = {study.string()};
  AnalysisOptions options;
  options.predict = {a.target_gpus};
  Summary summary = analyze(ingest(in), options);
  unit = summary.world_size_unit;
  for (const auto& m : summary.curves) {
    if (m.label != one_line(a.label)) continue;  // as plan_entries records it
    if (m.model.suggest_next_p) return m.model.suggest_next_p;
    std::fprintf(stderr, "scalelens sweep: --next: the scaling model of '%s' suggests no size for %s: %s\n", a.label.c_str(),
                 count_of(a.target_gpus, unit).c_str(),
                 (!m.model.suggest_why.empty() ? m.model.suggest_why : !m.model.refused.empty() ? m.model.refused : std::string("no reason given")).c_str());
    return std::nullopt;
  }
  std::fprintf(stderr, "scalelens sweep: --next: no measured curve labelled '%s' in %s (a model needs 3 sizes)\n", a.label.c_str(), study.c_str());
  return std::nullopt;
}

int run_sweep(SweepArgs a) {
  const fs::path study = fs::absolute(a.study);
  const fs::path plan_file = study / "sweep.json";
  std::error_code ec;
  // Launching: the lock before the plan is read, so the plan read is the one this sweep writes on.
  // (A study not made yet has no plan; it is locked when it is made, below.)
  std::optional<collect::NodeLock> lock;
  const bool launches = !a.status && !a.dry_run;
  if (launches && fs::is_directory(study, ec) && !lock_study(study, lock)) return 1;
  Plan plan;
  const bool have_plan = fs::exists(plan_file, ec);
  if (have_plan) {
    auto read = sweep::read_plan(plan_file);
    if (!read) {
      std::fprintf(stderr, "scalelens sweep: %s: %s\n", read.error().path.c_str(), read.error().message.c_str());
      return 2;
    }
    plan = std::move(read.value());
  }
  const std::string plan_as_read = have_plan ? sweep::plan_json(plan) : "";
  if (a.status || a.resume) {
    if (!have_plan) {
      std::fprintf(stderr, "scalelens sweep: %s holds no sweep.json: nothing was planned there\n", study.c_str());
      return 2;
    }
  } else {
    // A new sweep, or more sizes for this study's plan.
    if (a.label.empty() || a.command.empty()) {
      std::fprintf(stderr, "scalelens sweep: give --label and the command after --, or --status / --resume\n");
      return 1;
    }
    std::string launcher = a.launcher == "auto" ? (on_path("sbatch") ? "slurm" : "local") : a.launcher;
    if (have_plan && plan.launcher != launcher && !plan.entries.empty()) {
      std::fprintf(stderr, "scalelens sweep: the study's sweep runs with --launcher %s, not %s\n", plan.launcher.c_str(), launcher.c_str());
      return 1;
    }
    plan.launcher = launcher;
    auto words = shell_split(a.sbatch);
    if (!words.ok) {
      std::fprintf(stderr, "scalelens sweep: --sbatch '%s' has an unterminated quote\n", a.sbatch.c_str());
      return 1;
    }
    auto srun_words = shell_split(a.srun);
    if (!srun_words.ok) {
      std::fprintf(stderr, "scalelens sweep: --srun '%s' has an unterminated quote\n", a.srun.c_str());
      return 1;
    }
    const std::string template_file = a.template_file.empty() ? "" : fs::absolute(a.template_file).string();
    auto run_words = shell_split(a.run_args_line);
    if (!run_words.ok) {
      std::fprintf(stderr, "scalelens sweep: --run-args '%s' has an unterminated quote\n", a.run_args_line.c_str());
      return 1;
    }
    // The options the sweep gives each run itself: given again, `scalelens run` refused every run
    // ("--label: At Most 1 required but received 2"), each entry failed with "exit status 1".
    const std::pair<const char*, std::string> given_by_sweep[] = {
        {"--study", "each run is given the sweep's --study; give the study as the sweep's --study"},
        {"--label", "each run is given the sweep's --label, which names its entries and run ids; give the label as the sweep's --label"},
        {"--run-id", "each run is given its entry's (<label>-<nodes>n<tasks>t-r<repeat>), one run folder per entry"},
        {"--world-size", "each run is given its entry's (tasks x --gpus-per-task)"}};
    for (const auto& w : run_words.words)
      for (const auto& [option, why] : given_by_sweep)
        if (w == option || w.rfind(std::string(option) + "=", 0) == 0) {
          std::fprintf(stderr, "scalelens sweep: --run-args cannot hold %s: %s\n", option, why.c_str());
          return 1;
        }
    std::vector<std::string> run_args = std::move(run_words.words);
    if (a.mpi_comm) run_args.insert(run_args.begin(), "--mpi-comm");
    const bool mpirun = !a.no_mpirun;
    // The plan's settings are every entry's: one changed by a later call would launch the entries
    // planned before (a --resume of them) otherwise than they were planned, so it is refused.
    if (!plan.entries.empty()) {
      auto words_of = [](const std::vector<std::string>& argv) {
        return argv.empty() ? std::string("none") : printable(sweep::shell_line(argv));
      };
      std::string differ;
      auto compare = [&](const char* option, const std::vector<std::string>& was, const std::vector<std::string>& now) {
        if (was != now) differ += fmt::format("\n  {}: the plan's {}, this call's {}", option, words_of(was), words_of(now));
      };
      compare("--sbatch", plan.sbatch_args, words.words);
      compare("--srun", plan.srun_args, srun_words.words);
      compare("--run-args (with --mpi-comm)", plan.run_args, run_args);
      if (plan.template_file != template_file)
        differ += fmt::format("\n  --template: the plan's {}, this call's {}", plan.template_file.empty() ? "none" : printable(plan.template_file),
                              template_file.empty() ? "none" : printable(template_file));
      if (plan.mpirun != mpirun)
        differ += fmt::format("\n  --no-mpirun: the plan's commands run {}, this call's {}", plan.mpirun ? "under mpirun" : "as given",
                              mpirun ? "under mpirun" : "as given");
      if (!differ.empty()) {
        std::fprintf(stderr, "scalelens sweep: this call's settings are not the plan's, which its entries keep (give them as planned, "
                             "or plan a new --study):%s\n", differ.c_str());
        return 1;
      }
    }
    plan.sbatch_args = std::move(words.words);
    plan.srun_args = std::move(srun_words.words);
    plan.template_file = template_file;
    plan.run_args = std::move(run_args);
    plan.mpirun = mpirun;
    sweep::Sizes sizes;
    sizes.nodes = a.nodes;
    sizes.tasks = a.tasks;
    sizes.tasks_per_node = a.tasks_per_node;
    sizes.gpus_per_task = a.gpus_per_task;
    sizes.repeats = a.repeats;
    if (a.next) {
      std::string unit = "GPUs";
      auto p = next_size(a, study, unit);
      if (!p) return 2;
      const int per_node = a.tasks_per_node * a.gpus_per_task;
      if (!a.nodes.empty() && *p % per_node != 0) {
        std::fprintf(stderr, "scalelens sweep: --next: %s is not a whole number of nodes of %d\n", count_of(*p, unit).c_str(), per_node);
        return 2;
      }
      sizes.nodes.clear();
      sizes.tasks.clear();
      if (!a.nodes.empty()) sizes.nodes = {*p / per_node};
      else sizes.tasks = {*p / a.gpus_per_task};
      say(a, fmt::format("The scaling model suggests measuring {} next (for the prediction at {}).\n", count_of(*p, unit), a.target_gpus));
    }
    if (sizes.nodes.empty() && sizes.tasks.empty()) {
      std::fprintf(stderr, "scalelens sweep: give the sizes: --nodes 1,2,4 (with --tasks-per-node) or --tasks 1,2,4\n");
      return 1;
    }
    // Each count is in its range, their product may not be (600000 nodes × 4096 tasks overflowed
    // into mpirun -n -1837367296): no run of the sweep may be larger than any machine.
    if (const std::int64_t most = sweep::largest_gpus(sizes); most > limits::kMaxWorldSize) {
      std::fprintf(stderr, "scalelens sweep: the largest size is %lld GPUs (nodes × tasks per node × GPUs per task), beyond "
                           "any machine (at most %lld)\n",
                   static_cast<long long>(most), static_cast<long long>(limits::kMaxWorldSize));
      return 1;
    }
    // A plan is runs someone will wait for: 20,000 sizes × 1,000 repeats planned 20 million entries
    // (7 GB in a minute, even with --dry-run) before anything was said.
    constexpr std::int64_t kMaxRuns = 100'000;
    if (const std::int64_t runs = std::int64_t(sizes.nodes.size() + sizes.tasks.size()) * sizes.repeats; runs > kMaxRuns) {
      std::fprintf(stderr, "scalelens sweep: %lld runs (%zu sizes × %d repeats) are more than a sweep plans (at most %lld)\n",
                   static_cast<long long>(runs), sizes.nodes.size() + sizes.tasks.size(), sizes.repeats,
                   static_cast<long long>(kMaxRuns));
      return 1;
    }
    // Local runs are on this one machine: a run of more nodes would be recorded as one, planned as many.
    if (plan.launcher == "local")
      if (auto many = std::find_if(sizes.nodes.begin(), sizes.nodes.end(), [](int n) { return n > 1; }); many != sizes.nodes.end()) {
        std::fprintf(stderr, "scalelens sweep: --launcher local runs on this machine only: %d nodes cannot be (--tasks %lld is the same "
                             "tasks on one node; --launcher slurm runs on nodes)\n",
                     *many, static_cast<long long>(*many) * sizes.tasks_per_node);
        return 1;
      }
    // An entry already planned is kept as planned (a later call adds sizes); a new one whose run id
    // is taken by another entry would never run (its run folder is the other's): refused by name.
    std::vector<Entry> added;
    for (auto& e : sweep::plan_entries(a.label, sizes, a.command)) {
      bool known = false;
      for (const auto& have : plan.entries) {
        if (sweep::same_entry(have, e)) {
          if (have.command != e.command) {
            auto line = [](const std::vector<std::string>& argv) { return printable(sweep::shell_line(argv)); };
            std::fprintf(stderr, "scalelens sweep: %s is planned with the command %s, not %s (another --label measures another command)\n",
                         have.run_id.c_str(), line(have.command).c_str(), line(e.command).c_str());
            return 1;
          }
          known = true;
        } else if (have.run_id == e.run_id) {
          std::fprintf(stderr, "scalelens sweep: run id %s is planned for %s; this call asks for %s\n", have.run_id.c_str(),
                       sweep::describe(have).c_str(), sweep::describe(e).c_str());
          return 1;
        }
      }
      if (!known) added.push_back(std::move(e));
    }
    for (auto& e : added) plan.entries.push_back(std::move(e));
  }
  std::string tmpl;
  if (!plan.template_file.empty()) {
    auto text = read_file(plan.template_file);
    if (!text) {
      std::fprintf(stderr, "scalelens sweep: %s: %s\n", plan.template_file.c_str(), text.error().message.c_str());
      return 1;
    }
    tmpl = std::move(text.value());
  }
  // --status only looks: a plan written before its folder was kept takes one when it next launches.
  if (!a.workdir.empty()) plan.workdir = fs::absolute(a.workdir).lexically_normal().string();
  else if (plan.workdir.empty() && !a.status) plan.workdir = fs::current_path(ec).string();
  if (!a.status && plan.workdir.empty()) {
    std::fprintf(stderr, "scalelens sweep: the current folder cannot be read (%s); --workdir names where the commands run\n",
                 ec.message().c_str());
    return 2;
  }
  if (!a.status && !a.dry_run && !fs::is_directory(plan.workdir, ec)) {
    std::fprintf(stderr,
                 "scalelens sweep: %s, where this sweep's commands run, is not a folder (any more); "
                 "--workdir names another\n",
                 plan.workdir.c_str());
    return 2;
  }
  // --status only looks (squeue says, or why it cannot): no sbatch is needed for that.
  if (plan.launcher == "slurm" && !a.dry_run && !a.status && !on_path("sbatch")) {
    std::fprintf(stderr, "scalelens sweep: sbatch is not on PATH (--launcher local runs on this machine; --dry-run prints the scripts)\n");
    return 1;
  }

  if (launches && !lock && !lock_study(study, lock)) return 1;
  if (a.status && fs::is_directory(study, ec)) {
    // --status only looks; it writes back what it learnt only while no sweep runs (it then holds
    // the lock for that moment), never over a running sweep's sweep.json.
    if (auto got = collect::NodeLock::try_acquire(study / "sweep.lock"); got && got.value()) lock.emplace(std::move(*got.value()));
  }
  Refreshed learnt;
  if (!a.dry_run) learnt = refresh(plan, study, lock.has_value(), a.stale_hosts);
  auto save = [&]() {
    if (a.dry_run) return true;
    auto ok = sweep::write_plan(plan_file, plan);
    if (!ok) std::fprintf(stderr, "scalelens sweep: %s: %s\n", ok.error().path.c_str(), ok.error().message.c_str());
    return static_cast<bool>(ok);
  };
  auto some_run_failed = [&] {
    return std::any_of(plan.entries.begin(), plan.entries.end(), [](const Entry& e) { return sweep::ended_badly(e.state); });
  };
  if (a.status) {
    std::fputs(status_table(plan).c_str(), stdout);
    // --status only looks: it keeps what it learnt when something changed, the study can be
    // written and no sweep runs, and shows a study that is read-only to this user all the same.
    if (lock && sweep::plan_json(plan) != plan_as_read) (void)sweep::write_plan(plan_file, plan);
    // Where SLURM did not answer, "none failed" is not known: 1, not 0.
    return some_run_failed() ? 5 : !learnt.unanswered.empty() ? 1 : 0;
  }
  if (launches && plan.launcher == "local" && !may_launch_beside(plan, study)) return 1;
  if (launches && !may_launch_beside_owner(plan, study, lock.has_value(), a.stale_hosts)) return 1;
  // Marked for the sweep's whole life (what launches is this process), cleared as it ends.
  if (launches) plan.owner = sweep::Owner{static_cast<int>(::getpid()), collect::process_start(::getpid()), this_host()};
  if (!save()) return 1;

  // What to launch: planned entries; with --resume also the failed, cancelled and timed-out ones.
  // Never a finished one, never one still in the scheduler's hands.
  int rc = 0;
  // Local: Ctrl-C (SIGINT), SIGTERM, SIGHUP or SIGQUIT stops the sweep, not only the run in progress;
  // one sent between two runs waits, blocked, until the loop takes it.
  const bool local = plan.launcher == "local" && !a.dry_run;
  if (local) collect::block_forwarded_signals();
  auto to_launch = [&](const Entry& e) {
    const bool again = a.resume && (e.state == State::failed || e.state == State::cancelled || e.state == State::timeout);
    return e.state == State::planned || again;
  };
  int stopped_by = 0;
  std::size_t next = 0;  // the first entry not launched when a signal stopped the sweep
  std::optional<std::size_t> in_progress;  // the entry a signal stopped
  for (; next < plan.entries.size() && !stopped_by; ++next) {
    Entry& e = plan.entries[next];
    if (!to_launch(e)) continue;
    if (local && (stopped_by = collect::take_pending_stop_signal())) break;
    if (local) {
      // Marked and saved before it starts: --status shows it, and a sweep that dies leaves a mark
      // the next one recognises as stale.
      e.state = State::running;
      e.pid = static_cast<int>(::getpid());
      e.pid_start = collect::process_start(::getpid());
      e.host = this_host();
      e.note.clear();
      e.exit_status.reset();
      if (!save()) return 1;
    }
    if (plan.launcher == "slurm") rc |= submit_slurm(plan, e, study, tmpl, a.dry_run);
    else if ((stopped_by = run_local(a, plan, e, study, a.dry_run))) in_progress = next;
    if (!save()) return 1;
  }
  if (a.dry_run) return rc;
  if (local && (stopped_by || (stopped_by = collect::take_pending_stop_signal()))) {
    const auto not_started = std::count_if(plan.entries.begin() + static_cast<std::ptrdiff_t>(next), plan.entries.end(), to_launch);
    refresh(plan, study, true, a.stale_hosts);
    plan.owner.reset();
    if (!save()) return 1;
    say(a, status_table(plan));
    // The run folder has the last word: a run that completed as the signal came is done.
    const std::string stopped = !in_progress ? "no run was in progress"
                                : fmt::format("{} {}", plan.entries[*in_progress].run_id, sweep::state_name(plan.entries[*in_progress].state));
    // Only what remains is said: "0 more not started" and a --resume with nothing to run are noise.
    const long to_resume = static_cast<long>(not_started) + (in_progress && plan.entries[*in_progress].state != State::done ? 1 : 0);
    const std::string more = not_started > 0 ? fmt::format("; {} more not started", not_started) : "";
    const std::string resume = to_resume > 1 ? " (--resume runs them)" : to_resume == 1 ? " (--resume runs it)" : "";
    std::fprintf(stderr, "scalelens sweep: stopped by SIG%s: %s%s%s\n", sigabbrev_np(stopped_by), stopped.c_str(), more.c_str(),
                 resume.c_str());
    return 128 + stopped_by;
  }
  // --report-job hands the report to a job only where one was submitted; otherwise (a local sweep,
  // nothing left in the queue) the sweep writes --report-dir itself as it ends.
  bool report_job_submitted = false;
  if (plan.launcher == "slurm") {
    std::string ids;
    for (const auto& e : plan.entries)
      if (sweep::in_flight(e.state)) ids += (ids.empty() ? "" : ":") + e.job_id;
    // Said only of jobs in the queue (a sweep whose submissions all failed submitted nothing), with
    // a command line that can be copied as it is.
    if (!ids.empty()) say(a, fmt::format("Submitted; scalelens sweep --study {} --status follows the jobs.\n", shell_quote(a.study)));
    if (a.report_job && !a.report_dir.empty() && !ids.empty()) {
      const std::string wrap = fmt::format("{} report {} -o {} -q", shell_quote(self_path()), shell_quote(study.string()),
                                           shell_quote(fs::absolute(a.report_dir).string()));
      auto r = run_capture({"sbatch", "--parsable", "--dependency=afterany:" + ids, "--job-name=sl-report",
                            "--output=" + (study / ".sweep" / "report.%j.out").string(), "--wrap", wrap},
                           plan.workdir);
      if (r.status != 0) std::fprintf(stderr, "scalelens sweep: the report job was not submitted: %s\n", r.err.c_str());
      else {
        report_job_submitted = true;
        say(a, fmt::format("The report job {} writes {} when the sweep ends.\n", stripped(r.out), a.report_dir));
      }
    }
    if (a.wait) {
      std::map<std::string, std::string> said;  // each entry's note as last said: a change is news
      std::string never;                          // jobs that wait for ever: waiting longer helps nothing
      for (;;) {
        bool busy = false;
        for (const auto& e : plan.entries) {
          busy |= sweep::in_flight(e.state);
          if (e.state == State::submitted && said[e.run_id] != e.note && !e.note.empty())
            say(a, fmt::format("{} (job {}): {}\n", e.run_id, e.job_id, printable(e.note)));
          said[e.run_id] = e.note;
        }
        if (!never.empty()) {
          std::fprintf(stderr,
                       "scalelens sweep: --wait stops: SLURM will not start these jobs as submitted (scancel them, then plan sizes "
                       "and options the partition allows):%s\n",
                       never.c_str());
          return 1;
        }
        if (!busy) break;
        std::this_thread::sleep_for(std::chrono::duration<double>(a.poll_s));
        never = refresh(plan, study).never;
        if (!save()) return 1;
      }
    }
  }
  refresh(plan, study, lock.has_value() && plan.launcher == "local", a.stale_hosts);
  plan.owner.reset();
  if (!save()) return 1;
  bool busy = false;
  for (const auto& e : plan.entries) busy |= sweep::in_flight(e.state);
  if (!busy || plan.launcher == "local") say(a, status_table(plan));
  if (!busy && !a.report_dir.empty() && !report_job_submitted) rc |= write_report(a, study);
  return rc != 0 ? 1 : some_run_failed() ? 5 : 0;
}

}  // namespace

void add_sweep_command(CLI::App& app, int& exit_code) {
  auto a = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand("sweep", "Run the scaling study itself: every size and repeat, on SLURM or locally; follow and resume it");
  cmd->add_option("--study", a->study, "The study folder: run folders and sweep.json (default runs)");
  cmd->add_option("--label", a->label, "The strategy or variant measured (e.g. ddp)");
  cmd->add_option("--nodes", a->nodes, "Node counts, comma-separated (with --tasks-per-node)")->delimiter(',')->allow_extra_args(false)->check(CLI::Range(1, static_cast<int>(limits::kMaxNodes)));
  cmd->add_option("--tasks-per-node", a->tasks_per_node, "Tasks (ranks, or wrappers of torchrun) per node")->check(CLI::Range(1, static_cast<int>(limits::kMaxPerNode)))->capture_default_str();
  cmd->add_option("--tasks", a->tasks, "Task counts on one node, comma-separated (instead of --nodes)")->delimiter(',')->allow_extra_args(false)->check(CLI::Range(1, 1000000));
  cmd->add_option("--gpus-per-task", a->gpus_per_task, "GPUs each task drives (world size = tasks x this)")->check(CLI::Range(1, static_cast<int>(limits::kMaxPerNode)))->capture_default_str();
  cmd->add_option("--repeats", a->repeats, "Runs of each size")->check(CLI::Range(1, 1000))->capture_default_str();
  cmd->add_option("--launcher", a->launcher, "slurm (sbatch), local (one after the other here), auto: slurm when sbatch is on PATH")
      ->check(CLI::IsMember({"auto", "slurm", "local"}))->capture_default_str();
  cmd->add_option("--sbatch", a->sbatch, "More sbatch options for every job, as one string (\"--partition=booster --gpus-per-node={gpus}\"); "
                                         "placeholders as in the command");
  cmd->add_option("--srun", a->srun, "Options of the job script's srun, as one string (\"--mpi=pmix\" for MPI programs); placeholders "
                                     "as in the command");
  cmd->add_option("--template", a->template_file, "Your own batch script with {nodes} {tasks} {tasks_per_node} {gpus} {repeat} {label} "
                                                  "{run_id} {study} and {scalelens_run} (the measured command line)");
  cmd->add_option("--run-args", a->run_args_line, "More options for 'scalelens run', as one string (\"--global-batch-size 256\")");
  cmd->add_option("--workdir", a->workdir, "Where the commands run and jobs are submitted from (default: where the sweep was first planned)");
  cmd->add_flag("--mpi-comm", a->mpi_comm, "Time MPI communication per step (scalelens run --mpi-comm)");
  cmd->add_flag("--no-mpirun", a->no_mpirun, "Local: run the command as given instead of under 'mpirun -n {tasks}'");
  cmd->add_flag("--status", a->status, "What is planned, queued, running, done and failed");
  cmd->add_flag("--resume", a->resume, "Launch again what is missing, failed, cancelled or timed out; never a finished run");
  cmd->add_flag("--dry-run", a->dry_run, "Print the job scripts, each after its sbatch line (or local command lines); submit and write nothing");
  cmd->add_flag("--wait", a->wait, "SLURM: block until every job has ended (then --report-dir)");
  cmd->add_option("--poll", a->poll_s, "Seconds between looks at the queue with --wait")->check(kFiniteNumber)->check(CLI::Range(0.1, 3600.0))->capture_default_str();
  cmd->add_option("--report-dir", a->report_dir, "Write the study's report here when the sweep has ended");
  cmd->add_flag("--report-job", a->report_job, "SLURM: a job that depends on the sweep's writes --report-dir (local: the sweep writes it)");
  cmd->add_flag("--next", a->next, "Measure the size the scaling model suggests for --target-gpus");
  cmd->add_option("--target-gpus", a->target_gpus, "The GPU count to predict (with --next)")->check(CLI::Range(1, 1 << 24));
  cmd->add_option("--stale-host", a->stale_hosts, "A host whose sweeps are gone (killed, rebooted): its marks of running entries "
                                                 "are stale (this host cannot check another's processes)")
      ->delimiter(',')
      ->allow_extra_args(false);
  cmd->add_flag("-q,--quiet", a->quiet, "Print only errors");
  cmd->add_option("command", a->command, "The training command (after --); {nodes} {tasks} {gpus} {repeat} are filled in")->expected(-1);
  cmd->footer(
      "Examples:\n"
      "  scalelens sweep --study runs/ --label ddp --nodes 1,2,4,8 --tasks-per-node 1 --gpus-per-task 4 --repeats 3 \\\n"
      "      --sbatch \"--partition=booster --account=proj --time=00:30:00\" -- torchrun --nproc-per-node 4 train.py\n"
      "  scalelens sweep --study runs/ --label mpi --tasks 1,2,4 --repeats 3 --launcher local --mpi-comm -- ./solver\n"
      "  scalelens sweep --study runs/ --status          what is queued, running, done, failed\n"
      "  scalelens sweep --study runs/ --resume          launch again only what is missing or failed\n"
      "  scalelens sweep --study runs/ --label ddp --tasks 1,2 --dry-run -- ./train   print the job scripts\n"
      "  scalelens sweep --study runs/ --label ddp --next --target-gpus 512 --nodes 1 --tasks-per-node 4 -- ...\n"
      "Each (label, size, repeat) is one job wrapped in 'scalelens run --run-id <label>-<N>n<T>t-r<R>'; the plan and\n"
      "states are in <study>/sweep.json, job scripts and logs in <study>/.sweep/. Commands run (and jobs are submitted)\n"
      "in the folder the sweep was first planned in, also on --resume from elsewhere; --workdir names another.\n"
      "See docs/sweep.md.\n"
      "Exit codes: 0 launched (or all done), 1 usage, a launch that failed, a job SLURM will never start (--wait),\n"
      "squeue gave no answer (--status) or another sweep holds the study, 2 no plan or "
      "nothing to use, 5 some run failed, "
      "128+N a local sweep stopped by signal N (130: Ctrl-C).");
  cmd->callback([a, cmd, &exit_code] {
    if (a->status || a->resume) {
      // They take the plan as it is: options that plan would be dropped without a word.
      std::string given;
      for (const char* option : {"--label", "--nodes", "--tasks-per-node", "--tasks", "--gpus-per-task", "--repeats", "--launcher", "--sbatch",
                                 "--srun", "--template", "--run-args", "--mpi-comm", "--no-mpirun", "--next", "--target-gpus"})
        if (cmd->count(option) > 0) given += fmt::format("{}{}", given.empty() ? "" : ", ", option);
      if (!a->command.empty()) given += given.empty() ? "the command" : ", the command";
      if (!given.empty()) {
        std::fprintf(stderr, "scalelens sweep: %s takes the plan as it is in sweep.json; %s would not apply (a call without %s plans more)\n",
                     a->status ? "--status" : "--resume", given.c_str(), a->status ? "--status" : "--resume");
        exit_code = 1;
        return;
      }
    }
    if (a->nodes.empty() == false && a->tasks.empty() == false) {
      std::fprintf(stderr, "scalelens sweep: give --nodes or --tasks, not both\n");
      exit_code = 1;
      return;
    }
    if (a->next && a->target_gpus == 0) {
      std::fprintf(stderr, "scalelens sweep: --next needs --target-gpus N\n");
      exit_code = 1;
      return;
    }
    exit_code = run_sweep(*a);
  });
}

}  // namespace scalelens::cli
