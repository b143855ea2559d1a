#pragma once
// The one work-sharing loop of the library: items handed out one at a time from an atomic
// counter, so a large item (one big trace, one big run) never leaves the other threads waiting
// behind a fixed split.
#include <algorithm>
#include <atomic>
#include <cstddef>
#include <functional>
#include <thread>
#include <vector>

#if defined(__linux__)
#include <sched.h>
#endif

namespace scalelens {

// The cores this process may run on: its CPU affinity (what SLURM's --cpus-per-task, taskset or a
// container's cpuset allow), not every core of the machine, which hardware_concurrency counts.
inline unsigned available_cores() {
#if defined(__linux__)
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) == 0 && CPU_COUNT(&set) > 0) return static_cast<unsigned>(CPU_COUNT(&set));
#endif
  return std::max(1u, std::thread::hardware_concurrency());
}

// Threads to use when the caller says 0: every core this process may use.
inline unsigned default_threads(unsigned requested) { return requested ? requested : available_cores(); }

// Runs `work(i)` for i in [0, n) on up to `threads` threads (the caller's among them); `progress`,
// when given, is called from the caller's thread with (done, n) between items and once at the end.
// When `stop` is given and becomes true, no new item is started (those running finish).
template <class Work>
void parallel_for(std::size_t n, unsigned threads, Work&& work,
                  const std::function<void(std::size_t, std::size_t)>& progress = {}, const std::atomic<bool>* stop = nullptr) {
  std::atomic<std::size_t> next{0}, done{0};
  auto stopped = [&] { return stop && stop->load(std::memory_order_relaxed); };
  auto worker = [&] {
    for (std::size_t i; !stopped() && (i = next.fetch_add(1)) < n;) {
      work(i);
      done.fetch_add(1);
    }
  };
  std::vector<std::thread> pool;
  const unsigned extra = threads > 1 ? static_cast<unsigned>(std::min<std::size_t>(threads - 1, n)) : 0;
  for (unsigned t = 0; t < extra; ++t) pool.emplace_back(worker);
  if (progress) {
    for (std::size_t i; !stopped() && (i = next.fetch_add(1)) < n;) {
      work(i);
      progress(done.fetch_add(1) + 1, n);
    }
  } else {
    worker();
  }
  for (auto& t : pool) t.join();
  if (progress) progress(n, n);
}

}  // namespace scalelens
