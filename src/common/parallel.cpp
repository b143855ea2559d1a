#include "common/parallel.hpp"

#include <algorithm>
#include <cstdint>
#include <limits>
#include <string>

#include "common/file_io.hpp"
#include "common/text.hpp"

#if defined(__linux__)
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#endif

namespace scalelens {

namespace {

// The first line of a cgroup or /proc file (read_head reads past the size of 0 they report).
std::optional<std::string> first_line_of(const std::filesystem::path& file) {
  auto text = read_head(file, 1 << 16);
  if (!text) return std::nullopt;
  std::string line = std::move(text.value());
  line.resize(std::min(line.size(), line.find('\n')));
  return line;
}

std::optional<unsigned> cores_for_quota(std::int64_t quota, std::int64_t period) {
  if (quota <= 0 || period <= 0) return std::nullopt;  // -1 (v1) or unset: no quota
  const std::int64_t cores = quota / period + (quota % period != 0);  // 1.5 cores of time: two threads can use it
  return static_cast<unsigned>(std::min<std::int64_t>(cores, std::numeric_limits<unsigned>::max()));
}

// cgroup v2's cpu.max: "max 100000" (no quota) or "200000 100000".
std::optional<unsigned> cores_in_cpu_max(const std::filesystem::path& dir) {
  const auto line = first_line_of(dir / "cpu.max");
  if (!line) return std::nullopt;
  const auto space = line->find(' ');
  if (space == std::string::npos) return std::nullopt;
  const auto quota = parse_int(std::string_view(*line).substr(0, space));
  const auto period = parse_int(std::string_view(*line).substr(space + 1));
  if (!quota || !period) return std::nullopt;  // "max": no quota
  return cores_for_quota(*quota, *period);
}

// cgroup v1's cpu controller: cpu.cfs_quota_us ("-1" when none) over cpu.cfs_period_us.
std::optional<unsigned> cores_in_cfs_quota(const std::filesystem::path& dir) {
  const auto quota = first_line_of(dir / "cpu.cfs_quota_us"), period = first_line_of(dir / "cpu.cfs_period_us");
  if (!quota || !period) return std::nullopt;
  const auto q = parse_int(*quota), p = parse_int(*period);
  if (!q || !p) return std::nullopt;
  return cores_for_quota(*q, *p);
}

// The tightest quota of the cgroup at `mount / path` and its parents up to the mount. A container
// often sees its own cgroup mounted at the root while /proc/self/cgroup names the host's path; the
// walk then finds no folder until the mount itself, which holds the container's quota.
template <class Read>
std::optional<unsigned> tightest_up_the_tree(const std::filesystem::path& mount, std::string_view path, Read read) {
  std::optional<unsigned> tightest;
  std::filesystem::path relative = std::filesystem::path(std::string(path)).relative_path();
  for (;;) {
    if (const auto cores = read(mount / relative); cores && (!tightest || *cores < *tightest)) tightest = cores;
    if (relative.empty()) break;
    relative = relative.parent_path();
  }
  return tightest;
}

}  // namespace

std::optional<unsigned> cgroup_cpu_quota_cores(std::string_view proc_self_cgroup, const std::filesystem::path& cgroup_root) {
  std::optional<unsigned> tightest;
  auto keep = [&](std::optional<unsigned> cores) {
    if (cores && (!tightest || *cores < *tightest)) tightest = cores;
  };
  std::vector<std::string_view> listed;
  LineCursor lines(proc_self_cgroup);
  for (std::string_view line; lines.next(line);) {
    // "hierarchy-id:controllers:path"; v2's unified hierarchy is "0::path".
    const auto first = line.find(':'), second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string_view controllers = line.substr(first + 1, second - first - 1);
    const std::string_view path = line.substr(second + 1);
    if (line.compare(0, first, "0") == 0 && controllers.empty()) {
      // Pure v2 mounts the unified tree at the root; a hybrid system at root/unified.
      for (const char* mount : {"", "unified"}) {
        const auto dir = cgroup_root / mount;
        std::error_code unreadable;  // counts as absent
        if (std::filesystem::exists(dir / "cgroup.controllers", unreadable)) keep(tightest_up_the_tree(dir, path, cores_in_cpu_max));
      }
      continue;
    }
    split_csv(controllers, listed);
    if (std::find(listed.begin(), listed.end(), "cpu") != listed.end()) {
      // v1 mounts the cpu controller under its controller list's name ("cpu,cpuacct") or "cpu".
      for (const auto& mount : {std::string(controllers), std::string("cpu")}) {
        const auto dir = cgroup_root / mount;
        std::error_code unreadable;
        if (std::filesystem::is_directory(dir, unreadable)) {
          keep(tightest_up_the_tree(dir, path, cores_in_cfs_quota));
          break;
        }
      }
    }
  }
  return tightest;
}

unsigned affinity_cores() {
#if defined(__linux__)
  // The process's mask (its main thread's), in a set large enough for any machine: CPU_SETSIZE is
  // 1,024, and sched_getaffinity fails with EINVAL on a kernel configured for more.
  for (int cpus = CPU_SETSIZE; cpus <= (1 << 20); cpus *= 2) {
    cpu_set_t* set = CPU_ALLOC(cpus);
    if (!set) break;
    const std::size_t bytes = CPU_ALLOC_SIZE(cpus);
    CPU_ZERO_S(bytes, set);
    const int got = sched_getaffinity(getpid(), bytes, set);
    const int error = errno;  // before free(), which may change it
    const int count = got == 0 ? CPU_COUNT_S(bytes, set) : 0;
    CPU_FREE(set);
    if (got == 0 && count > 0) return static_cast<unsigned>(count);
    if (got != 0 && error != EINVAL) break;
  }
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

std::optional<unsigned> cpu_quota_cores() {
#if defined(__linux__)
  if (const auto text = read_head("/proc/self/cgroup", 1 << 20)) return cgroup_cpu_quota_cores(text.value(), "/sys/fs/cgroup");
#endif
  return std::nullopt;
}

unsigned available_cores() {
  const unsigned cores = affinity_cores();
  const auto quota = cpu_quota_cores();
  return quota && *quota < cores ? std::max(1u, *quota) : cores;
}

}  // namespace scalelens
