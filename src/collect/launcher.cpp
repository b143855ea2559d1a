#include "collect/launcher.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <termios.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iterator>
#include <ctime>
#include <filesystem>
#include <map>
#include <set>
#include <optional>

#include <fmt/format.h>

#include "common/file_io.hpp"

extern char** environ;

namespace scalelens::collect {
namespace {

// SIGQUIT (Ctrl-\ in a terminal) too: by default it ended the wrapper alone (with a core), and the
// command's children outlived it.
constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGHUP, SIGQUIT};
sigset_t g_original_mask;
bool g_blocked = false;
// Forwarded signals this process was started with ignored (nohup's SIGHUP, a script's background
// job's SIGINT): neither forwarded nor made deadly for the command, which would not have had them
// without the wrapper. (Blocked for sigwait, Linux still queues them though ignored.)
bool g_inherited_ignored[NSIG] = {};
sighandler_t g_inherited_sigpipe = SIG_DFL;
bool g_sigpipe_ignored = false;

sigset_t waited_set() {
  sigset_t set;
  sigemptyset(&set);
  for (int s : kForwarded) sigaddset(&set, s);
  sigaddset(&set, SIGCHLD);
  return set;
}

}  // namespace

void block_forwarded_signals() {
  if (g_blocked) return;
  for (int s : kForwarded) {
    struct sigaction old {};
    g_inherited_ignored[s] = ::sigaction(s, nullptr, &old) == 0 && old.sa_handler == SIG_IGN;
  }
  sigset_t set = waited_set();
  pthread_sigmask(SIG_BLOCK, &set, &g_original_mask);
  g_blocked = true;
}

void ignore_broken_pipes() {
  if (g_sigpipe_ignored) return;
  g_inherited_sigpipe = ::signal(SIGPIPE, SIG_IGN);
  if (g_inherited_sigpipe == SIG_ERR) g_inherited_sigpipe = SIG_DFL;
  g_sigpipe_ignored = true;
}

void open_closed_standard_fds() {
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO}) {
    if (::fcntl(fd, F_GETFD) != -1 || errno != EBADF) continue;
    // The lowest free number is `fd` itself, the lower ones being open by now.
    int null_fd = ::open("/dev/null", fd == STDIN_FILENO ? O_RDONLY : O_WRONLY);
    if (null_fd >= 0 && null_fd != fd) {
      ::dup2(null_fd, fd);
      ::close(null_fd);
    }
  }
}

