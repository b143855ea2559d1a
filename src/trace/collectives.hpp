#pragma once
// One collective call matched across the ranks of a job (DESIGN.md, "Collective wait and
// transfer"): how long each rank waited for the last one to arrive, and how long the data took to
// move once all had. Waiting points at imbalance (stragglers, data loading), transfer at the
// network; they call for opposite fixes.
#include <cstdint>
#include <limits>
#include <string>
#include <string_view>
#include <vector>

#include "trace/breakdown.hpp"

namespace scalelens::trace {

struct CollectiveInstance {
  std::string group;  // process group ("name [ranks]"), "" when matched by order
  std::string name;   // AllReduce ...
  std::size_t index = 0;  // its place in the group's sequence of calls
  int ranks = 0;          // ranks matched
  double bytes = -1;      // message size (nccl-tests' convention), -1 unknown
  double skew_us = 0;     // last start − first start
  double transfer_us = 0; // the last arrival's kernel time: from all present to the end
  int first_rank = 0, last_rank = 0;
  // bytes / transfer time, and that × NCCL's bus factor for the collective and rank count; NaN unknown.
  double algbw_gbps = std::numeric_limits<double>::quiet_NaN(), busbw_gbps = std::numeric_limits<double>::quiet_NaN();
  std::vector<int> members;  // the ranks matched, ascending
  // Set by classify_links (link_peaks.hpp): "intra-node", "inter-node", "" unknown; the link's peak
  // and busbw over it (NaN unknown).
  std::string scope;
  double peak_gbps = std::numeric_limits<double>::quiet_NaN(), busbw_of_peak = std::numeric_limits<double>::quiet_NaN();
};

// Bus bandwidth of the matched calls of one scope (classify_links).
struct LinkSummary {
  std::string scope;           // "intra-node", "inter-node", "unknown"
  std::size_t calls = 0;       // matched calls of that scope
  std::size_t sized = 0;       // of which with a message size (so a bandwidth)
  double median_busbw_gbps = std::numeric_limits<double>::quiet_NaN(), max_busbw_gbps = std::numeric_limits<double>::quiet_NaN();
  double peak_gbps = std::numeric_limits<double>::quiet_NaN();
  std::string peak_from;       // "NVLink 3 (A100)", "--link-gbps", "--network ndr", "" unknown
};

// Per rank, over its matched calls: wait + transfer = the calls' kernel time.
struct RankCommSplit {
  int rank = 0;
  std::size_t matched = 0, unmatched = 0;
  double wait_us = 0, transfer_us = 0;
  // The same split of the calls' exposed parts (not overlapped by computation).
  double exposed_wait_us = 0, exposed_transfer_us = 0;
  std::size_t arrived_last = 0, arrived_first = 0;
};

struct CollectiveMatch {
  // "process group" (the traces name each call's group), "order" (older traces: all collective
  // kernels of a rank in start order), "" when nothing could be matched.
  std::string method;
  std::vector<RankCommSplit> ranks;            // by rank; empty when nothing was matched
  std::vector<CollectiveInstance> instances;   // every matched call, by group then order
  std::vector<std::string> notes;              // why calls were left unmatched
  // Instances of SendRecv kernels that record no peer (older PyTorch), matched in order as an
  // all-to-all of the group: their counts and times allow it, their peers are not known (the
  // note `send-recv-by-order`, send_recv_by_order_note).
  std::size_t send_recv_by_order = 0;
  // Set when a call ended on one rank before another started it: then nothing is matched, and
  // this says which rank and by how much (a `clock-conflict` warning).
  std::string clock_conflict;
  int gpus_per_node = 0;                       // as classify_links took it; 0 unknown
  std::string gpus_per_node_from;              // "--gpus-per-node", "deviceProperties", ""
  std::vector<LinkSummary> links;              // by scope (classify_links)
};

// Matches the calls of `ranks` (one job's traces; a rank with several traces has its calls
// merged): per process group, the i-th call of each member rank is one instance, provided all
// name the same collective and (where known) the same message size; at the first disagreement
// the rest of that group is left unmatched, with a note, rather than guessed. Needs wall-clock
// starts on every rank (RankSummary::start_ns); else nothing is matched, with a note.
struct RankCalls {
  int rank = 0;
  bool wall_clock = false;  // its times are Unix times (RankSummary::start_ns known)
  const std::vector<CollectiveCall>* calls = nullptr;
};
CollectiveMatch match_collectives(const std::vector<RankCalls>& ranks);
CollectiveMatch match_collectives(const std::vector<RankSummary>& ranks);

// What the note `send-recv-by-order` says of a match with send_recv_by_order > 0; "" when none.
std::string send_recv_by_order_note(const CollectiveMatch& match);

// The matched calls with a bus bandwidth, by collective and power-of-two message-size bin: mean
// size, median bus bandwidth, calls; by collective, then size.
std::vector<BandwidthPoint> bandwidth_by_size(const std::vector<CollectiveInstance>& instances);

// NCCL's bus-bandwidth factor (nccl-tests PERFORMANCE.md) for n ranks: all-reduce 2(n−1)/n,
// all-gather, reduce-scatter and all-to-all (n−1)/n, broadcast, reduce and send/recv 1; NaN for
// a collective it does not know.
double bus_factor(std::string_view collective, int n);

}  // namespace scalelens::trace
