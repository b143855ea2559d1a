#include "trace/collectives.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <limits>
#include <map>
#include <set>
#include <tuple>

#include <fmt/format.h>

#include "common/text.hpp"

namespace scalelens::trace {

namespace {

// Clocks kept by NTP agree to well under a millisecond (DESIGN.md, "Collective wait and
// transfer"); ten times that is left to a loosely kept one before two ranks' times are refused.
constexpr std::int64_t kClockSlackNs = 10'000'000;

// Whether a rank's kernel of this collective needs data from every other member, so that it cannot
// end before each of theirs has started. Not so for send/recv (two ranks), nor for broadcast and
// reduce: a message that fits the peer's buffers leaves the root (or a ring's first rank) before a
// late receiver's kernel starts.
bool waits_for_every_member(std::string_view collective) {
  const std::string key = alnum_lower(collective);  // AllReduce, all_reduce: one key
  return key == "allreduce" || key == "allgather" || key == "reducescatter" || key == "alltoall" || key == "alltoallv" ||
         key == "allgatherv" || key == "barrier";
}

// A SendRecv kernel without the collective's args (older PyTorch): an all-to-all's part or a
// pipeline's send or receive, its peer unknown. Matched in order only as an all-to-all of the group.
// Spelled as breakdown.cpp tells a SendRecv kernel (alnum_lower), whatever the trace's spelling.
bool peerless_send_recv(const CollectiveCall& c) {
  return !c.point_to_point && c.group.empty() && alnum_lower(c.name) == "sendrecv";
}

// Calls that could not have run as the traces' times say: the first found, and how many.
struct ClockConflict {
  std::size_t calls = 0;
  std::string first;
};

// Sends and receives pair two ranks, not the group, so they are not matched into instances (the
// i-th call of every member would pair one stage's send with another's receive). Their clocks are
// still checked: the k-th send from a to b in a step is b's k-th receive from a there (NCCL keeps
// a pair's calls in order), and a receive cannot end before its send started. One that did by
// more than the slack is a clock conflict. `calls_of`: each rank's calls in start order.
void check_point_to_point(const std::map<int, std::vector<const CollectiveCall*>>& calls_of, ClockConflict& conflict,
                          std::vector<std::string>& notes) {
  std::size_t calls = 0, without_peer = 0;
  // (sender, receiver, step) → the sends, the receives
  std::map<std::tuple<int, int, std::int64_t>, std::pair<std::vector<const CollectiveCall*>, std::vector<const CollectiveCall*>>> pairs;
  for (const auto& [rank, list] : calls_of)
    for (const auto* c : list) {
      if (!c->point_to_point) continue;
      ++calls;
      if (c->peer < 0) {
        ++without_peer;
        continue;
      }
      auto& pair = pairs[c->sends ? std::tuple{rank, c->peer, c->step} : std::tuple{c->peer, rank, c->step}];
      (c->sends ? pair.first : pair.second).push_back(c);
    }
  if (calls == 0) return;
  std::size_t unpaired = 0;
  for (const auto& [key, pair] : pairs) {
    const auto& [sends, receives] = pair;
    if (sends.empty() || receives.empty()) continue;  // the peer's trace is not in the set
    if (sends.size() != receives.size()) {  // a call missing from one trace: in-order pairing would be off
      unpaired += std::max(sends.size(), receives.size());
      continue;
    }
    for (std::size_t i = 0; i < sends.size(); ++i) {
      std::int64_t end = 0;
      if (__builtin_add_overflow(receives[i]->start_ns, receives[i]->dur_ns, &end)) end = std::numeric_limits<std::int64_t>::max();
      const double apart_ns = static_cast<double>(sends[i]->start_ns) - static_cast<double>(end);
      if (apart_ns <= kClockSlackNs || conflict.calls++ > 0) continue;
      const auto& [from, to, step] = key;
      conflict.first = fmt::format(
          "rank {}'s receive from rank {} (their send/recv #{} in step {}) ended {:.3f} s before rank {} started sending it, "
          "which a receive cannot do: rank {}'s clock is that far ahead of rank {}'s",
          to, from, i + 1, step, apart_ns * 1e-9, from, from, to);
    }
  }
  std::string note = fmt::format("{} point-to-point calls (send/recv) are not matched: each pairs two ranks, not the group, so "
                                 "they have no wait/transfer split",
                                 calls);
  // A batch (batch_isend_irecv: one kernel for sends and receives to several peers) names none.
  if (without_peer == calls)
    note += "; their traces record no peer rank (Dst Rank, Src Rank: older PyTorch, or sends and receives batched into "
            "one kernel, \"coalesced\"), so the ranks' clocks could not be checked against them";
  else if (without_peer > 0)
    note += fmt::format("; {} of them record no peer rank (Dst Rank, Src Rank: older PyTorch, or batched into one kernel), "
                        "so were not checked against the clocks",
                        without_peer);
  if (unpaired > 0)
    note += fmt::format("; {} were not checked against the clocks either, as a rank sent a peer a different number of "
                        "calls than the peer received in that step (a call missing from a trace?)",
                        unpaired);
  notes.push_back(std::move(note));
}
}  // namespace

std::string send_recv_by_order_note(const CollectiveMatch& match) {
  if (match.send_recv_by_order == 0) return {};
  const bool one = match.send_recv_by_order == 1;
  return fmt::format("{} SendRecv call{} {} no peer rank (no Src Rank / Dst Rank: older PyTorch) and {} paired across the "
                     "ranks by order, as an all-to-all of the group, which their counts and times allow; were they sends "
                     "and receives between some ranks (a pipeline), their wait and transfer would be another rank's",
                     match.send_recv_by_order, one ? "" : "s", one ? "records" : "record", one ? "was" : "were");
}

double bus_factor(std::string_view collective, int n) {
  const std::string key = alnum_lower(collective);
  if (n < 1) return std::numeric_limits<double>::quiet_NaN();
  const double share = static_cast<double>(n - 1) / n;
  if (key == "allreduce") return 2 * share;
  if (key == "allgather" || key == "allgatherbase" || key == "reducescatter" || key == "reducescatterbase" ||
      key.rfind("alltoall", 0) == 0)
    return share;
  if (key == "broadcast" || key == "reduce" || key == "sendrecv" || key == "send" || key == "recv") return 1;
  return std::numeric_limits<double>::quiet_NaN();
}

std::vector<BandwidthPoint> bandwidth_by_size(const std::vector<CollectiveInstance>& instances) {
  struct Bin {
    double bytes = 0;
    std::vector<double> busbw;
  };
  std::map<std::pair<std::string, int>, Bin> bins;
  for (const auto& i : instances) {
    if (!std::isfinite(i.busbw_gbps) || !(i.bytes > 0)) continue;
    auto& b = bins[{i.name, std::ilogb(i.bytes)}];
    b.bytes += i.bytes;
    b.busbw.push_back(i.busbw_gbps);
  }
  std::vector<BandwidthPoint> out;
  for (auto& [key, b] : bins) {
    auto& v = b.busbw;
    std::sort(v.begin(), v.end());
    const std::size_t n = v.size();
    out.push_back({key.first, b.bytes / static_cast<double>(n), n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2, n});
  }
  return out;
}

CollectiveMatch match_collectives(const std::vector<RankSummary>& ranks) {
  std::vector<RankCalls> of;
  for (const auto& r : ranks) of.push_back({r.rank, r.start_ns.has_value(), &r.calls});
  return match_collectives(of);
}

CollectiveMatch match_collectives(const std::vector<RankCalls>& ranks) {
  CollectiveMatch out;
  // Each rank's calls (several traces of one rank: merged, in start order).
  std::map<int, std::vector<const CollectiveCall*>> calls_of;
  bool clocks = true;
  for (const auto& r : ranks) {
    if (!r.calls || r.calls->empty()) continue;
    clocks = clocks && r.wall_clock;
    auto& list = calls_of[r.rank];
    for (const auto& c : *r.calls) list.push_back(&c);
  }
  if (calls_of.size() < 2) return out;
  if (!clocks) {
    out.notes.push_back("the traces' clocks cannot be compared across ranks (no Unix time and no baseTimeNanoseconds), so "
                        "collectives were not matched: no wait or transfer split");
    return out;
  }
  bool any_group = false, any_order = false;
  // Ranks by their place in rank order; each group's members in rank order, each with its calls in
  // that group in start order. Arrays, not maps keyed by rank: at thousands of ranks the matching
  // walks every member of every call, and map nodes scattered in memory made it miss the caches.
  struct Member {
    std::size_t at = 0;  // the rank's place in `split`
    std::vector<const CollectiveCall*> calls;
  };
  std::vector<RankCommSplit> split;
  // By process group, then profiler step: ranks that profiled different steps made different
  // calls, so the i-th call is matched within one step number only.
  std::map<std::pair<std::string, std::int64_t>, std::vector<Member>> groups;
  for (auto& [rank, list] : calls_of) {
    std::stable_sort(list.begin(), list.end(), [](auto* a, auto* b) { return a->start_ns < b->start_ns; });
    const std::size_t at = split.size();
    split.push_back({});
    split.back().rank = rank;
    split.back().unmatched = list.size();
    std::vector<Member>* members = nullptr;  // the last call's group: calls mostly run in one group
    const CollectiveCall* previous = nullptr;
    for (const auto* c : list) {
      if (c->point_to_point) continue;  // pairs two ranks, not the group: checked apart below
      if (!previous || c->group != previous->group || c->step != previous->step) members = &groups[{c->group, c->step}];
      previous = c;
      if (members->empty() || members->back().at != at) members->push_back({at, {}});
      members->back().calls.push_back(c);
    }
  }
  // The traced members of each group, over all steps: a step that only some of them have calls in
  // (profiled by some ranks only, or cut off on the others) is not compared across ranks.
  std::map<std::string, std::set<std::size_t>> members_of;
  for (const auto& [key, members] : groups)
    for (const auto& m : members) members_of[key.first].insert(m.at);
  // A call that every member must join cannot end on one rank before another starts it: where
  // one did, by more than clocks kept by NTP disagree, the ranks' clocks are apart or the traces
  // come from different jobs (a rerun's trace beside the first run's). Then nothing is matched,
  // as no wait can be told from transfer.
  ClockConflict conflict;
  std::map<std::string, std::size_t> offset_in_group;  // where a step's calls start in the group's sequence
  std::set<std::string> stopped;  // groups whose ranks disagreed: their later steps are not matched either
  // Each group is walked member by member (each rank's calls in order, as they lie in memory)
  // rather than call by call across members, which at thousands of ranks missed the caches on
  // every member of every call. Same sums in the same order per rank, so the same figures.
  for (const auto& [key, members] : groups) {
    const std::string& group = key.first;
    const std::size_t index_from = offset_in_group[group];
    offset_in_group[group] += members.front().calls.size();
    if (stopped.count(group)) continue;
    const std::string where = group.empty() ? std::string("the collective kernels in start order") : "process group " + group;
    if (const std::size_t all = members_of[group].size(); members.size() < all) {
      if (out.notes.size() < 20) {
        std::vector<int> ranks;
        for (const auto& m : members) ranks.push_back(split[m.at].rank);
        const std::string who = list_ranks(ranks, ranks.size());
        out.notes.push_back(fmt::format("{}: only rank{} {} of its {} traced ranks {} calls in step {}; they are left unmatched",
                                        where, members.size() == 1 ? "" : "s", who, all, members.size() == 1 ? "has" : "have",
                                        key.second));
      }
      continue;
    }
    if (members.size() < 2) continue;  // a group this set holds one member of: nothing to compare
    std::size_t common = std::numeric_limits<std::size_t>::max();
    for (const auto& m : members) common = std::min(common, m.calls.size());
    const auto& ref = members.front().calls;
    const int first_member = split[members.front().at].rank;
    // A call as every member finds it: the i-th of the step on each (a count through the group's
    // earlier steps would follow the first member's, which may have made more calls there).
    const auto step = key.second;  // named: a lambda cannot capture a structured binding in C++20 (clang)
    auto call_no = [&](std::size_t i) {
      return step >= 0 ? fmt::format("step {}'s call #{}", step, i + 1) : fmt::format("call #{}", i + 1);
    };
    // The first call on which a member disagrees with the first member: the group is matched up
    // to the earliest, and that member (the first in rank order, for the earliest call) is named.
    std::size_t agreed = common;
    std::string disagreement;
    for (const auto& m : members) {
      for (std::size_t i = 0; i < agreed; ++i) {
        const auto* c = m.calls[i];
        if (c->name != ref[i]->name) {
          agreed = i;
          disagreement = fmt::format("{} is {} on rank {} but {} on rank {}", call_no(i), ref[i]->name,
                                     first_member, c->name, split[m.at].rank);
        } else if (c->bytes >= 0 && ref[i]->bytes >= 0 && c->bytes != ref[i]->bytes) {
          agreed = i;
          disagreement = fmt::format("{} ({}) moves {:g} bytes on rank {} but {:g} on rank {}", call_no(i), c->name,
                                     ref[i]->bytes, first_member, c->bytes, split[m.at].rank);
        }
      }
    }
    // Per call: the first and last start, their members, the last arrival's kernel, the size.
    std::vector<std::int64_t> first(agreed, std::numeric_limits<std::int64_t>::max()),
        last(agreed, std::numeric_limits<std::int64_t>::min()), first_end(agreed, std::numeric_limits<std::int64_t>::max());
    std::vector<std::size_t> first_at(agreed, 0), last_at(agreed, 0);
    std::vector<const CollectiveCall*> last_call(agreed, nullptr);
    std::vector<double> bytes(agreed, -1);
    for (const auto& m : members)
      for (std::size_t i = 0; i < agreed; ++i) {
        const auto* c = m.calls[i];
        if (c->start_ns < first[i]) first[i] = c->start_ns, first_at[i] = m.at;
        if (c->start_ns > last[i]) last[i] = c->start_ns, last_at[i] = m.at, last_call[i] = c;
        // Saturating: hostile times near int64's end must not wrap into an early end.
        std::int64_t end = 0;
        if (__builtin_add_overflow(c->start_ns, c->dur_ns, &end)) end = std::numeric_limits<std::int64_t>::max();
        first_end[i] = std::min(first_end[i], end);
        if (c->bytes >= 0) bytes[i] = c->bytes;
      }
    // Ranks with different numbers of calls in this step are paired in order, which a call missing
    // from one trace shifts: a call that "ended before another started it" here is that, not
    // clocks apart (those show in the steps that pair up too). The step is left unmatched.
    const bool counts_differ = std::any_of(members.begin(), members.end(), [&](const Member& m) { return m.calls.size() != common; });
    // SendRecv kernels without a peer pass for an all-to-all only where every member launched as
    // many calls and each overlaps on all of them (checked below); a pipeline's sends and receives,
    // which differ by stage, would be paired with the wrong calls.
    const bool any_peerless = std::any_of(members.begin(), members.end(), [](const Member& m) {
      return std::any_of(m.calls.begin(), m.calls.end(), [](const CollectiveCall* c) { return peerless_send_recv(*c); });
    });
    if (any_peerless && counts_differ) {
      if (out.notes.size() < 20)
        out.notes.push_back(fmt::format("{}: in step {} the ranks have different numbers of calls, among them SendRecv kernels "
                                        "that record no peer (older PyTorch): sends and receives between some ranks (a "
                                        "pipeline), not an all-to-all, which paired in order would pair the wrong calls; the "
                                        "step's calls are left unmatched",
                                        where, key.second));
      continue;
    }
    bool unpaired = false;
    for (std::size_t i = 0; i < agreed; ++i) {
      const double apart_ns = static_cast<double>(last[i]) - static_cast<double>(first_end[i]);
      const bool as_all_to_all = peerless_send_recv(*ref[i]);
      if (!(waits_for_every_member(ref[i]->name) || as_all_to_all) || apart_ns <= kClockSlackNs) continue;
      if (as_all_to_all) {  // not one all-to-all (or the clocks are apart, which the step's other calls show)
        if (!unpaired && out.notes.size() < 20)
          out.notes.push_back(fmt::format("{}: {} (SendRecv, no peer recorded) ended on one rank {:.3f} s before another "
                                          "started it, which an all-to-all cannot do: they are sends and receives between "
                                          "some ranks, whose peers the trace does not name; the step's calls are left unmatched",
                                          where, call_no(i), apart_ns * 1e-9));
        unpaired = true;
        continue;
      }
      if (counts_differ) {
        if (!unpaired && out.notes.size() < 20)
          out.notes.push_back(fmt::format("{}: in step {} the ranks have different numbers of calls, and paired in order call #{} "
                                          "({}) would end on one rank {:.3f} s before another started it (a call missing from a "
                                          "trace?); the step's calls are left unmatched",
                                          where, key.second, i + 1, ref[i]->name, apart_ns * 1e-9));
        unpaired = true;
        continue;
      }
      if (conflict.calls++ > 0) continue;
      // The rank farthest from the members' median start is the one whose clock (or job) differs.
      std::vector<std::int64_t> starts;
      for (const auto& m : members) starts.push_back(m.calls[i]->start_ns);
      const auto middle = starts.begin() + static_cast<std::ptrdiff_t>((starts.size() - 1) / 2);  // the lower one
      std::nth_element(starts.begin(), middle, starts.end());
      const double median = static_cast<double>(*middle);
      const Member* odd = &members.front();
      for (const auto& m : members)
        if (std::fabs(static_cast<double>(m.calls[i]->start_ns) - median) >
            std::fabs(static_cast<double>(odd->calls[i]->start_ns) - median))
          odd = &m;
      const double offset_s = (static_cast<double>(odd->calls[i]->start_ns) - median) * 1e-9;
      // Every rank that far off on that side: a job's late ranks, a node whose clock is apart.
      std::vector<int> off;
      for (const auto& m : members) {
        const double apart = static_cast<double>(m.calls[i]->start_ns) - median;
        if (std::fabs(apart) > kClockSlackNs && (apart >= 0) == (offset_s >= 0)) off.push_back(split[m.at].rank);
      }
      conflict.first = fmt::format(
          "{}: {} ({}) ended on one rank {:.3f} s before another started it, which a collective cannot do: {} "
          "started it {}{:.3f} s {} the median of the ranks' starts",
          where, call_no(i), ref[i]->name, apart_ns * 1e-9,
          off.size() > 1 ? "ranks " + list_ranks(off, off.size()) : fmt::format("rank {}", split[odd->at].rank),
          off.size() > 1 ? "up to " : "", std::fabs(offset_s), offset_s >= 0 ? "after" : "before");
    }
    if (unpaired) continue;
    for (const auto& m : members) {
      auto& s = split[m.at];
      for (std::size_t i = 0; i < agreed; ++i) {
        const auto* c = m.calls[i];
        // Waiting: until the last rank arrived, at most the whole kernel (it cannot wait longer than it ran).
        const double wait_ns = std::clamp(static_cast<double>(last[i] - c->start_ns), 0.0, static_cast<double>(c->dur_ns));
        s.wait_us += wait_ns * 1e-3;
        s.transfer_us += (static_cast<double>(c->dur_ns) - wait_ns) * 1e-3;
        for (std::size_t k = 0; k + 1 < c->exposed_ns.size(); k += 2) {
          const double b = static_cast<double>(c->exposed_ns[k]), e = static_cast<double>(c->exposed_ns[k + 1]);
          const double waiting = std::clamp(wait_ns, b, e) - b;  // the part of [b, e) before the wait ends
          s.exposed_wait_us += waiting * 1e-3;
          s.exposed_transfer_us += (e - b - waiting) * 1e-3;
        }
      }
      s.matched += agreed;
      s.unmatched -= agreed;
    }
    std::vector<int> member_ranks;
    member_ranks.reserve(members.size());
    for (const auto& m : members) member_ranks.push_back(split[m.at].rank);
    if (agreed > 0) (group.empty() ? any_order : any_group) = true;
    for (std::size_t i = 0; i < agreed; ++i) {
      out.send_recv_by_order += peerless_send_recv(*ref[i]);
      CollectiveInstance inst;
      inst.group = group;
      inst.name = ref[i]->name;
      inst.index = index_from + i;
      inst.ranks = static_cast<int>(members.size());
      inst.members = member_ranks;
      inst.bytes = bytes[i];
      inst.first_rank = split[first_at[i]].rank;
      inst.last_rank = split[last_at[i]].rank;
      inst.skew_us = static_cast<double>(last[i] - first[i]) * 1e-3;
      inst.transfer_us = static_cast<double>(last_call[i]->dur_ns) * 1e-3;
      ++split[last_at[i]].arrived_last;
      ++split[first_at[i]].arrived_first;
      const int n = ref[i]->group_size > 0 ? ref[i]->group_size : inst.ranks;
      if (inst.bytes >= 0 && inst.transfer_us > 0) {
        inst.algbw_gbps = inst.bytes / (inst.transfer_us * 1e3);  // bytes per ns = GB/s
        inst.busbw_gbps = inst.algbw_gbps * bus_factor(inst.name, n);
      }
      out.instances.push_back(std::move(inst));
    }
    if (!disagreement.empty()) {
      stopped.insert(group);
      out.notes.push_back(fmt::format("{}: {}; the calls from there on are not matched", where, disagreement));
      continue;
    }
    for (const auto& m : members)
      if (m.calls.size() > common && out.notes.size() < 20)
        out.notes.push_back(fmt::format("{}: rank {} has {} calls{}, {} more than the fewest of the group ({}); its last {} "
                                        "are left unmatched",
                                        where, split[m.at].rank, m.calls.size(),
                                        key.second >= 0 ? fmt::format(" in step {}", key.second) : std::string(),
                                        m.calls.size() - common, common, m.calls.size() - common));
  }
  check_point_to_point(calls_of, conflict, out.notes);
  if (conflict.calls > 0) {
    out.clock_conflict = fmt::format(
        "{}{}: the ranks' clocks disagree, or the traces are from different jobs (a rerun's trace beside the first run's); "
        "collectives are not matched, so there is no wait or transfer split",
        conflict.first, conflict.calls > 1 ? fmt::format(" ({} such calls)", conflict.calls) : std::string());
    CollectiveMatch refused;
    refused.notes.push_back(out.clock_conflict);
    // What else was found stays said (a step only some ranks have calls in, say).
    refused.notes.insert(refused.notes.end(), out.notes.begin(), out.notes.end());
    refused.clock_conflict = out.clock_conflict;
    return refused;
  }
  if (out.instances.empty()) return out;
  out.method = any_group && any_order ? "process group, else order" : any_group ? "process group" : "order";
  out.ranks = std::move(split);  // in rank order, as calls_of
  return out;
}

}  // namespace scalelens::trace
