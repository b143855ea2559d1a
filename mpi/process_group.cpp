#include "process_group.hpp"

#include <mpi.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>

namespace scalelens {

namespace {

class MpiProcessGroup final : public ProcessGroup {
 public:
  explicit MpiProcessGroup(std::uint64_t max_message) : max_message_(std::clamp<std::uint64_t>(max_message, 1, INT_MAX / 2)) {
    int provided = 0;
    MPI_Init_thread(nullptr, nullptr, MPI_THREAD_FUNNELED, &provided);
    MPI_Comm_dup(MPI_COMM_WORLD, &comm_);
    MPI_Comm_rank(comm_, &rank_);
    MPI_Comm_size(comm_, &size_);
    MPI_Comm node;
    MPI_Comm_split_type(comm_, MPI_COMM_TYPE_SHARED, rank_, MPI_INFO_NULL, &node);
    MPI_Comm_size(node, &local_size_);
    MPI_Comm_free(&node);
  }
  ~MpiProcessGroup() override {
    MPI_Comm_free(&comm_);
    MPI_Finalize();
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }
  int local_size() const override { return local_size_; }

  void broadcast(std::string& bytes) override {
    std::uint64_t n = bytes.size();
    MPI_Bcast(&n, 1, MPI_UINT64_T, 0, comm_);
    bytes.resize(n);
    for (std::uint64_t at = 0; at < n; at += max_message_)
      MPI_Bcast(bytes.data() + at, static_cast<int>(std::min(max_message_, n - at)), MPI_CHAR, 0, comm_);
  }

  std::vector<std::string> gather(std::string bytes) override {
    const std::uint64_t mine = bytes.size();
    std::vector<std::uint64_t> sizes(rank_ == 0 ? size_ : 0);
    MPI_Gather(&mine, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, 0, comm_);
    std::uint64_t largest = 0;
    MPI_Allreduce(&mine, &largest, 1, MPI_UINT64_T, MPI_MAX, comm_);
    std::vector<std::string> all(rank_ == 0 ? size_ : 0);
    for (int r = 0; r < static_cast<int>(all.size()); ++r) all[r].resize(sizes[r]);
    // In rounds of at most max_message_ / size bytes per process, so that rank 0's total fits an int.
    const std::uint64_t chunk = std::max<std::uint64_t>(1, max_message_ / static_cast<std::uint64_t>(size_));
    std::vector<char> round(rank_ == 0 ? std::min(largest, chunk) * size_ : 0);
    std::vector<int> counts(size_), displs(size_);
    for (std::uint64_t at = 0; at < largest; at += chunk) {
      auto part = [&](std::uint64_t total) { return static_cast<int>(at < total ? std::min(chunk, total - at) : 0); };
      int offset = 0;
      if (rank_ == 0)
        for (int r = 0; r < size_; ++r) {
          counts[r] = part(sizes[r]);
          displs[r] = offset;
          offset += counts[r];
        }
      MPI_Gatherv(bytes.data() + std::min<std::uint64_t>(at, mine), part(mine), MPI_CHAR, round.data(), counts.data(),
                  displs.data(), MPI_CHAR, 0, comm_);
      if (rank_ == 0)
        for (int r = 0; r < size_; ++r) std::copy_n(round.data() + displs[r], counts[r], all[r].data() + at);
    }
    return all;
  }

  [[noreturn]] void abort(const std::string& why) override {
    std::fprintf(stderr, "scalelens: process %d of %d failed: %s\n", rank_, size_, why.c_str());
    std::fflush(stderr);
    MPI_Abort(comm_, 5);
    std::_Exit(5);  // MPI_Abort does not return; should it, the process still ends
  }

 private:
  // MPI counts and displacements are ints: what moves in one call stays below INT_MAX in all.
  std::uint64_t max_message_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1, local_size_ = 1;
};

}  // namespace

std::unique_ptr<ProcessGroup> join_mpi_job(std::uint64_t max_message) {
  return std::make_unique<MpiProcessGroup>(max_message);
}

}  // namespace scalelens