namespace {

// The terminal this process may hand to the job: the first of stdin, stdout, stderr that is a
// terminal whose foreground group is ours (-1 when none, or when running in the background).
int foreground_terminal() {
  for (int fd : {STDIN_FILENO, STDOUT_FILENO, STDERR_FILENO})
    if (::isatty(fd) && ::tcgetpgrp(fd) == ::getpgrp()) return fd;
  return -1;
}

// tcsetpgrp() from a background group raises SIGTTOU unless the calling thread blocks it.
void give_terminal(int fd, pid_t group) {
  sigset_t ttou, old;
  sigemptyset(&ttou);
  sigaddset(&ttou, SIGTTOU);
  ::pthread_sigmask(SIG_BLOCK, &ttou, &old);
  ::tcsetpgrp(fd, group);
  ::pthread_sigmask(SIG_SETMASK, &old, nullptr);
}

constexpr int kEnding[] = {SIGTERM, SIGINT, SIGHUP, SIGQUIT};
bool ends_the_job(int sig) { return std::find(std::begin(kEnding), std::end(kEnding), sig) != std::end(kEnding); }

// Whether any process (zombies included) is still in process group `group`.
bool group_alive(pid_t group) { return ::kill(-group, 0) == 0 || errno == EPERM; }

struct Stray {
  pid_t pid;
  std::string command;
};

// This process's children outside process group `group`: the job's descendants that left its group
// (setsid, setpgid) and were handed to this subreaper when their parent ended. Zombies are left
// to waitpid.
std::vector<Stray> strays_outside(pid_t group) {
  std::vector<Stray> out;
  const pid_t self = ::getpid();
  std::error_code ec;
  for (const auto& e : std::filesystem::directory_iterator("/proc", ec)) {
    const std::string name = e.path().filename().string();
    if (name.empty() || name.find_first_not_of("0123456789") != std::string::npos) continue;
    const auto stat = read_head(e.path() / "stat", 4096);
    if (!stat) continue;
    // "pid (comm) state ppid pgrp ...": comm may hold spaces and parentheses, the last ')' ends it.
    const auto& text = stat.value();
    const auto close = text.rfind(')');
    char state = 0;
    long ppid = 0, pgrp = 0;
    if (close == std::string::npos || std::sscanf(text.c_str() + close + 1, " %c %ld %ld", &state, &ppid, &pgrp) != 3) continue;
    if (ppid != self || pgrp == group || state == 'Z') continue;
    const auto cmdline = read_head(e.path() / "cmdline", 4096);
    std::string command = cmdline ? cmdline.value() : "";
    std::replace(command.begin(), command.end(), '\0', ' ');
    while (!command.empty() && command.back() == ' ') command.pop_back();
    if (command.size() > 80) command = command.substr(0, 77) + "...";
    out.push_back({static_cast<pid_t>(std::stol(name)), command});
  }
  return out;
}

}  // namespace

int take_pending_stop_signal() {
  sigset_t ending;
  sigemptyset(&ending);
  for (int s : kEnding) sigaddset(&ending, s);
  const timespec now{0, 0};
  int sig = 0;
  while ((sig = ::sigtimedwait(&ending, nullptr, &now)) > 0 && g_inherited_ignored[sig]) {
  }
  return sig > 0 ? sig : 0;
}

