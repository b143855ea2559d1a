#pragma once
// Runs the training command as a child process and waits for it, forwarding the signals a
// scheduler sends (SIGINT, SIGTERM, SIGUSR1/2 before a time limit, SIGHUP).
#include <string>
#include <utility>
#include <vector>

namespace scalelens::collect {

// Blocks the forwarded signals and SIGCHLD in the calling thread, so that threads started after
// it (the sampler) never take them and the launcher can wait for them with sigtimedwait().
// Call before starting any thread. The child gets the mask as it was before.
void block_forwarded_signals();

struct ChildOutcome {
  int status = 0;     // the exit status for the wrapper: the child's code, 128+signal if killed
  bool ran = false;   // false: it could not be started (status 126/127 as in a shell)
  std::string error;  // why it could not be started
  int signal = 0;     // the signal that ended it, if any
};

// Starts argv[0] (searched in PATH) with the current environment plus `env_set`, waits for it
// and returns how it ended. If this process dies, the child gets SIGTERM (PR_SET_PDEATHSIG).
ChildOutcome run_child(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env_set);

}  // namespace scalelens::collect
