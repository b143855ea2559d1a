#pragma once
// Values by correlation id (the id that ties a GPU operation to its launch on the CPU). Kineto's
// ids are a process's running count, so one trace's ids lie in a narrow range (a sixth of it used
// in the shared traces): a vector over the range then serves where a hash map cost 8 % of a large
// trace's analysis (rehashing, nodes, lookups). Ids spread wider than that (a merged or hostile
// file) go to a hash map, so memory stays bounded by the ids' count either way.
#include <cstddef>
#include <cstdint>
#include <limits>
#include <optional>
#include <unordered_map>
#include <vector>

namespace scalelens::trace {

// The ids a map will hold: their range and count, gathered in a first pass.
struct IdRange {
  std::int64_t lo = std::numeric_limits<std::int64_t>::max(), hi = std::numeric_limits<std::int64_t>::min();
  std::size_t count = 0;
  void add(std::int64_t id) {
    lo = id < lo ? id : lo;
    hi = id > hi ? id : hi;
    ++count;
  }
};

template <class V>
class CorrelationMap {
 public:
  // A vector over the range where it is at most 16 slots per id (plus a fixed allowance).
  explicit CorrelationMap(const IdRange& ids) {
    if (ids.count == 0) return;
    const std::uint64_t span = static_cast<std::uint64_t>(ids.hi) - static_cast<std::uint64_t>(ids.lo);
    if (span < 16 * static_cast<std::uint64_t>(ids.count) + 65536) {
      lo_ = ids.lo;
      dense_.resize(span + 1);
    } else {
      sparse_.reserve(ids.count);
    }
  }
  // As unordered_map::emplace: an id already there keeps its first value. False then.
  bool emplace(std::int64_t id, V value) {
    if (const std::size_t at = slot(id); at < dense_.size()) {
      if (dense_[at]) return false;
      dense_[at] = value;
      return true;
    }
    return sparse_.emplace(id, value).second;
  }
  const V* find(std::int64_t id) const {
    if (const std::size_t at = slot(id); at < dense_.size()) return dense_[at] ? &*dense_[at] : nullptr;
    auto it = sparse_.find(id);
    return it == sparse_.end() ? nullptr : &it->second;
  }
  bool contains(std::int64_t id) const { return find(id) != nullptr; }

 private:
  // The id's slot in the vector; past its end when the map is sparse or the id out of its range.
  std::size_t slot(std::int64_t id) const {
    const std::uint64_t at = static_cast<std::uint64_t>(id) - static_cast<std::uint64_t>(lo_);
    return at < dense_.size() ? static_cast<std::size_t>(at) : dense_.size();
  }
  std::int64_t lo_ = 0;
  std::vector<std::optional<V>> dense_;
  std::unordered_map<std::int64_t, V> sparse_;
};

}  // namespace scalelens::trace
