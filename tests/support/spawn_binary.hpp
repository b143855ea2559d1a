#pragma once
// Starts the real scalelens binary as a process of its own, to signal it or run two at once, and
// waits for it.
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <functional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "common/text.hpp"
#include "support/test_support.hpp"

extern char** environ;

namespace scalelens::testing {

using namespace std::chrono_literals;

// Standard descriptors of the spawned wrapper: {target, source}, source -1 = closed.
using FdPlan = std::vector<std::pair<int, int>>;

// Starts the scalelens binary with `args` and extra environment; returns its pid. Standard input
// is /dev/null, the others are this process's unless `fds` says otherwise.
inline pid_t spawn_scalelens(const std::vector<std::string>& args, const std::vector<std::string>& extra_env = {},
                      const FdPlan& fds = {}) {
  std::vector<std::string> argv_s{SCALELENS_BIN};
  argv_s.insert(argv_s.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (auto& s : argv_s) argv.push_back(s.data());
  argv.push_back(nullptr);
  std::vector<std::string> env_s;
  for (char** e = environ; *e; ++e) {
    std::string kv(*e);
    // Keep the launcher variables of whatever runs the tests out of the wrappers' way.
    if (kv.rfind("SLURM_", 0) == 0 || kv.rfind("OMPI_", 0) == 0 || kv.rfind("PMIX_", 0) == 0 || kv.rfind("PMI_", 0) == 0 ||
        kv.rfind("RANK=", 0) == 0 || kv.rfind("WORLD_SIZE=", 0) == 0 || kv.rfind("LOCAL_RANK=", 0) == 0)
      continue;
    bool overridden = false;
    for (const auto& x : extra_env) overridden |= kv.compare(0, x.find('=') + 1, x, 0, x.find('=') + 1) == 0;
    if (overridden) continue;
    env_s.push_back(kv);
  }
  env_s.insert(env_s.end(), extra_env.begin(), extra_env.end());
  std::vector<char*> envp;
  for (auto& s : env_s) envp.push_back(s.data());
  envp.push_back(nullptr);
  pid_t pid = -1;
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
  for (auto [target, source] : fds) {
    if (source < 0) posix_spawn_file_actions_addclose(&fa, target);
    else posix_spawn_file_actions_adddup2(&fa, source, target);
  }
  EXPECT_EQ(posix_spawn(&pid, SCALELENS_BIN, &fa, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&fa);
  return pid;
}

// Exit status as a shell reports it; -1 on timeout (the process is then killed).
inline int wait_status(pid_t pid, std::chrono::milliseconds limit = 8000ms) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  int st = 0;
  while (::waitpid(pid, &st, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      ::kill(pid, SIGKILL);
      ::waitpid(pid, &st, 0);
      return -1;
    }
    std::this_thread::sleep_for(5ms);
  }
  return WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

inline bool wait_for(const std::function<bool()>& cond, std::chrono::milliseconds limit = 5000ms) {
  auto deadline = std::chrono::steady_clock::now() + limit;
  while (!cond()) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(5ms);
  }
  return true;
}

// Whether process `pid` is gone (or a zombie about to be): /proc/<pid>/stat's state field.
inline bool process_gone(pid_t pid) {
  auto stat = slurp("/proc/" + std::to_string(pid) + "/stat");
  return stat.empty() || stat.find(") Z ") != std::string::npos;
}

// The process ids in `file`, one a line (as `echo $!` writes them).
inline std::vector<pid_t> pids_in(const std::filesystem::path& file) {
  std::vector<pid_t> pids;
  const std::string text = slurp(file);
  LineCursor lines(text);
  std::string_view line;
  while (lines.next(line))
    if (auto v = parse_int(trim(line))) pids.push_back(static_cast<pid_t>(*v));
  return pids;
}

}  // namespace scalelens::testing
