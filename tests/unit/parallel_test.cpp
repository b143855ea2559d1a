// Threads default to the cores this process may use (its CPU affinity: SLURM's --cpus-per-task,
// taskset, a cpuset), not every core of the node, which would oversubscribe a shared node.
#include <gtest/gtest.h>

#include <sched.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <functional>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include "common/parallel.hpp"
#include "support/test_support.hpp"

namespace scalelens {
namespace {

TEST(Parallel, DefaultThreadsFollowTheProcessesCpuAffinity) {
  cpu_set_t all;
  CPU_ZERO(&all);
  ASSERT_EQ(sched_getaffinity(0, sizeof(all), &all), 0);
  // With one CPU allowed there is nothing to narrow: the test could not tell right from wrong.
  if (CPU_COUNT(&all) < 2) GTEST_SKIP() << "this machine lets the test use one CPU";
  EXPECT_EQ(affinity_cores(), static_cast<unsigned>(CPU_COUNT(&all)));
  EXPECT_EQ(available_cores(), std::min(affinity_cores(), cpu_quota_cores().value_or(~0u)));
  int first = 0;
  while (!CPU_ISSET(first, &all)) ++first;
  cpu_set_t one;
  CPU_ZERO(&one);
  CPU_SET(first, &one);
  ASSERT_EQ(sched_setaffinity(0, sizeof(one), &one), 0);
  const unsigned cores = available_cores(), threads = default_threads(0), asked = default_threads(3);
  const unsigned allowed = affinity_cores();
  ASSERT_EQ(sched_setaffinity(0, sizeof(all), &all), 0);  // restored before anything can fail
  EXPECT_EQ(allowed, 1u);
  EXPECT_EQ(cores, 1u);
  EXPECT_EQ(threads, 1u);
  EXPECT_EQ(asked, 3u);  // a number asked for is kept
}

// The cgroup folders below are laid out as the kernel shows them: cgroup v2 (Debian 12's default)
// with the unified tree at /sys/fs/cgroup, and a v1 system with cpu and cpuacct mounted together.
TEST(Parallel, ACgroupV2QuotaIsTheTightestOfTheCgroupAndItsParentsRoundedUp) {
  testing::ScratchDir root;
  root.write("cgroup.controllers", "cpuset cpu io memory pids\n");
  root.write("system.slice/cpu.max", "max 100000\n");
  root.write("system.slice/docker-1f2e.scope/cpu.max", "250000 100000\n");  // docker --cpus=2.5
  const std::string v2 = "0::/system.slice/docker-1f2e.scope\n";
  EXPECT_EQ(cgroup_cpu_quota_cores(v2, root.path()), 3u);  // 2.5 cores of time keep three threads busy

  root.write("system.slice/cpu.max", "100000 100000\n");  // the parent allows one core
  EXPECT_EQ(cgroup_cpu_quota_cores(v2, root.path()), 1u);

  root.write("system.slice/cpu.max", "max 100000\n");
  root.write("system.slice/docker-1f2e.scope/cpu.max", "max 100000\n");
  EXPECT_EQ(cgroup_cpu_quota_cores(v2, root.path()), std::nullopt);
}

TEST(Parallel, ACgroupV1QuotaIsReadFromTheCpuControllersMount) {
  testing::ScratchDir root;
  root.write("cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  root.write("cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  root.write("cpu,cpuacct/docker/4ab1/cpu.cfs_quota_us", "200000\n");
  root.write("cpu,cpuacct/docker/4ab1/cpu.cfs_period_us", "100000\n");
  const std::string v1 =
      "12:pids:/docker/4ab1\n4:memory:/docker/4ab1\n3:cpu,cpuacct:/docker/4ab1\n2:cpuset:/docker/4ab1\n0::/docker/4ab1\n";
  EXPECT_EQ(cgroup_cpu_quota_cores(v1, root.path()), 2u);

  // Inside the container its own cgroup is the mount's root while the path is still the host's.
  testing::ScratchDir inside;
  inside.write("cpu,cpuacct/cpu.cfs_quota_us", "50000\n");
  inside.write("cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  EXPECT_EQ(cgroup_cpu_quota_cores(v1, inside.path()), 1u);

  inside.write("cpu,cpuacct/cpu.cfs_quota_us", "-1\n");  // no quota
  EXPECT_EQ(cgroup_cpu_quota_cores(v1, inside.path()), std::nullopt);
}

TEST(Parallel, UnreadableOrMalformedQuotasSetNoLimit) {
  testing::ScratchDir root;
  root.write("cgroup.controllers", "cpu\n");
  root.write("cpu.max", "lots 100000\n");
  EXPECT_EQ(cgroup_cpu_quota_cores("0::/\n", root.path()), std::nullopt);
  root.write("cpu.max", "100000 0\n");
  EXPECT_EQ(cgroup_cpu_quota_cores("0::/\n", root.path()), std::nullopt);
  EXPECT_EQ(cgroup_cpu_quota_cores("not a cgroup line\n", root.path()), std::nullopt);
  EXPECT_EQ(cgroup_cpu_quota_cores("0::/\n", root / "missing"), std::nullopt);
}

// Without exceptions every item runs exactly once, whatever the threads, and progress ends at n.
TEST(Parallel, EveryItemRunsOnceAndProgressEndsAtTheCount) {
  for (unsigned threads : {1u, 2u, 4u, 9u}) {
    std::vector<std::atomic<int>> runs(257);
    std::size_t last_done = 0, calls = 0;
    parallel_for(runs.size(), threads, [&](std::size_t i) { runs[i].fetch_add(1); },
                 [&](std::size_t done, std::size_t n) {
                   EXPECT_EQ(n, runs.size());
                   EXPECT_GE(done, last_done);
                   last_done = done, ++calls;
                 });
    for (const auto& r : runs) EXPECT_EQ(r.load(), 1) << threads << " threads";
    EXPECT_EQ(last_done, runs.size());
    EXPECT_GE(calls, 1u);
  }
}

// An item that throws, on a worker thread or on the caller's, reaches the caller as that exception
// after every thread joined (an escape from a thread would have ended this test's process), and
// no item is started after it.
TEST(Parallel, AnItemsExceptionReachesTheCallerAndStopsNewItems) {
  for (unsigned threads : {1u, 2u, 4u}) {
    for (bool with_progress : {false, true}) {
      const std::size_t n = 10000, bad = 37;
      std::atomic<std::size_t> started{0}, after_bad{0};
      std::atomic<bool> bad_thrown{false};
      std::function<void(std::size_t, std::size_t)> progress;
      if (with_progress) progress = [](std::size_t, std::size_t) {};
      try {
        parallel_for(n, threads, [&](std::size_t i) {
          started.fetch_add(1);
          if (bad_thrown.load()) after_bad.fetch_add(1);
          if (i == bad) {
            bad_thrown.store(true);
            throw std::runtime_error("item 37 is unreadable");
          }
          // Long enough that the other threads are still at work when item 37 throws.
          std::this_thread::sleep_for(std::chrono::microseconds(50));
        }, progress);
        ADD_FAILURE() << "no exception reached the caller";
      } catch (const std::runtime_error& e) {
        EXPECT_STREQ(e.what(), "item 37 is unreadable");
      }
      // A thread may start an item or two while the exception is being thrown; without the stop,
      // thousands would follow.
      EXPECT_LT(after_bad.load(), 100u) << threads << " threads";
      EXPECT_LT(started.load(), n);
    }
  }
}

// When several items throw, one of their exceptions is raised, and each thread's is caught.
TEST(Parallel, OfManyFailingItemsOneExceptionIsRaised) {
  try {
    parallel_for(64, 4, [](std::size_t i) { throw std::out_of_range("item " + std::to_string(i)); });
    ADD_FAILURE() << "no exception reached the caller";
  } catch (const std::out_of_range& e) {
    EXPECT_EQ(std::string(e.what()).rfind("item ", 0), 0u) << e.what();
  }
}

// A progress callback that throws (the caller's own, on the caller's thread) is carried the same
// way, after the workers joined, and the final progress call is not made.
TEST(Parallel, AProgressCallbackThatThrowsReachesTheCaller) {
  std::atomic<std::size_t> ran{0};
  std::size_t calls = 0;
  EXPECT_THROW(parallel_for(1000, 3, [&](std::size_t) {
                 ran.fetch_add(1);
                 std::this_thread::sleep_for(std::chrono::microseconds(20));
               },
                            [&](std::size_t, std::size_t) {
                              if (++calls == 5) throw std::length_error("stop here");
                            }),
               std::length_error);
  EXPECT_EQ(calls, 5u);
  EXPECT_LT(ran.load(), 1000u);
}

}  // namespace
}  // namespace scalelens
