#pragma once
// Runs the training command as a child process in a process group of its own and waits for it,
// forwarding the signals a scheduler sends (SIGINT, SIGTERM, SIGUSR1/2 before a time limit,
// SIGHUP, SIGQUIT) to the whole group, so that the job's grandchildren (torchrun workers, data loaders,
// `bash -c` children) get them too, and stopping whatever of the group outlives the command.
#include <string>
#include <utility>
#include <vector>

namespace scalelens::collect {

// Blocks the forwarded signals and SIGCHLD in the calling thread, so that threads started after
// it (the sampler) never take them and the launcher can wait for them with sigtimedwait().
// Call before starting any thread. The child gets the mask as it was before.
void block_forwarded_signals();

// Ignores SIGPIPE in this process: a closed pipe on stderr then fails a message with EPIPE
// instead of killing the wrapper before its command starts. The child gets back the disposition
// this process was started with.
void ignore_broken_pipes();

// Opens /dev/null onto whichever of fds 0, 1, 2 is closed: otherwise the next files opened (the
// run folder's) would get those numbers and the wrapper's messages would be written into them.
void open_closed_standard_fds();

struct ChildOutcome {
  int status = 0;     // the exit status for the wrapper: the child's code, 128+signal if killed
  bool ran = false;   // false: it could not be started (status 126/127 as in a shell)
  std::string error;  // why it could not be started
  int signal = 0;     // the signal that ended it, if any
  // The terminating signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) this process was sent, and forwarded
  // to the job, while it waited; 0 if none. A caller running several commands stops on it.
  int stopped_by = 0;
  std::vector<std::string> warnings;  // leftovers stopped, SIGKILL after the grace period, ...
};

// A terminating signal (SIGINT, SIGTERM, SIGHUP, SIGQUIT) sent to this process while the forwarded
// signals are blocked and no command runs (between two commands): taken, so it is not forwarded
// to the next command, and returned; 0 if none is pending.
int take_pending_stop_signal();

struct ChildOptions {
  // Seconds between a terminating signal (SIGTERM, SIGINT, SIGHUP, SIGQUIT) forwarded to the job's group,
  // or the end of the command with processes of its group still running, and SIGKILL to the group.
  double kill_after_s = 10.0;
  // The command's working folder ("" = this process's).
  std::string cwd;
};

// Starts argv[0] (searched in PATH) with the current environment plus `env_set` as the leader of
// a new process group (given the terminal when this process had it), waits for it and returns how
// it ended, once no process of its group is left. If this process dies, the child gets SIGTERM
// (PR_SET_PDEATHSIG).
ChildOutcome run_child(const std::vector<std::string>& argv, const std::vector<std::pair<std::string, std::string>>& env_set,
                       const ChildOptions& options = {});

}  // namespace scalelens::collect
