#include "trace/step_alignment.hpp"

#include <algorithm>
#include <map>

#include <fmt/format.h>

namespace scalelens::trace {

StepAlignment align_steps(const std::vector<std::pair<int, const std::vector<std::int64_t>*>>& ranks) {
  std::map<int, std::set<std::int64_t>> steps_of;
  for (const auto& [rank, steps] : ranks)
    if (steps && !steps->empty()) steps_of[rank].insert(steps->begin(), steps->end());
  StepAlignment a;
  if (steps_of.empty()) return a;
  a.common = steps_of.begin()->second;
  for (const auto& entry : steps_of)  // not a structured binding: clang 14 cannot capture one
    std::erase_if(a.common, [&](std::int64_t s) { return !entry.second.count(s); });
  // The ranks by the steps they profiled, fewest ranks first (the odd ones out).
  std::map<std::set<std::int64_t>, std::vector<int>> ranks_of;
  for (const auto& [rank, steps] : steps_of) ranks_of[steps].push_back(rank);
  if (ranks_of.size() < 2) return a;
  std::vector<std::pair<const std::set<std::int64_t>*, const std::vector<int>*>> sets;
  for (const auto& [steps, who] : ranks_of) sets.emplace_back(&steps, &who);
  std::stable_sort(sets.begin(), sets.end(), [](auto& x, auto& y) { return x.second->size() < y.second->size(); });
  auto first_ten = [](const auto& values) {
    std::string s;
    std::size_t k = 0;
    for (auto v : values) {
      if (k == 10) return s + fmt::format(" and {} more", values.size() - 10);
      s += (k++ ? ", " : "") + std::to_string(v);
    }
    return s;
  };
  std::string who;
  for (std::size_t k = 0; k < sets.size() && k < 5; ++k) {
    const auto& [steps, ranks_here] = sets[k];
    who += fmt::format("{}rank{} {}: step{} {}", k ? "; " : "", ranks_here->size() == 1 ? "" : "s", first_ten(*ranks_here),
                       steps->size() == 1 ? "" : "s", first_ten(*steps));
  }
  if (sets.size() > 5) who += fmt::format("; and {} more sets of steps", sets.size() - 5);
  a.misaligned = fmt::format("the ranks profiled different steps ({}): their steps do not line up, so only the {} step{} "
                             "that every rank profiled {} compared across ranks",
                             who, a.common.size(), a.common.size() == 1 ? "" : "s", a.common.size() == 1 ? "is" : "are");
  return a;
}

}  // namespace scalelens::trace
