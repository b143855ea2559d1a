// The library's shared loop on real MPI processes (tests/cli/parallel_cli_test.cpp runs it):
//   shared_for_probe gather  items of 0..6000 bytes, in messages of at most 1000 bytes: rank 0
//                            checks every item's bytes and prints "gathered N items"
//   shared_for_probe fail    the item "trace-2.json" throws on whichever process holds it
//   shared_for_probe cores   each process prints the CPUs it may run on ("rank R cpus 0 1"), and
//                            rank 0 again once the group is dropped ("alone cpus 0 1")
#include <sched.h>

#include <cstdio>
#include <stdexcept>
#include <string>

#include "process_group.hpp"

using namespace scalelens;

namespace {
std::string content(std::size_t i) { return std::string((i * 997) % 6001, static_cast<char>('a' + i % 26)); }

std::string cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return " unknown";
  std::string out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out += " " + std::to_string(c);
  return out;
}
}  // namespace

int main(int argc, char** argv) {
  const std::string mode = argc > 1 ? argv[1] : "gather";
  auto group = join_mpi_job(1000);
  if (mode == "cores") {
    std::printf("rank %d cpus%s\n", group->rank(), cpus().c_str());
    std::fflush(stdout);
    const bool first = group->rank() == 0;
    group.reset();
    if (first) std::printf("alone cpus%s\n", cpus().c_str());
    return 0;
  }
  std::string greeting = group->rank() == 0 ? std::string(2500, 'g') : std::string();
  group->broadcast(greeting);
  if (greeting != std::string(2500, 'g')) group->abort("the broadcast arrived wrong");

  SharedWork<std::string> w;
  const std::size_t n = mode == "fail" ? 4 : 40;
  for (std::size_t i = 0; i < n; ++i) w.sizes.push_back(content(i).size());
  w.threads = 2;
  w.work = [&](std::size_t i) {
    if (mode == "fail" && i == 2) throw std::runtime_error("not a Kineto trace after all");
    return content(i);
  };
  w.name = [](std::size_t i) { return "trace-" + std::to_string(i) + ".json"; };
  w.encode = [](const std::string& s) { return s; };
  w.decode = [](std::string_view s) { return std::optional<std::string>(std::string(s)); };
  auto all = shared_for(*group, w);
  if (group->rank() != 0) return 0;
  for (std::size_t i = 0; i < n; ++i)
    if (!all[i] || *all[i] != content(i)) group->abort("item " + std::to_string(i) + " arrived wrong");
  std::printf("gathered %zu items from %d processes\n", all.size(), group->size());
  return 0;
}
