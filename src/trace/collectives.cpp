#include "trace/collectives.hpp"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include <fmt/format.h>

namespace scalelens::trace {

double bus_factor(std::string_view collective, int n) {
  std::string key;
  for (char c : collective)
    if (std::isalnum(static_cast<unsigned char>(c))) key += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
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
  // group → rank → its calls in that group, in start order
  std::map<std::string, std::map<int, std::vector<const CollectiveCall*>>> groups;
  for (auto& [rank, list] : calls_of) {
    std::stable_sort(list.begin(), list.end(), [](auto* a, auto* b) { return a->start_ns < b->start_ns; });
    for (const auto* c : list) groups[c->group][rank].push_back(c);
  }
  std::map<int, RankCommSplit> split;
  for (auto& [rank, list] : calls_of) {
    split[rank].rank = rank;
    split[rank].unmatched = list.size();
  }
  for (const auto& [group, members] : groups) {
    if (members.size() < 2) continue;  // a group this set holds one member of: nothing to compare
    std::size_t common = std::numeric_limits<std::size_t>::max();
    for (const auto& [rank, list] : members) common = std::min(common, list.size());
    const std::string where = group.empty() ? std::string("the collective kernels in start order") : "process group " + group;
    bool stopped = false;
    for (std::size_t i = 0; i < common && !stopped; ++i) {
      const CollectiveCall* ref = members.begin()->second[i];
      std::string disagreement;
      for (const auto& [rank, list] : members) {
        const auto* c = list[i];
        if (c->name != ref->name)
          disagreement = fmt::format("call #{} is {} on rank {} but {} on rank {}", i + 1, ref->name,
                                     members.begin()->first, c->name, rank);
        else if (c->bytes >= 0 && ref->bytes >= 0 && c->bytes != ref->bytes)
          disagreement = fmt::format("call #{} ({}) moves {:g} bytes on rank {} but {:g} on rank {}", i + 1, c->name, ref->bytes,
                                     members.begin()->first, c->bytes, rank);
        if (!disagreement.empty()) break;
      }
      if (!disagreement.empty()) {
        out.notes.push_back(fmt::format("{}: {}; the calls from there on are not matched", where, disagreement));
        stopped = true;
        continue;
      }
      (group.empty() ? any_order : any_group) = true;
      CollectiveInstance inst;
      inst.group = group;
      inst.name = ref->name;
      inst.index = i;
      inst.ranks = static_cast<int>(members.size());
      std::int64_t first = std::numeric_limits<std::int64_t>::max(), last = std::numeric_limits<std::int64_t>::min();
      const CollectiveCall* last_call = nullptr;
      for (const auto& [rank, list] : members) {
        const auto* c = list[i];
        inst.members.push_back(rank);
        if (c->start_ns < first) {
          first = c->start_ns;
          inst.first_rank = rank;
        }
        if (c->start_ns > last) {
          last = c->start_ns;
          inst.last_rank = rank;
          last_call = c;
        }
        if (c->bytes >= 0) inst.bytes = c->bytes;
      }
      inst.skew_us = static_cast<double>(last - first) * 1e-3;
      inst.transfer_us = static_cast<double>(last_call->dur_ns) * 1e-3;
      for (const auto& [rank, list] : members) {
        const auto* c = list[i];
        // Waiting: until the last rank arrived, at most the whole kernel (it cannot wait longer than it ran).
        const double wait_ns = std::clamp(static_cast<double>(last - c->start_ns), 0.0, static_cast<double>(c->dur_ns));
        auto& s = split[rank];
        s.wait_us += wait_ns * 1e-3;
        s.transfer_us += (static_cast<double>(c->dur_ns) - wait_ns) * 1e-3;
        for (std::size_t k = 0; k + 1 < c->exposed_ns.size(); k += 2) {
          const double b = static_cast<double>(c->exposed_ns[k]), e = static_cast<double>(c->exposed_ns[k + 1]);
          const double waiting = std::clamp(wait_ns, b, e) - b;  // the part of [b, e) before the wait ends
          s.exposed_wait_us += waiting * 1e-3;
          s.exposed_transfer_us += (e - b - waiting) * 1e-3;
        }
        ++s.matched;
        --s.unmatched;
      }
      ++split[inst.last_rank].arrived_last;
      ++split[inst.first_rank].arrived_first;
      const int n = ref->group_size > 0 ? ref->group_size : inst.ranks;
      if (inst.bytes >= 0 && inst.transfer_us > 0) {
        inst.algbw_gbps = inst.bytes / (inst.transfer_us * 1e3);  // bytes per ns = GB/s
        inst.busbw_gbps = inst.algbw_gbps * bus_factor(inst.name, n);
      }
      out.instances.push_back(std::move(inst));
    }
    if (!stopped)
      for (const auto& [rank, list] : members)
        if (list.size() > common && out.notes.size() < 20)
          out.notes.push_back(fmt::format("{}: rank {} has {} calls, {} more than the fewest of the group ({}); they are "
                                          "left unmatched",
                                          where, rank, list.size(), list.size() - common, common));
  }
  if (out.instances.empty()) return out;
  out.method = any_group && any_order ? "process group, else order" : any_group ? "process group" : "order";
  for (auto& [rank, s] : split) out.ranks.push_back(s);
  return out;
}

}  // namespace scalelens::trace
