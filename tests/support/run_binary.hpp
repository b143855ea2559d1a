#pragma once
// Runs the real scalelens binary as a child process and captures what it prints.
#include <sys/wait.h>

#include <cstdio>
#include <string>

#include "support/test_support.hpp"

namespace scalelens::testing {

struct Output {
  int exit_code = -1;
  std::string out, err;
};

// Runs a shell command line; standard input is /dev/null.
inline Output run_command(const std::string& command) {
  ScratchDir tmp;
  auto err_path = tmp / "stderr";
  std::string cmd = "( " + command + " ) </dev/null 2>" + err_path.string();
  Output o;
  FILE* p = ::popen(cmd.c_str(), "r");
  if (!p) return o;
  char buf[65536];
  std::size_t n;
  while ((n = std::fread(buf, 1, sizeof buf, p)) > 0) o.out.append(buf, n);
  int status = ::pclose(p);
  o.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  o.err = slurp(err_path);
  return o;
}

// `args` is a shell fragment (quote paths yourself); `env` goes before the binary ("cd X &&", "A=1").
inline Output run_scalelens(const std::string& args, const std::string& env = {}) {
  return run_command(env + " " SCALELENS_BIN " " + args);
}

inline std::string quoted(const std::filesystem::path& p) { return "'" + p.string() + "'"; }

}  // namespace scalelens::testing
