#include "distribute/process_group.hpp"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <mutex>
#include <numeric>
#include <queue>
#include <stdexcept>
#include <system_error>

#include <sys/stat.h>
#include <unistd.h>

#include <fmt/format.h>

#include "common/byte_codec.hpp"
#include "common/parallel.hpp"

namespace scalelens {

void ProcessGroup::abort(const std::string& why) { throw std::runtime_error(why); }

Gathered ProcessGroup::gather(std::string_view bytes) {
  Gathered g{std::make_unique_for_overwrite<char[]>(bytes.size()), {0, bytes.size()}};
  std::copy(bytes.begin(), bytes.end(), g.bytes.get());
  return g;
}

ProcessGroup& single_process() {
  static ProcessGroup one;
  return one;
}

std::vector<int> share_by_size(const std::vector<std::uintmax_t>& sizes, int processes) {
  std::vector<int> owner(sizes.size(), 0);
  if (processes <= 1) return owner;
  std::vector<std::size_t> order(sizes.size());
  std::iota(order.begin(), order.end(), std::size_t{0});
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return sizes[a] > sizes[b]; });
  // (bytes so far, rank): the least loaded, then the lowest rank, on top.
  using Load = std::pair<std::uintmax_t, int>;
  std::priority_queue<Load, std::vector<Load>, std::greater<>> least;
  for (int r = 0; r < processes; ++r) least.push({0, r});
  for (std::size_t i : order) {
    auto [bytes, rank] = least.top();
    least.pop();
    owner[i] = rank;
    // An empty file still costs an open and a look: count it as one byte.
    least.push({bytes + std::max<std::uintmax_t>(sizes[i], 1), rank});
  }
  return owner;
}

Share share_of(const ProcessGroup& group, const std::vector<std::uintmax_t>& sizes) {
  Share share{share_by_size(sizes, group.size()), {}};
  for (std::size_t i = 0; i < sizes.size(); ++i)
    if (share.owner[i] == group.rank()) share.mine.push_back(i);
  return share;
}

void run_share(ProcessGroup& group, std::size_t mine, unsigned threads, const std::function<void(std::size_t)>& run,
               const std::function<std::string(std::size_t)>& name_of_mine,
               const std::function<void(std::size_t, std::size_t)>& progress, const std::atomic<bool>* cancel) {
  std::mutex failure_mutex;
  std::optional<std::string> failure;
  std::atomic<bool> stop{false};
  if (group.size() > 1) cancel = nullptr;  // a job's processes end together or not at all
  parallel_for(mine, threads, [&](std::size_t j) {
    if (stop.load(std::memory_order_relaxed)) return;
    if (cancel && cancel->load()) {
      stop = true;
      return;
    }
    try {
      run(j);
    } catch (const std::exception& e) {
      std::lock_guard lock(failure_mutex);
      if (!failure) failure = fmt::format("{}: {}", name_of_mine(j), e.what());
      stop = true;
    } catch (...) {
      std::lock_guard lock(failure_mutex);
      if (!failure) failure = fmt::format("{}: an unknown failure", name_of_mine(j));
      stop = true;
    }
  }, progress, &stop);
  if (failure) group.abort(*failure);
}

void check_file_seen_here(const std::string& file) {
  struct stat st;
  if (::stat(file.c_str(), &st) == 0) return;
  const int error = errno;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0 || !host[0]) std::snprintf(host, sizeof host, "unknown");
  throw std::runtime_error(fmt::format("{} on host {}, though process 0 listed it: every process of the job must see the "
                                       "inputs at the same paths, on a file system the job's nodes share",
                                       std::generic_category().message(error), host));
}

GatheredItems gather_share(ProcessGroup& group, const Share& share, std::vector<std::string> encoded,
                           const std::function<std::string(std::size_t)>& name) {
  // Each process packs (item, bytes) of its share into one buffer of the exact size; rank 0 reads
  // them back in place, as views into what it gathered.
  std::size_t total = 0;
  for (const auto& e : encoded) total += 2 * sizeof(std::uint64_t) + e.size();
  std::string packed;
  packed.reserve(total);
  ByteWriter out(packed);
  for (std::size_t j = 0; j < encoded.size(); ++j) {  // rank 0 keeps its own: none
    out(static_cast<std::uint64_t>(share.mine[j]), encoded[j]);
    std::string().swap(encoded[j]);
  }
  GatheredItems all{group.gather(packed), {}};
  std::string().swap(packed);
  if (group.rank() != 0) return {};
  const std::size_t n = share.owner.size();
  all.items.resize(n);
  std::vector<bool> arrived(n, false);
  for (std::size_t r = 0; r + 1 < all.gathered.offsets.size(); ++r) {
    ByteReader in(all.gathered.of(r));
    while (in.ok() && !in.at_end()) {
      std::uint64_t item = 0;
      std::string_view bytes;
      in(item);
      in.view(bytes);
      if (!in.ok() || item >= n || share.owner[item] != static_cast<int>(r))
        group.abort(fmt::format("the results process {} sent arrived garbled", r));
      all.items[item] = bytes;
      arrived[item] = true;
    }
  }
  for (std::size_t i = 0; i < n; ++i)
    if (!arrived[i] && share.owner[i] != 0) group.abort(fmt::format("process {} sent no result for {}", share.owner[i], name(i)));
  return all;
}

}  // namespace scalelens
