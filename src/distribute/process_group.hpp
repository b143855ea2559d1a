#pragma once
// One analysis split across the processes a launcher started (`mpirun -n K scalelens trace ...`,
// `srun -n K scalelens report ...`): every process reads its share of the input files with its
// threads, and the first process (rank 0) gathers the per-file results and computes and writes
// exactly what one process would have. The library only sees this interface; mpi/process_group.cpp
// implements it on MPI, and one process alone is the default.
#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace scalelens {

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const { return 0; }
  virtual int size() const { return 1; }
  // Processes of the group on this node, to share its cores among them.
  virtual int local_size() const { return 1; }
  // Rank 0's `bytes` replace every other process's.
  virtual void broadcast(std::string& bytes) { (void)bytes; }
  // Every process's `bytes` at rank 0, in rank order; elsewhere an empty vector.
  virtual std::vector<std::string> gather(std::string bytes) { return {std::move(bytes)}; }
  // Ends every process of the job with a non-zero exit code, after saying why on standard error.
  // One process alone: throws std::runtime_error(why), as a failure did before there were groups.
  [[noreturn]] virtual void abort(const std::string& why);
};

// The group of one process (no launcher, or a binary without MPI).
ProcessGroup& single_process();

// Which process reads which item: largest first, each to the process with the least bytes so far
// (ties: the lower rank), so that one big file does not leave the others waiting. Every process
// computes the same answer from the same sizes. Returns the rank of each item.
std::vector<int> share_by_size(const std::vector<std::uintmax_t>& sizes, int processes);

// This process's items of a shared loop, and every item's process (share_by_size).
struct Share {
  std::vector<int> owner;         // per item
  std::vector<std::size_t> mine;  // this process's items, in item order
};
Share share_of(const ProcessGroup& group, const std::vector<std::uintmax_t>& sizes);

// Runs run(j) for j in [0, mine) on `threads` threads. An exception from one ends the job
// (group.abort) naming the item, once the other threads have stopped: MPI may only be called from
// the calling thread. `cancel` (one process only) leaves the items not yet started.
void run_share(ProcessGroup& group, std::size_t mine, unsigned threads, const std::function<void(std::size_t)>& run,
               const std::function<std::string(std::size_t)>& name_of_mine,
               const std::function<void(std::size_t, std::size_t)>& progress, const std::atomic<bool>* cancel);

// Every process's encoded results of its share at rank 0, one per item in item order; elsewhere
// an empty vector. A missing or garbled result ends the job.
std::vector<std::string> gather_share(ProcessGroup& group, const Share& share, std::vector<std::string> encoded,
                                      const std::function<std::string(std::size_t)>& name);

template <class T>
struct SharedWork {
  std::vector<std::uintmax_t> sizes;  // one per item, for share_by_size
  unsigned threads = 1;               // threads of this process
  std::function<T(std::size_t)> work;
  std::function<std::string(std::size_t)> name;  // the item, for a failure's message (its file)
  // Between processes only: the caller's encoding of a result, and back (nullopt: garbled).
  std::function<std::string(const T&)> encode;
  std::function<std::optional<T>(std::string_view)> decode;
  // This process's share: (done, of its items); from the calling thread.
  std::function<void(std::size_t, std::size_t)> progress;
  const std::atomic<bool>* cancel = nullptr;  // one process only
};

// `work` over this process's share of the items; every item's result at rank 0, in item order
// (nullopt for an item left by `cancel`); at every other rank, an empty vector. One process alone
// encodes nothing.
template <class T>
std::vector<std::optional<T>> shared_for(ProcessGroup& group, const SharedWork<T>& w) {
  const Share share = share_of(group, w.sizes);
  std::vector<std::optional<T>> mine(share.mine.size());
  run_share(group, share.mine.size(), w.threads, [&](std::size_t j) { mine[j] = w.work(share.mine[j]); },
            [&](std::size_t j) { return w.name(share.mine[j]); }, w.progress, w.cancel);
  if (group.size() == 1) return mine;  // one process: its share is every item
  std::vector<std::string> encoded(mine.size());
  for (std::size_t j = 0; j < mine.size(); ++j) {
    encoded[j] = w.encode(*mine[j]);
    mine[j].reset();
  }
  auto all = gather_share(group, share, std::move(encoded), w.name);
  std::vector<std::optional<T>> results(all.size());
  for (std::size_t i = 0; i < all.size(); ++i) {
    results[i] = w.decode(all[i]);
    if (!results[i]) group.abort("the result for " + w.name(i) + " arrived garbled");
    all[i] = {};
  }
  return results;
}

}  // namespace scalelens
