#include "collect/launcher.hpp"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>
#include <map>

#include <fmt/format.h>

#include "common/file_io.hpp"

extern char** environ;

namespace scalelens::collect {
namespace {

constexpr int kForwarded[] = {SIGINT, SIGTERM, SIGUSR1, SIGUSR2, SIGHUP};
sigset_t g_original_mask;
bool g_blocked = false;

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
  sigset_t set = waited_set();
  pthread_sigmask(SIG_BLOCK, &set, &g_original_mask);
  g_blocked = true;
}

ChildOutcome run_child(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env_set) {
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

  int exec_pipe[2];
  if (::pipe2(exec_pipe, O_CLOEXEC) != 0) {
    out.status = 126;
    out.error = fmt::format("cannot create a pipe: {}", errno_text(errno));
    return out;
  }
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
    for (int s : kForwarded) ::signal(s, SIG_DFL);
    ::pthread_sigmask(SIG_SETMASK, &g_original_mask, nullptr);
    ::execvpe(args[0], args.data(), envp.data());
    int err = errno;
    [[maybe_unused]] auto n = ::write(exec_pipe[1], &err, sizeof err);
    ::_exit(127);
  }
  ::close(exec_pipe[1]);
  int exec_errno = 0;
  ssize_t got;
  do got = ::read(exec_pipe[0], &exec_errno, sizeof exec_errno); while (got < 0 && errno == EINTR);
  ::close(exec_pipe[0]);
  if (got == static_cast<ssize_t>(sizeof exec_errno)) {
    int st;
    ::waitpid(child, &st, 0);
    out.status = exec_errno == ENOENT ? 127 : 126;
    out.error = fmt::format("cannot run '{}': {}", argv[0], errno_text(exec_errno));
    return out;
  }
  out.ran = true;

  const sigset_t set = waited_set();
  for (;;) {
    int st = 0;
    pid_t done = ::waitpid(child, &st, WNOHANG);
    if (done == child) {
      if (WIFEXITED(st)) {
        out.status = WEXITSTATUS(st);
      } else if (WIFSIGNALED(st)) {
        out.signal = WTERMSIG(st);
        out.status = 128 + out.signal;
      }
      return out;
    }
    if (done < 0 && errno != EINTR) {
      out.status = 127;
      out.error = fmt::format("lost the child: {}", errno_text(errno));
      return out;
    }
    siginfo_t info{};
    timespec wait{0, 200'000'000};  // also polls waitpid, should a SIGCHLD be merged or missed
    int sig = ::sigtimedwait(&set, &info, &wait);
    if (sig <= 0 || sig == SIGCHLD) continue;
    // A terminal's Ctrl-C (si_code SI_KERNEL) already reached the child, which shares our process
    // group; forwarding it too would deliver it twice. Signals sent by a process (kill, scancel,
    // srun, mpirun) reach only us, so they are passed on.
    if (info.si_code != SI_KERNEL) ::kill(child, sig);
  }
}

}  // namespace scalelens::collect
