// Threads default to the cores this process may use (its CPU affinity: SLURM's --cpus-per-task,
// taskset, a cpuset), not every core of the node, which would oversubscribe a shared node.
#include <gtest/gtest.h>

#include <sched.h>

#include <algorithm>

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

}  // namespace
}  // namespace scalelens
