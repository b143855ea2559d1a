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

#include "common/parallel.hpp"

namespace scalelens {

// What a gather brings to rank 0: every process's bytes, one after another, in one buffer that is
// not zeroed first (the gather writes all of it).
struct Gathered {
  std::unique_ptr<char[]> bytes;
  std::vector<std::uint64_t> offsets;  // size() + 1: process r's bytes are [offsets[r], offsets[r + 1])
  std::string_view of(std::size_t r) const { return {bytes.get() + offsets[r], offsets[r + 1] - offsets[r]}; }
};

class ProcessGroup {
 public:
  virtual ~ProcessGroup() = default;
  virtual int rank() const { return 0; }
  virtual int size() const { return 1; }
  // Processes of the group on this node, to share its cores among them.
  virtual int local_size() const { return 1; }
  // Rank 0's `bytes` replace every other process's.
  virtual void broadcast(std::string& bytes) { (void)bytes; }
  // Every process's `bytes` at rank 0; elsewhere an empty Gathered.
  virtual Gathered gather(std::string_view bytes);
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

// Every other process's encoded results of its share at rank 0, one view per item in item order
// into `gathered` (empty for rank 0's own items); elsewhere nothing. A missing or garbled result
// ends the job.
struct GatheredItems {
  Gathered gathered;
  std::vector<std::string_view> items;
};
GatheredItems gather_share(ProcessGroup& group, const Share& share, std::vector<std::string> encoded,
                           const std::function<std::string(std::size_t)>& name);

// Throws, naming this process's host, when `file` (which process 0 listed) is not there for this
// process: a folder not on a file system the job's nodes share would otherwise be read in part, and
// the figures would differ from one process's without a word.
void check_file_seen_here(const std::string& file);

template <class T>
struct SharedWork {
  std::vector<std::uintmax_t> sizes;  // one per item, for share_by_size
  unsigned threads = 1;               // threads of this process
  std::function<T(std::size_t)> work;
  std::function<std::string(std::size_t)> name;  // the item, for a failure's message (its file)
  // `name` is a file process 0 found: processes other than the first check that they see it
  // (check_file_seen_here) before working on it.
  bool names_are_files = false;
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
  auto name_of_mine = [&](std::size_t j) { return w.name(share.mine[j]); };
  if (group.size() == 1) {  // one process: its share is every item, and nothing is encoded
    std::vector<std::optional<T>> results(share.mine.size());
    run_share(group, share.mine.size(), w.threads, [&](std::size_t j) { results[j] = w.work(j); }, name_of_mine,
              w.progress, w.cancel);
    return results;
  }
  // Rank 0 keeps its own results as they are; the others encode theirs as soon as they are made,
  // on the thread that made them, so that a result's memory goes at once.
  const bool first = group.rank() == 0;
  std::vector<std::optional<T>> own(first ? share.mine.size() : 0);
  std::vector<std::string> encoded(first ? 0 : share.mine.size());
  run_share(group, share.mine.size(), w.threads, [&](std::size_t j) {
    if (first) {
      own[j] = w.work(share.mine[j]);
    } else {
      if (w.names_are_files) check_file_seen_here(w.name(share.mine[j]));
      encoded[j] = w.encode(w.work(share.mine[j]));
    }
  }, name_of_mine, w.progress, nullptr);
  auto all = gather_share(group, share, std::move(encoded), w.name);
  if (!first) return {};
  // Decoded on rank 0's threads: thousands of summaries are seconds of parsing on one.
  std::vector<std::optional<T>> results(all.items.size());
  for (std::size_t j = 0; j < share.mine.size(); ++j) results[share.mine[j]] = std::move(own[j]);
  parallel_for(all.items.size(), w.threads, [&](std::size_t i) {
    if (share.owner[i] == 0) return;
    try {
      results[i] = w.decode(all.items[i]);
    } catch (...) {  // out of memory, say: reported below as the item it happened on
    }
  });
  for (std::size_t i = 0; i < results.size(); ++i)
    if (!results[i]) group.abort("the result for " + w.name(i) + " arrived garbled or could not be decoded");
  return results;
}

}  // namespace scalelens
