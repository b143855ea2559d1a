#pragma once
// Runs a program (no shell: argv as given, argv[0] searched in PATH) and captures what it prints,
// for the scheduler's short commands (sbatch, squeue, scontrol, scancel).
#include <string>
#include <vector>

namespace scalelens {

struct Captured {
  int status = -1;       // exit status; 127 when it could not be started, 128+N when killed by signal N
  std::string out, err;  // standard output and error
  bool ran() const { return status != 127 || !err.empty(); }
};

// `cwd`, when given, is the program's working folder (sbatch submits its job from there).
Captured run_capture(const std::vector<std::string>& argv, const std::string& cwd = {});

// Waits for child `pid` to end (again after a signal interrupts the wait, so that no child is left
// a zombie); its status as Captured::status has it, -1 when it cannot be waited for.
int wait_for_exit(int pid);

// `s` quoted for a POSIX shell ('…', with ' as '\''), unquoted when it is plain.
std::string shell_quote(const std::string& s);
// Words of a command line as a shell splits them: blanks separate, '…' and "…" group, \ escapes.
// Refuses (nullopt-like: ok = false) an unterminated quote.
struct ShellWords {
  std::vector<std::string> words;
  bool ok = true;
};
ShellWords shell_split(const std::string& line);

}  // namespace scalelens
