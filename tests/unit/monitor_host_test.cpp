// Host sampling from /proc and /sys/class/powercap, on a hand-made tree and on the real one.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <thread>

#include "monitor/host_probe.hpp"
#include "support/test_support.hpp"

using namespace scalelens::monitor;
using scalelens::testing::ScratchDir;

TEST(EnergyCounter, GrowsAcrossAWrapAndIgnoresAnUnknownReset) {
  EnergyCounter c(1000);
  c.add(900);
  EXPECT_EQ(c.add(950), 50u);
  EXPECT_EQ(c.add(30), 50u + 50 + 30);  // wrapped at 1000
  EnergyCounter no_range;
  no_range.add(500);
  EXPECT_EQ(no_range.add(100), 0u);  // a reset: the energy since it is unknown, not invented
  EXPECT_EQ(no_range.add(160), 60u);
}

TEST(HostProbe, CpuMemoryAndPackageEnergyFromAFakeTree) {
  ScratchDir d;
  d.write("proc/stat", "cpu  100 0 100 800 0 0 0 0 0 0\ncpu0 1 1 1 1\n");
  d.write("proc/meminfo", "MemTotal:       16000000 kB\nMemFree:  1 kB\nMemAvailable:   12000000 kB\n");
  d.write("pc/intel-rapl:0/energy_uj", "999000\n");
  d.write("pc/intel-rapl:0/max_energy_range_uj", "1000000\n");
  d.write("pc/intel-rapl:0:0/energy_uj", "5\n");  // a sub-zone: must not be counted
  d.write("pc/intel-rapl:1/energy_uj", "10\n");
  HostProbe probe({d / "proc", d / "pc"});
  EXPECT_EQ(probe.energy_missing(), "");
  auto a = probe.read(1);
  EXPECT_TRUE(std::isnan(a.cpu_util_pct)) << "needs two readings";
  EXPECT_DOUBLE_EQ(a.mem_used_bytes, 4000000.0 * 1024);
  EXPECT_DOUBLE_EQ(a.cpu_energy_uj, 0);
  // 100 more busy jiffies out of 400: 25 %. Package 0 wraps: 999000 → 1000000 → 500 = 1500 µJ.
  d.write("proc/stat", "cpu  150 0 150 1100 0 0 0 0 0 0\n");
  d.write("pc/intel-rapl:0/energy_uj", "500\n");
  d.write("pc/intel-rapl:1/energy_uj", "20\n");
  auto b = probe.read(2);
  EXPECT_DOUBLE_EQ(b.cpu_util_pct, 25.0);
  EXPECT_DOUBLE_EQ(b.cpu_energy_uj, 1500 + 10);
}

TEST(HostProbe, NoPowercapIsAReasonNotAFailure) {
  ScratchDir d;
  HostProbe probe({"/proc", d / "none"});
  EXPECT_NE(probe.energy_missing().find("no RAPL package zone"), std::string::npos);
  probe.read(1);
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // a few clock ticks of /proc/stat
  auto s = probe.read(2);  // the real /proc of this machine
  EXPECT_TRUE(s.cpu_util_pct >= 0 && s.cpu_util_pct <= 100) << s.cpu_util_pct;
  EXPECT_GT(s.mem_used_bytes, 0);
  EXPECT_TRUE(std::isnan(s.cpu_energy_uj));
}
