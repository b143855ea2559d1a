// Threads default to the cores this process may use (its CPU affinity: SLURM's --cpus-per-task,
// taskset, a cpuset), not every core of the node, which would oversubscribe a shared node.
#include <gtest/gtest.h>

#include <sched.h>

#include "common/parallel.hpp"

namespace scalelens {
namespace {

TEST(Parallel, DefaultThreadsFollowTheProcessesCpuAffinity) {
  cpu_set_t all;
  CPU_ZERO(&all);
  ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
  EXPECT_EQ(available_cores(), static_cast<unsigned>(CPU_COUNT(&all)));
  int first = 0;
  while (!CPU_ISSET(first, &all)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  const unsigned cores = available_cores(), threads = default_threads(0), asked = default_threads(3);
  ASSERT_EQ(sched_setaffinity(0, sizeof(all), &all), 0);  // restored before anything can fail
  EXPECT_EQ(cores, 1u);
  EXPECT_EQ(threads, 1u);
  EXPECT_EQ(asked, 3u);  // a number asked for is kept
}

}  // namespace
}  // namespace scalelens
