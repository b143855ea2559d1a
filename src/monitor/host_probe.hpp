#pragma once
// Host samples (host.csv): CPU utilization and used memory from /proc, CPU package energy from
// /sys/class/powercap (RAPL) where it is readable. Roots are options so tests can use a fake tree.
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "model/study.hpp"
#include "monitor/energy_counter.hpp"

namespace scalelens::monitor {

struct HostProbeOptions {
  std::filesystem::path proc = "/proc";
  std::filesystem::path powercap = "/sys/class/powercap";
};

class HostProbe {
 public:
  explicit HostProbe(HostProbeOptions options = {});
  // One sample; the first has no CPU utilization (it needs two readings). cpu_energy_uj is
  // counted from the first sample, across counter wraps, summed over CPU packages.
  HostSample read(std::int64_t t_ns);
  // Why there is no CPU energy ("" when there is).
  const std::string& energy_missing() const { return energy_missing_; }

 private:
  struct Package {
    std::filesystem::path energy_file;
    EnergyCounter counter;
  };
  HostProbeOptions options_;
  std::vector<Package> packages_;
  std::string energy_missing_;
  std::uint64_t last_busy_ = 0, last_total_ = 0;
  bool have_cpu_ = false;
};

}  // namespace scalelens::monitor
