#include "common/parallel.hpp"

#include <charconv>
#include <cmath>
#include <fstream>
#include <limits>
#include <sstream>
#include <string>

#if defined(__linux__)
#include <sched.h>
#include <unistd.h>

#include <cerrno>
#endif

namespace scalelens {

namespace {

std::optional<std::string> first_line_of(const std::filesystem::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) return std::nullopt;
  return line;
}

// By stream, not by size: /proc files report a size of 0.
std::optional<std::string> whole_text_of(const std::filesystem::path& file) {
  std::ifstream in(file);
  if (!in) return std::nullopt;
  std::ostringstream text;
  text << in.rdbuf();
  return std::move(text).str();
}

std::optional<long long> whole_number(std::string_view text) {
  long long value = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<unsigned> cores_for_quota(long long quota, long long period) {
  if (quota <= 0 || period <= 0) return std::nullopt;  // -1 (v1) or unset: no quota
  const long long cores = (quota + period - 1) / period;  // 1.5 cores of time: two threads can use it
  return static_cast<unsigned>(std::min<long long>(cores, std::numeric_limits<unsigned>::max()));
}

// cgroup v2's cpu.max: "max 100000" (no quota) or "200000 100000".
std::optional<unsigned> cores_in_cpu_max(const std::filesystem::path& dir) {
  const auto line = first_line_of(dir / "cpu.max");
  if (!line) return std::nullopt;
  const auto space = line->find(' ');
  if (space == std::string::npos) return std::nullopt;
  const auto quota = whole_number(std::string_view(*line).substr(0, space));
  const auto period = whole_number(std::string_view(*line).substr(space + 1));
  if (!quota || !period) return std::nullopt;  // "max": no quota
  return cores_for_quota(*quota, *period);
}

// cgroup v1's cpu controller: cpu.cfs_quota_us ("-1" when none) over cpu.cfs_period_us.
std::optional<unsigned> cores_in_cfs_quota(const std::filesystem::path& dir) {
  const auto quota = first_line_of(dir / "cpu.cfs_quota_us"), period = first_line_of(dir / "cpu.cfs_period_us");
  if (!quota || !period) return std::nullopt;
  const auto q = whole_number(*quota), p = whole_number(*period);
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

bool lists_controller(std::string_view controllers, std::string_view wanted) {
  while (!controllers.empty()) {
    const auto comma = controllers.find(',');
    if (controllers.substr(0, comma) == wanted) return true;
    if (comma == std::string_view::npos) break;
    controllers.remove_prefix(comma + 1);
  }
  return false;
}

}  // namespace

std::optional<unsigned> cgroup_cpu_quota_cores(std::string_view proc_self_cgroup, const std::filesystem::path& cgroup_root) {
  std::optional<unsigned> tightest;
  auto keep = [&](std::optional<unsigned> cores) {
    if (cores && (!tightest || *cores < *tightest)) tightest = cores;
  };
  std::istringstream lines{std::string(proc_self_cgroup)};
  for (std::string line; std::getline(lines, line);) {
    // "hierarchy-id:controllers:path"; v2's unified hierarchy is "0::path".
    const auto first = line.find(':'), second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string_view controllers = std::string_view(line).substr(first + 1, second - first - 1);
    const std::string_view path = std::string_view(line).substr(second + 1);
    if (line.compare(0, first, "0") == 0 && controllers.empty()) {
      // Pure v2 mounts the unified tree at the root; a hybrid system at root/unified.
      for (const char* mount : {"", "unified"}) {
        const auto dir = cgroup_root / mount;
        std::error_code unreadable;  // counts as absent
        if (std::filesystem::exists(dir / "cgroup.controllers", unreadable)) keep(tightest_up_the_tree(dir, path, cores_in_cpu_max));
      }
    } else if (lists_controller(controllers, "cpu")) {
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
  if (const auto text = whole_text_of("/proc/self/cgroup")) return cgroup_cpu_quota_cores(*text, "/sys/fs/cgroup");
#endif
  return std::nullopt;
}

unsigned available_cores() {
  const unsigned cores = affinity_cores();
  const auto quota = cpu_quota_cores();
  return quota && *quota < cores ? std::max(1u, *quota) : cores;
}

}  // namespace scalelens