ChildOutcome run_child(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env_set,
                       const ChildOptions& options) {
  ChildOutcome out;
  if (argv.empty()) {
    out.status = 127;
    out.error = "no command given";
    return out;
  }
  block_forwarded_signals();
  // Everything the child needs is built before fork(): after it, only async-signal-safe calls.
  std::map<std::string, std::string> overrides(env_set.begin(), env_set.end());
  std::vector<std::string> env_strings;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    if (overrides.count(std::string(kv.substr(0, kv.find('='))))) continue;
    env_strings.emplace_back(kv);
  }
  for (const auto& [k, v] : overrides) env_strings.push_back(k + "=" + v);
  std::vector<char*> envp, args;
  for (auto& s : env_strings) envp.push_back(s.data());
  envp.push_back(nullptr);
  std::vector<std::string> argv_copy = argv;
  for (auto& s : argv_copy) args.push_back(s.data());
  args.push_back(nullptr);
  const int terminal = foreground_terminal();
  sigset_t ttou;
  sigemptyset(&ttou);
  sigaddset(&ttou, SIGTTOU);

  int exec_pipe[2];
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    out.status = 126;
    out.error = fmt::format("cannot create a pipe: {}", errno_text(errno));
    return out;
  }
  // As a subreaper this process inherits the job's orphans (a data loader whose parent died), so
  // it can reap them, and a process group of zombies does not look alive for ever.
  int was_subreaper = 0;
  ::prctl(PR_GET_CHILD_SUBREAPER, &was_subreaper);
  ::prctl(PR_SET_CHILD_SUBREAPER, 1);
  struct RestoreSubreaper {
    int was;
    ~RestoreSubreaper() { ::prctl(PR_SET_CHILD_SUBREAPER, was); }
  } restore_subreaper{was_subreaper};
  const pid_t parent = ::getpid();
  const pid_t child = ::fork();
  if (child < 0) {
    out.status = 126;
    out.error = fmt::format("cannot fork: {}", errno_text(errno));
    ::close(exec_pipe[0]);
    ::close(exec_pipe[1]);
    return out;
  }
  if (child == 0) {
    ::close(exec_pipe[0]);
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) ::_exit(128 + SIGTERM);  // the wrapper died before prctl took effect
    // A group of its own: signals go to the whole job, and nothing else of ours gets them.
    ::setpgid(0, 0);
    if (terminal >= 0) {
      ::pthread_sigmask(SIG_BLOCK, &ttou, nullptr);
      ::tcsetpgrp(terminal, ::getpid());
    }
    for (int s : kForwarded) ::signal(s, g_inherited_ignored[s] ? SIG_IGN : SIG_DFL);
    if (g_sigpipe_ignored) ::signal(SIGPIPE, g_inherited_sigpipe);  // as the command would have it without us
    ::pthread_sigmask(SIG_SETMASK, &g_original_mask, nullptr);
    // A failed chdir reports its errno negated, to tell it from a failed exec.
    int err = 0;
    if (!options.cwd.empty() && ::chdir(options.cwd.c_str()) != 0) {
      err = -errno;
    } else {
      ::execvpe(args[0], args.data(), envp.data());
      err = errno;
    }
    [[maybe_unused]] auto n = ::write(exec_pipe[1], &err, sizeof err);
    ::_exit(127);
  }
  // Also here (as a shell does): whichever of the two runs first, the group exists before any
  // signal is forwarded to it.
  ::setpgid(child, child);
  if (terminal >= 0) give_terminal(terminal, child);
  struct TakeTerminalBack {
    int fd;
    ~TakeTerminalBack() {
      if (fd >= 0) give_terminal(fd, ::getpgrp());
    }
  } take_back{terminal};
  ::close(exec_pipe[1]);
  int exec_errno = 0;
  ssize_t got;
  do got = ::read(exec_pipe[0], &exec_errno, sizeof exec_errno); while (got < 0 && errno == EINTR);
  ::close(exec_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    int st;
    ::waitpid(child, &st, 0);
    out.status = exec_errno == ENOENT ? 127 : 126;
    out.error = exec_errno < 0 ? fmt::format("cannot enter the working folder {}: {}", options.cwd, errno_text(-exec_errno))
                               : fmt::format("cannot run '{}': {}", argv[0], errno_text(exec_errno));
    return out;
  }
  out.ran = true;

  using Clock = std::chrono::steady_clock;
  const auto grace = std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(std::max(0.0, options.kill_after_s)));
  std::optional<Clock::time_point> kill_at;   // SIGKILL to the group then
  std::optional<Clock::time_point> give_up;   // after SIGKILL: stop waiting for processes we cannot reap
  // The same for the job's processes outside its group, once the group is gone.
  std::optional<Clock::time_point> strays_kill_at, strays_give_up;
  std::set<pid_t> strays_told;
  bool child_done = false, leftovers_told = false, children_left = false;
  int child_st = 0, ending_signal = 0;
  const sigset_t set = waited_set();
  for (;;) {
    // Reap the command and any orphan of the job handed to us.
    for (;;) {
      int st = 0;
      pid_t done = ::waitpid(-1, &st, WNOHANG);
      if (done <= 0) {
        children_left = done == 0;
        break;
      }
      if (done == child) child_done = true, child_st = st;
    }
    const auto now = Clock::now();
    const bool group_running = group_alive(child);
    if (child_done && !group_running) {
      // The group is gone; what of the job left it (a daemon, a process of setsid) goes too.
      const auto strays = children_left ? strays_outside(child) : std::vector<Stray>{};
      if (strays.empty()) break;
      std::string fresh;
      for (const auto& p : strays) {
        if (!strays_told.insert(p.pid).second) continue;
        fresh += fmt::format("{}pid {} ({})", fresh.empty() ? "" : ", ", p.pid, p.command);
        ::kill(p.pid, SIGTERM);
        ::kill(p.pid, SIGCONT);
      }
      if (!fresh.empty()) {
        out.warnings.push_back(fmt::format("processes that left the command's process group were still running after it ended: {}; "
                                           "sent them SIGTERM (SIGKILL after {:g} s, --kill-after)", fresh, options.kill_after_s));
        if (!strays_kill_at) strays_kill_at = now + grace;
      }
      if (strays_kill_at && now >= *strays_kill_at) {
        if (!strays_give_up) {
          out.warnings.push_back(fmt::format("they were still running {:g} s after SIGTERM; sent SIGKILL (--kill-after)", options.kill_after_s));
          strays_give_up = now + std::chrono::seconds(5);
        } else if (now >= *strays_give_up) {
          out.warnings.push_back("processes that left the command's process group remain after SIGKILL (uninterruptible)");
          break;
        }
        for (const auto& p : strays) ::kill(p.pid, SIGKILL);  // also ones handed over since
      }
    } else if (child_done) {
      if (!leftovers_told && !ending_signal) {
        // The command ended, but processes it started still run in its group: they go too.
        // (After a forwarded SIGTERM, SIGINT or SIGHUP they have had theirs: SIGKILL follows.)
        leftovers_told = true;
        out.warnings.push_back(fmt::format(
            "processes started by the command were still running after it ended; sent them SIGTERM{}",
            kill_at ? "" : fmt::format(" (SIGKILL after {:g} s, --kill-after)", options.kill_after_s)));
        ::kill(-child, SIGTERM);
        ::kill(-child, SIGCONT);  // a stopped process would not act on SIGTERM
        if (!kill_at) kill_at = now + grace;
      }
    }
    if (kill_at && now >= *kill_at && !give_up && group_running) {
      out.warnings.push_back(fmt::format("the command's processes were still running {:g} s after {}; sent SIGKILL to all of them "
                                         "(--kill-after)", options.kill_after_s, ending_signal ? fmt::format("SIG{}", sigabbrev_np(ending_signal)) : "SIGTERM"));
      ::kill(-child, SIGKILL);
      give_up = now + std::chrono::seconds(5);
    }
    if (give_up && now >= *give_up && (group_running || !child_done)) {
      out.warnings.push_back("processes of the command's group remain after SIGKILL (uninterruptible, or not ours to reap)");
      break;
    }
    auto wait = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::milliseconds(200));
    for (const auto& deadline : {give_up ? std::nullopt : kill_at, strays_give_up ? std::nullopt : strays_kill_at})
      if (deadline) wait = std::clamp(std::chrono::duration_cast<std::chrono::nanoseconds>(*deadline - now), std::chrono::nanoseconds(1'000'000), wait);
    timespec ts{0, static_cast<long>(wait.count())};  // also polls waitpid, should a SIGCHLD be merged or missed
    siginfo_t info{};
    int sig = ::sigtimedwait(&set, &info, &ts);
    if (sig <= 0 || sig == SIGCHLD || g_inherited_ignored[sig]) continue;
    // The job runs in its own group, so a terminal's Ctrl-C (when the job does not hold the
    // terminal) and signals sent by a process (kill, scancel, srun, mpirun) reach only us: the
    // whole group gets them.
    ::kill(-child, sig);
    if (ends_the_job(sig) && !kill_at) {
      ending_signal = sig;
      kill_at = Clock::now() + grace;
    }
  }
  if (WIFEXITED(child_st)) {
    out.status = WEXITSTATUS(child_st);
  } else if (WIFSIGNALED(child_st)) {
    out.signal = WTERMSIG(child_st);
    out.status = 128 + out.signal;
  }
  out.stopped_by = ending_signal;
  if (!child_done) {  // only after SIGKILL and 5 s more: it was killed, but is not ours to see
    out.status = 128 + SIGKILL;
    out.signal = SIGKILL;
  }
  return out;
}

}  // namespace scalelens::collect
