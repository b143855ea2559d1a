#include "process_group.hpp"

#include <mpi.h>
#include <sched.h>

#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "common/text.hpp"

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
    // The cores of this node's processes. Launchers bind each process to its own core or socket,
    // and rank 0 goes on alone once the group is dropped (analysis, writing, gnuplot): the others'
    // cores are free then. A mask of more than CPU_SETSIZE CPUs is not read: no widening.
    cpu_set_t mine;
    CPU_ZERO(&mine);
    if (sched_getaffinity(0, sizeof mine, &mine) != 0) CPU_ZERO(&mine);
    std::vector<cpu_set_t> each(static_cast<std::size_t>(local_size_));
    MPI_Allgather(&mine, sizeof mine, MPI_BYTE, each.data(), sizeof mine, MPI_BYTE, node);
    CPU_ZERO(&node_cpus_);
    node_cpus_known_ = true;
    for (auto& s : each) {
      node_cpus_known_ = node_cpus_known_ && CPU_COUNT(&s) > 0;
      CPU_OR(&node_cpus_, &node_cpus_, &s);
    }
    MPI_Comm_free(&node);
  }
  ~MpiProcessGroup() override {
    MPI_Comm_free(&comm_);
    MPI_Finalize();
    // Rank 0 writes alone from here: it, the threads it starts and their gnuplot may use every
    // core its node's processes had, instead of sharing its one core while the others stand idle.
    if (rank_ == 0 && node_cpus_known_) sched_setaffinity(0, sizeof node_cpus_, &node_cpus_);
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

  Gathered gather(std::string_view bytes) override {
    const std::uint64_t mine = bytes.size();
    std::vector<std::uint64_t> sizes(size_);
    MPI_Allgather(&mine, 1, MPI_UINT64_T, sizes.data(), 1, MPI_UINT64_T, comm_);
    Gathered g;
    std::uint64_t total = 0;
    for (auto n : sizes) total += n;
    if (rank_ == 0) {
      g.offsets.push_back(0);
      for (auto n : sizes) g.offsets.push_back(g.offsets.back() + n);
      g.bytes = std::make_unique_for_overwrite<char[]>(total);
    }
    if (total <= max_message_) {
      // The usual case: one Gatherv straight into place.
      std::vector<int> counts(size_), displs(size_);
      for (int r = 0; r < size_; ++r) {
        counts[r] = static_cast<int>(sizes[r]);
        displs[r] = r ? displs[r - 1] + counts[r - 1] : 0;
      }
      MPI_Gatherv(bytes.data(), static_cast<int>(mine), MPI_CHAR, g.bytes.get(), counts.data(), displs.data(), MPI_CHAR, 0,
                  comm_);
      return g;
    }
    // More than one message's worth in all: each process's bytes to rank 0 in parts, in place.
    if (rank_ == 0) {
      std::copy(bytes.begin(), bytes.end(), g.bytes.get());
      for (int r = 1; r < size_; ++r)
        for (std::uint64_t at = 0; at < sizes[r]; at += max_message_)
          MPI_Recv(g.bytes.get() + g.offsets[r] + at, static_cast<int>(std::min(max_message_, sizes[r] - at)), MPI_CHAR, r, 0,
                   comm_, MPI_STATUS_IGNORE);
    } else {
      for (std::uint64_t at = 0; at < mine; at += max_message_)
        MPI_Send(bytes.data() + at, static_cast<int>(std::min(max_message_, mine - at)), MPI_CHAR, 0, 0, comm_);
    }
    return g;
  }

  [[noreturn]] void abort(const std::string& why) override {
    // `why` names files: shown as a terminal shows them safely, as every other message does.
    std::fprintf(stderr, "scalelens: process %d of %d failed: %s\n", rank_, size_, printable(why).c_str());
    std::fflush(stderr);
    MPI_Abort(comm_, 6);
    std::_Exit(6);  // MPI_Abort does not return; should it, the process still ends
  }

 private:
  // MPI counts and displacements are ints: what moves in one call stays below INT_MAX in all.
  std::uint64_t max_message_;
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0, size_ = 1, local_size_ = 1;
  cpu_set_t node_cpus_;
  bool node_cpus_known_ = false;
};

}  // namespace

std::unique_ptr<ProcessGroup> join_mpi_job(std::uint64_t max_message) {
  return std::make_unique<MpiProcessGroup>(max_message);
}

}  // namespace scalelens
