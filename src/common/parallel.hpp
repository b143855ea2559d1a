#pragma once
// The one work-sharing loop of the library: items handed out one at a time from an atomic
// counter, so a large item (one big trace, one big run) never leaves the other threads waiting
// behind a fixed split.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <exception>
#include <filesystem>
#include <functional>
#include <mutex>
#include <optional>
#include <string_view>
#include <system_error>
#include <thread>
#include <vector>

namespace scalelens {

// The cores this process may run on: its CPU affinity (what SLURM's --cpus-per-task, taskset or a
// container's cpuset allow), lowered to a CPU quota where its cgroup sets one (docker --cpus,
// systemd's CPUQuota), not every core of the machine, which hardware_concurrency counts.
unsigned available_cores();
// Its two halves: the CPUs of the process's affinity mask, and the whole cores its cgroup's CPU
// quota pays for (nullopt: no quota), which every process in that cgroup shares.
unsigned affinity_cores();
std::optional<unsigned> cpu_quota_cores();

// The whole cores a cgroup's CPU quota allows, from the text of /proc/self/cgroup and the cgroup
// file system mounted at `cgroup_root` (/sys/fs/cgroup): cgroup v2's cpu.max or v1's
// cpu.cfs_quota_us over cpu.cfs_period_us, the tightest of the process's cgroup and its parents,
// rounded up. nullopt when no quota is set or none can be read.
std::optional<unsigned> cgroup_cpu_quota_cores(std::string_view proc_self_cgroup, const std::filesystem::path& cgroup_root);

// Threads to use when the caller says 0: every core this process may use.
inline unsigned default_threads(unsigned requested) { return requested ? requested : available_cores(); }

// Runs `work(i)` for i in [0, n) on up to `threads` threads (the caller's among them); `progress`,
// when given, is called from the caller's thread with (done, n) between items and once at the end.
// When `stop` is given and becomes true, no new item is started (those running finish).
// An exception from any item, on any thread, stops new items and is raised again on the caller's
// thread once every thread has joined: the first one thrown, the others dropped. A worker thread
// must never let one escape, which would end the program.
template <class Work>
void parallel_for(std::size_t n, unsigned threads, Work&& work,
                  const std::function<void(std::size_t, std::size_t)>& progress = {}, const std::atomic<bool>* stop = nullptr) {
  std::atomic<std::size_t> next{0}, done{0};
  std::atomic<bool> failing{false};
  std::exception_ptr failure;
  std::mutex failure_mutex;
  auto stopped = [&] {
    return failing.load(std::memory_order_relaxed) || (stop && stop->load(std::memory_order_relaxed));
  };
  // Runs `step` so that what it throws is kept, not thrown past its thread; false once it threw.
  auto guarded = [&](auto&& step) {
    try {
      step();
      return true;
    } catch (...) {
      std::lock_guard lock(failure_mutex);
      if (!failure) failure = std::current_exception();
      failing.store(true, std::memory_order_relaxed);
      return false;
    }
  };
  auto worker = [&] {
    for (std::size_t i; !stopped() && (i = next.fetch_add(1)) < n;)
      if (guarded([&] { work(i); })) done.fetch_add(1);
  };
  std::vector<std::thread> pool;
  const unsigned extra = threads > 1 ? static_cast<unsigned>(std::min<std::size_t>(threads - 1, n)) : 0;
  pool.reserve(extra);  // before any thread starts: adding one then cannot fail for memory
  for (unsigned t = 0; t < extra; ++t) {
    try {
      pool.emplace_back(worker);
    } catch (const std::system_error&) {
      break;  // no more threads to be had: the ones started, and this one, share the items
    }
  }
  if (progress) {
    for (std::size_t i; !stopped() && (i = next.fetch_add(1)) < n;)
      if (guarded([&] { work(i); })) guarded([&] { progress(done.fetch_add(1) + 1, n); });
  } else {
    worker();
  }
  for (auto& t : pool) t.join();
  if (failure) std::rethrow_exception(failure);
  if (progress) progress(n, n);
}

}  // namespace scalelens
