#include "compare/trace_diff.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

namespace scalelens {

std::vector<std::filesystem::path> trace_files_of(const Study& study, const Summary& summary, const ConfigurationSummary& c) {
  std::set<std::string> ids;
  for (auto i : c.run_indices) ids.insert(summary.runs[i].run_id);
  std::set<std::string> files;
  for (const auto& run : study.runs) {
    if (!ids.count(run.run_id)) continue;
    for (const auto& b : run.breakdown)
      if (!b.from_mpi && !b.source.empty()) files.insert(b.source);
  }
  return {files.begin(), files.end()};
}

bool KernelDelta::changed() const {
  return added() || vanished() || std::fabs(delta_us()) > 1e-9 * std::max(std::fabs(before_us), std::fabs(after_us));
}

namespace {

// The steps a rank's kernel totals cover: every ProfilerStep of its trace (the whole trace as one
// step when it has none).
double steps_of(const trace::RankSummary& r) { return r.steps.empty() ? 1.0 : static_cast<double>(r.steps.size()); }

struct Totals {
  std::map<std::string, std::pair<double, double>> kernels;  // name → (µs, calls) summed over ranks
  std::map<std::string, bool> communication;
  std::map<std::string, std::pair<double, double>> collectives;
  double rank_steps = 0, gpu_us = 0;
};

Totals totals_of(const trace::TraceSet& set) {
  Totals t;
  for (const auto& r : set.ranks) {
    t.rank_steps += steps_of(r);
    for (const auto& k : r.kernels) {
      auto& [us, calls] = t.kernels[k.name];
      us += k.time_us;
      calls += static_cast<double>(k.count);
      t.communication[k.name] = k.cls == trace::KernelClass::communication;
      t.gpu_us += k.time_us;
    }
    for (const auto& c : r.collectives) {
      auto& [us, calls] = t.collectives[c.name];
      us += c.time_us;
      calls += static_cast<double>(c.count);
    }
  }
  return t;
}

std::vector<KernelDelta> deltas(const std::map<std::string, std::pair<double, double>>& a, double a_steps,
                                const std::map<std::string, std::pair<double, double>>& b, double b_steps,
                                const std::map<std::string, bool>& communication) {
  std::set<std::string> names;
  for (const auto& [n, v] : a) names.insert(n);
  for (const auto& [n, v] : b) names.insert(n);
  std::vector<KernelDelta> out;
  for (const auto& n : names) {
    KernelDelta d;
    d.name = n;
    if (auto it = communication.find(n); it != communication.end()) d.communication = it->second;
    if (auto it = a.find(n); it != a.end() && a_steps > 0) {
      d.before_us = it->second.first / a_steps;
      d.calls_before = it->second.second / a_steps;
    }
    if (auto it = b.find(n); it != b.end() && b_steps > 0) {
      d.after_us = it->second.first / b_steps;
      d.calls_after = it->second.second / b_steps;
    }
    out.push_back(std::move(d));
  }
  std::stable_sort(out.begin(), out.end(), [](const auto& x, const auto& y) { return std::fabs(x.delta_us()) > std::fabs(y.delta_us()); });
  return out;
}

}  // namespace

TraceDiff diff_trace_sets(const trace::TraceSet& before, const trace::TraceSet& after, std::size_t top) {
  TraceDiff diff;
  diff.ranks_before = static_cast<int>(before.ranks.size());
  diff.ranks_after = static_cast<int>(after.ranks.size());
  const Totals a = totals_of(before), b = totals_of(after);
  diff.steps_before = diff.ranks_before > 0 ? a.rank_steps / diff.ranks_before : 0;
  diff.steps_after = diff.ranks_after > 0 ? b.rank_steps / diff.ranks_after : 0;
  diff.gpu_before_us = a.rank_steps > 0 ? a.gpu_us / a.rank_steps : 0;
  diff.gpu_after_us = b.rank_steps > 0 ? b.gpu_us / b.rank_steps : 0;
  std::map<std::string, bool> communication = a.communication;
  for (const auto& [n, c] : b.communication) communication[n] = c;
  diff.kernels = deltas(a.kernels, a.rank_steps, b.kernels, b.rank_steps, communication);
  for (const auto& k : diff.kernels) {
    diff.added += k.added();
    diff.vanished += k.vanished();
    diff.unchanged += !k.changed();
  }
  // Kernels whose time did not change are counted, not listed: where fewer than `top` changed, they
  // filled the list as "+0" rows.
  std::erase_if(diff.kernels, [](const KernelDelta& k) { return !k.changed(); });
  if (diff.kernels.size() > top) diff.kernels.resize(top);
  diff.collectives = deltas(a.collectives, a.rank_steps, b.collectives, b.rank_steps, {});
  for (auto& c : diff.collectives) c.communication = true;

  // Per rank, the mean over the traces of that rank (one per run of the configuration).
  struct Sums {
    double exposed = 0, idle = 0;
    int n = 0;
  };
  std::map<int, std::pair<Sums, Sums>> sums;  // rank → (before, after)
  auto add = [](Sums& into, const trace::RankSummary& r) {
    if (r.steps_analysed <= 0) return;
    into.exposed += r.total.exposed_comm_us / r.steps_analysed;
    into.idle += r.total.idle_us / r.steps_analysed;
    ++into.n;
  };
  for (const auto& r : before.ranks) add(sums[r.rank].first, r);
  for (const auto& r : after.ranks) add(sums[r.rank].second, r);
  std::map<int, RankDelta> ranks;
  for (const auto& [rank, pair] : sums) {
    auto& d = ranks[rank];
    d.rank = rank;
    if (pair.first.n > 0) {
      d.exposed_comm_before_us = pair.first.exposed / pair.first.n;
      d.idle_before_us = pair.first.idle / pair.first.n;
    }
    if (pair.second.n > 0) {
      d.exposed_comm_after_us = pair.second.exposed / pair.second.n;
      d.idle_after_us = pair.second.idle / pair.second.n;
    }
  }
  for (auto& [rank, d] : ranks) diff.ranks.push_back(d);
  return diff;
}

}  // namespace scalelens
